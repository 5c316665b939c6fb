/* Escaping of hostile text for terminals and logs, CSV and JSON: one writer per output kind. */
#include <stdlib.h>
#include <string.h>

#include "common/textsafe.h"

int cprof_utf8_seq(const unsigned char *s)
{
	unsigned cp;
	int n, i;

	if (s[0] < 0x80)
		return 1;
	if ((s[0] & 0xe0) == 0xc0)
		n = 2, cp = s[0] & 0x1f;
	else if ((s[0] & 0xf0) == 0xe0)
		n = 3, cp = s[0] & 0x0f;
	else if ((s[0] & 0xf8) == 0xf0)
		n = 4, cp = s[0] & 0x07;
	else
		return 0;
	/* a NUL ends the continuation bytes too: never read past the string */
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if ((n == 2 && cp < 0x80) || (n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

/* The escape for the character at s (its length in *len), or NULL when it is safe as it is; a backslash too when
 * bs (report text), not in a log line (cprof_log_safe) */
static const char *text_escape(const unsigned char *s, int *len, char tmp[8], int bs)
{
	static const char hex[] = "0123456789abcdef";
	int n = cprof_utf8_seq(s);

	*len = n ? n : 1;
	/* the escape character itself is escaped: a name holding the four characters \x1b reads apart from one
	 * holding an ESC (until 2026-12-06 both printed as \x1b) */
	if (bs && n == 1 && *s == '\\')
		return "\\\\";
	if (n == 1 && *s >= 0x20 && *s != 0x7f)
		return NULL;
	if (n == 2 && s[0] == 0xc2 && s[1] < 0xa0) {
		/* U+0080..U+009F: C1 controls (CSI, OSC) that some terminals obey */
		memcpy(tmp, "\\u00", 4);
		tmp[4] = hex[s[1] >> 4];
		tmp[5] = hex[s[1] & 15];
		tmp[6] = '\0';
		return tmp;
	}
	/* bidirectional overrides and isolates (U+202A..U+202E, U+2066..U+2069), the marks U+200E, U+200F and
	 * U+061C, and the line and paragraph separators U+2028, U+2029: they reorder or break what follows
	 * them on screen ("Trojan Source") */
	if ((n == 3 && s[0] == 0xe2 &&
	     ((s[1] == 0x80 && (s[2] == 0x8e || s[2] == 0x8f || (s[2] >= 0xa8 && s[2] <= 0xae))) ||
	      (s[1] == 0x81 && s[2] >= 0xa6 && s[2] <= 0xa9))) ||
	    (n == 2 && s[0] == 0xd8 && s[1] == 0x9c)) {
		unsigned cp = n == 2 ? 0x61c : 0x2000u | (s[1] & 0x3fu) << 6 | (s[2] & 0x3fu);

		memcpy(tmp, "\\u", 2);
		tmp[2] = hex[cp >> 12 & 15];
		tmp[3] = hex[cp >> 8 & 15];
		tmp[4] = hex[cp >> 4 & 15];
		tmp[5] = hex[cp & 15];
		tmp[6] = '\0';
		return tmp;
	}
	if (n > 1)
		return NULL;
	if (*s == '\n')
		return "\\n";
	if (*s == '\r')
		return "\\r";
	if (*s == '\t')
		return "\\t";
	tmp[0] = '\\';
	tmp[1] = 'x';
	tmp[2] = hex[*s >> 4];
	tmp[3] = hex[*s & 15];
	tmp[4] = '\0';
	return tmp;
}

static char *safe_into(char *out, size_t size, const char *s, int bs)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");
	size_t o = 0;
	char tmp[8];

	if (size == 0)
		return out;
	while (*p) {
		int len;
		const char *esc = text_escape(p, &len, tmp, bs);
		size_t add = esc ? strlen(esc) : (size_t)len;

		if (o + add >= size)
			break;
		memcpy(out + o, esc ? esc : (const char *)p, add);
		o += add;
		p += len;
	}
	out[o] = '\0';
	return out;
}

char *cprof_text_safe(char *out, size_t size, const char *s)
{
	return safe_into(out, size, s, 1);
}

size_t cprof_text_unit(const char *s, size_t *cols)
{
	char tmp[8];
	int len;
	const char *esc = text_escape((const unsigned char *)s, &len, tmp, 1);

	*cols = esc ? strlen(esc) : 1;
	return (size_t)len;
}

size_t cprof_text_cols(const char *s)
{
	size_t n = 0, w;

	while (*s) {
		s += cprof_text_unit(s, &w);
		n += w;
	}
	return n;
}

char *cprof_log_safe(char *out, size_t size, const char *s)
{
	return safe_into(out, size, s, 0);
}

static const char *tx(const char *s, int bs)
{
	static char bufs[8][4096];
	static unsigned next;

	return safe_into(bufs[next++ % 8], sizeof(bufs[0]), s, bs);
}

const char *cprof_tx(const char *s)
{
	return tx(s, 1);
}

const char *cprof_tx_quoted(const char *s)
{
	return tx(s, 0);
}

void cprof_text_fput(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");
	char tmp[8];

	while (*p) {
		int len;
		const char *esc = text_escape(p, &len, tmp, 1);

		if (esc)
			fputs(esc, f);
		else
			fwrite(p, 1, len, f);
		p += len;
	}
}

char *cprof_path_component(char *s)
{
	char *p;

	for (p = s; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
		      *p == '_' || *p == '-' || (*p == '.' && p != s)))
			*p = '_';
	if (p == s) {
		s[0] = '_';
		s[1] = '\0';
	}
	return s;
}

void cprof_csv_fput(FILE *f, const char *s)
{
	char *safe;
	size_t size;
	int formula;

	if (s == NULL)
		s = "";
	/* escaped as text whether it goes to a terminal or a file: a file is read by a pager, cat or a
	 * spreadsheet next, and a CSV reader wants valid UTF-8 (\xNN is at most 4 bytes a byte) */
	size = 4 * strlen(s) + 1;
	safe = malloc(size);
	if (safe == NULL)
		return;
	s = cprof_text_safe(safe, size, s);
	formula = s[0] != '\0' && strchr("=+-@", s[0]) != NULL;
	if (!formula && strpbrk(s, ",\"") == NULL) {
		fputs(s, f);
		goto out;
	}
	fputc('"', f);
	if (formula)
		fputc('\'', f);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', f);
		fputc(*s, f);
	}
	fputc('"', f);
out:
	free(safe);
}

void cprof_json_fput(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");

	/* unlocked: a trace writes millions of strings, from one thread */
	fputc_unlocked('"', f);
	while (*p) {
		int n = cprof_utf8_seq(p);

		if (n == 0) {
			fwrite_unlocked("\\ufffd", 1, 6, f);
			p++;
			continue;
		}
		if (*p == '"' || *p == '\\') {
			fputc_unlocked('\\', f);
			fputc_unlocked(*p, f);
		} else if (*p == '\n') {
			fwrite_unlocked("\\n", 1, 2, f);
		} else if (*p == '\t') {
			fwrite_unlocked("\\t", 1, 2, f);
		} else if (*p < 0x20 || *p == 0x7f) {
			fprintf(f, "\\u%04x", *p);
		} else {
			fwrite_unlocked(p, 1, (size_t)n, f);
		}
		p += n;
	}
	fputc_unlocked('"', f);
}

/* Quoting arguments as a POSIX shell reads them back (common/shquote.h). */
#include <stdlib.h>
#include <string.h>

#include "common/shquote.h"
#include "common/textsafe.h"

/* Whether the UTF-8 sequence (or lone byte) of len bytes at s is one the terminal-text rule (cprof_log_safe:
 * controls, bytes that are not UTF-8, C1 controls, bidirectional overrides) would escape: one rule, not two. */
static int hostile_seq(const char *s, int len)
{
	char seq[8], safe[16];

	memcpy(seq, s, len);
	seq[len] = '\0';
	return cprof_utf8_seq((const unsigned char *)seq) != len ||
	       strcmp(cprof_log_safe(safe, sizeof(safe), seq), seq) != 0;
}

/* The length of the UTF-8 sequence at a[i], 1 for a lone byte; nothing at or past a[l] is read (the last argument
 * of a HELLO may lack its NUL) */
static int seq_len(const char *a, size_t i, size_t l)
{
	char tmp[5] = { 0 };
	int len;

	memcpy(tmp, a + i, l - i < 4 ? l - i : 4);
	len = cprof_utf8_seq((const unsigned char *)tmp);
	return len == 0 ? 1 : len;
}

/* n bytes at *o of out, or only counted when out is NULL */
static void put(char *out, size_t *o, const char *s, size_t n)
{
	if (out)
		memcpy(out + *o, s, n);
	*o += n;
}

size_t cprof_sh_quote(const char *a, size_t max, char *out)
{
	size_t l = strnlen(a, max), i, o = 0;
	int bare = l > 0, dollar = 0, len;

	for (i = 0; i < l; i += len) {
		len = seq_len(a, i, l);
		if (hostile_seq(a + i, len))
			dollar = 1;
		if (len > 1 || !(((a[i] | 0x20) >= 'a' && (a[i] | 0x20) <= 'z') || (a[i] >= '0' && a[i] <= '9') ||
				 strchr("_@%+=:,./-", a[i])))
			bare = 0;
	}
	if (bare) {
		if (out)
			memcpy(out, a, l);
		return l;
	}
	if (dollar)
		put(out, &o, "$", 1);
	put(out, &o, "'", 1);
	for (i = 0; i < l; i += len) {
		static const char hex[] = "0123456789abcdef";
		char c = a[i];

		len = seq_len(a, i, l);
		if (!dollar && c == '\'') {
			put(out, &o, "'\\''", 4);
		} else if (dollar && (c == '\'' || c == '\\')) {
			put(out, &o, c == '\'' ? "\\'" : "\\\\", 2);
		} else if (dollar && (c == '\n' || c == '\t' || c == '\r')) {
			put(out, &o, c == '\n' ? "\\n" : c == '\t' ? "\\t" : "\\r", 2);
		} else if (dollar && hostile_seq(a + i, len)) {
			for (int k = 0; k < len; k++) {
				char esc[4] = { '\\', 'x', hex[(unsigned char)a[i + k] >> 4], hex[a[i + k] & 15] };

				put(out, &o, esc, 4);
			}
		} else {
			put(out, &o, a + i, len);
		}
	}
	put(out, &o, "'", 1);
	return o;
}

char *cprof_sh_join(const char *args, size_t len)
{
	size_t i, n = 0, need = 1;
	char *s;

	for (i = 0; i < len; i += strnlen(args + i, len - i) + 1)
		need += cprof_sh_quote(args + i, len - i, NULL) + 1;
	s = malloc(need);
	if (s == NULL)
		return NULL;
	for (i = 0; i < len; i += strnlen(args + i, len - i) + 1) {
		if (n > 0)
			s[n++] = ' ';
		n += cprof_sh_quote(args + i, len - i, s + n);
	}
	s[n] = '\0';
	return s;
}

/* Escaping hostile text (kernel names, paths) for XML (JUnit) and Markdown (job summaries, PR comments). */
#include <string.h>

#include "common/textsafe.h"
#include "report/render/check.h"

void cprof_xml_fput(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");

	while (*p) {
		int len = cprof_utf8_seq(p);

		if (len == 0 || (*p < 0x20 && *p != '\t' && *p != '\n') || *p == 0x7f) {
			/* XML 1.0 cannot hold C0 controls even as references; bytes that are not UTF-8 cannot be text */
			fprintf(f, "\\x%02X", *p++);
			continue;
		}
		if (len == 2 && p[0] == 0xc2 && p[1] < 0xa0) {
			fprintf(f, "\\u%04X", p[1]); /* C1 controls: allowed by XML, but a terminal obeys them */
			p += 2;
			continue;
		}
		switch (*p) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		case '\'': fputs("&apos;", f); break;
		case '\n': fputs("&#10;", f); break; /* kept in an attribute value too */
		case '\t': fputs("&#9;", f); break;
		default: fwrite(p, 1, (size_t)len, f); break;
		}
		p += len;
	}
}

void cprof_md_fput(FILE *f, const char *s)
{
	const char *t = cprof_tx(s ? s : ""); /* controls and bad bytes first, as on a terminal */

	for (; *t; t++) {
		switch (*t) {
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '&': fputs("&amp;", f); break;
		default:
			/* what would start emphasis, code, a link or a new cell; CommonMark lets any punctuation be escaped */
			if (strchr("\\`*_[]|~", *t))
				fputc('\\', f);
			fputc(*t, f);
		}
	}
}

void cprof_md_code_fput(FILE *f, const char *s)
{
	const char *t = cprof_tx(s ? s : ""), *p;
	size_t run = 0, longest = 0, len = strlen(t), i;
	int pad;

	/* inside a code span nothing is an escape or an entity: the text as it is (controls escaped as on a terminal),
	 * fenced by one backtick more than its longest run of them, a space inside where it starts or ends with one */
	for (p = t; *p; p++) {
		run = *p == '`' ? run + 1 : 0;
		if (run > longest)
			longest = run;
	}
	pad = len > 0 && (t[0] == '`' || t[len - 1] == '`' || (t[0] == ' ' && t[len - 1] == ' '));
	for (i = 0; i <= longest; i++)
		fputc('`', f);
	if (pad)
		fputc(' ', f);
	fputs(t, f);
	if (pad)
		fputc(' ', f);
	for (i = 0; i <= longest; i++)
		fputc('`', f);
}

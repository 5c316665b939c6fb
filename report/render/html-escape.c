/* Escaping for cprof html: text for elements and attributes, JavaScript string literals safe inside <script>. */
#include <stdio.h>

#include "report/cprof.h"
#include "report/render/html.h"

void html_text(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");
	int n;

	while (*p) {
		switch (*p) {
		case '&':
			fputs("&amp;", f);
			break;
		case '<':
			fputs("&lt;", f);
			break;
		case '>':
			fputs("&gt;", f);
			break;
		case '"':
			fputs("&quot;", f);
			break;
		case '\'':
			fputs("&#39;", f);
			break;
		default:
			if (*p < 0x20 && *p != '\n' && *p != '\t') {
				fputc(' ', f);
			} else if ((n = cprof_utf8_len(p)) > 0) {
				fwrite(p, 1, (size_t)n, f);
				p += n;
				continue;
			} else {
				fputs("\xef\xbf\xbd", f); /* argv and kernel names can hold any byte */
			}
		}
		p++;
	}
}

void html_js_str(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");
	int n;

	fputc('"', f);
	while (*p) {
		if (*p == '"' || *p == '\\') {
			fputc('\\', f);
			fputc(*p++, f);
		} else if (*p < 0x20 || *p == '<' || *p == '>' || *p == '&') {
			/* "<" escaped: no name can close the <script> it sits in */
			fprintf(f, "\\u%04x", *p++);
		} else if ((n = cprof_utf8_len(p)) > 0) {
			fwrite(p, 1, (size_t)n, f);
			p += n;
		} else {
			fputs("\\ufffd", f);
			p++;
		}
	}
	fputc('"', f);
}

/* Writing text a profiled program controls (kernel names, NVTX text, argv, paths) safely into each kind of output. */
#ifndef CPROF_COMMON_TEXTSAFE_H
#define CPROF_COMMON_TEXTSAFE_H

#include <stddef.h>
#include <stdio.h>

/* Length of the valid UTF-8 sequence at s (1 for ASCII), 0 when the bytes there are not one. */
int cprof_utf8_seq(const unsigned char *s);

/* Terminal and log text: C0 controls, DEL, C1 controls (U+0080..U+009F) and bytes that are not UTF-8
 * become visible escapes (\n, \r, \t, \xNN), so a name can neither move the cursor, set the terminal's
 * title nor start a new line; a backslash becomes \\, so an escape never reads like text that spells it; other
 * valid UTF-8 text passes unchanged. Writes at most size bytes (NUL
 * included, never a partial escape) into out and returns out. */
char *cprof_text_safe(char *out, size_t size, const char *s);
/* The bytes of the unit of text at s (a character, a UTF-8 sequence, or one byte that is not one) and, in *cols, the
 * columns cprof_text_safe shows it in (its escape's length, else 1): a cut between units never splits an escape. */
size_t cprof_text_unit(const char *s, size_t *cols);
/* The columns cprof_text_safe shows s in. */
size_t cprof_text_cols(const char *s);
/* The same for a log line, but a backslash is left as it is: a line whose names the caller escaped already (with
 * cprof_tx, or quoted for a shell with $'\xNN') reads as they were, not with their backslashes doubled. One line,
 * no control character; not unambiguous (report text is). */
char *cprof_log_safe(char *out, size_t size, const char *s);
/* The same as cprof_text_safe, written to f without a length limit. */
void cprof_text_fput(FILE *f, const char *s);
/* The same into one of 8 rotating static buffers of 4 KiB, for a printf argument: cprof_tx(name). Not
 * thread-safe; for the command-line tools, not the preload. */
const char *cprof_tx(const char *s);
/* The same with cprof_log_safe's rule, for text that is quoted already (a command line cprof-run stored, its
 * hostile bytes written as $'\xNN'): its backslashes are its quoting, not doubled. */
const char *cprof_tx_quoted(const char *s);

/* Makes s usable as one file name component in place: bytes other than A-Z a-z 0-9 . _ - become _, and
 * so does a leading dot (no "..", no hidden file); an empty s becomes "_". Returns s. */
char *cprof_path_component(char *s);

/* One CSV field (RFC 4180), written to a terminal or a file alike: first escaped as terminal text
 * (cprof_text_safe: no control byte, CR, LF or tab, valid UTF-8), then quoted when it holds , or "; a
 * field that starts with = + - @ gets a leading ' so that a spreadsheet reads text, not a formula
 * (OWASP's advice). */
void cprof_csv_fput(FILE *f, const char *s);

/* One JSON string, quotes included: escapes what JSON requires, and an escaped U+FFFD for each byte that is not
 * part of valid UTF-8, so the output is valid JSON whatever the input. NULL writes "". */
void cprof_json_fput(FILE *f, const char *s);

#endif

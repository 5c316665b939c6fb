/* Terminal-aware text: the width names may take, colour for verdicts and severities, progress on stderr. */
#ifndef CPROF_REPORT_TERM_H
#define CPROF_REPORT_TERM_H

#include <stddef.h>

enum cprof_color_when { CPROF_COLOR_AUTO, CPROF_COLOR_ALWAYS, CPROF_COLOR_NEVER };

/* Takes --wide and --color[=WHEN] out of argv (they are accepted by every command, anywhere), then decides,
 * for standard output: a terminal's width (COLUMNS, else TIOCGWINSZ) unless --wide; colour on a terminal
 * unless NO_COLOR (non-empty), TERM=dumb or --color=never. Returns argc, or -1 on a bad --color. */
int cprof_term_setup(int argc, char **argv);

/* buf (size bytes) cut in its middle to what takes avail columns once escaped (cprof_text_cols), "..." where it was
 * cut, between units of its text (no escape or UTF-8 sequence split): its head says what it is, its tail which one;
 * as it is when it fits or avail < 8. Until 2026-12-06 it counted raw bytes, so a name with control bytes or
 * backslashes overran its column once escaped. */
void cprof_fit(char *buf, size_t size, size_t avail);
/* A table's name column starting at column col: the name as it fits. Not on a terminal: as cprof_shorten
 * always made it (outputs that scripts compare stay as they were); --wide: whole; on a terminal: shortened,
 * then cut in the middle ("head...tail") to what is left of the width. The result is in buf or is full. */
const char *cprof_term_name(const char *full, size_t col, char *buf, size_t size);
/* One table cell of cols columns (the Self CPU/CUDA table's names): text escaped first (cprof_text_safe), then cut in
 * its middle with "..." to leave room for tag, never inside an escape or a UTF-8 sequence, then tag, then spaces to
 * cols columns (a UTF-8 sequence is one column). Escaping after a cut at 60 bytes made printf's %-60.60s cut the
 * escapes again, silently, with the tail and the tag; and padded by bytes. */
void cprof_cell(char *out, size_t size, const char *text, const char *tag, size_t cols);
/* The same at a level of cprof_shown_levels: 0 as cprof_term_name; 1 with the template arguments (whole
 * when they do not fit in buf), 2 whole; never cut in the middle (the cut could hide what tells it apart). */
const char *cprof_term_name_at(const char *full, int level, size_t col, char *buf, size_t size);

/* SGR sequences for stdout, "" when colour is off. */
enum cprof_hue { CPROF_HUE_RESET, CPROF_HUE_BAD, CPROF_HUE_GOOD, CPROF_HUE_WARN, CPROF_HUE_INFO, CPROF_HUE_BOLD };
const char *cprof_hue(enum cprof_hue h);
/* the colour of a verdict word (overhead-bound, compute-bound, mixed...) */
const char *cprof_hue_verdict(const char *verdict);

/* Progress on stderr for work that takes more than 2 s, only when stderr is a terminal and not quiet: the
 * stage and the time so far, redrawn on one line and erased by cprof_progress_end. CPROF_PROGRESS_DELAY_MS
 * changes the 2 s (0: at once; for tests). */
void cprof_progress_begin(const char *what);
void cprof_progress_end(void);
/* no progress (--quiet, machine-readable output on a terminal) */
void cprof_progress_off(void);

#endif

/* Shared by the cprof report commands: exit codes, the command table, profile access, output helpers. */
#ifndef CPROF_REPORT_CPROF_H
#define CPROF_REPORT_CPROF_H

#include <stdint.h>
#include <stdio.h>

#include <sqlite3.h>

#include "common/textsafe.h"

/* Exit codes of cprof (a contract, see DESIGN.md). */
enum cprof_exit {
	CPROF_EXIT_OK = 0,
	CPROF_EXIT_GATE_FAILED = 1,
	CPROF_EXIT_USAGE = 2,
	CPROF_EXIT_INCOMPLETE = 3,
	CPROF_EXIT_DENIED = 4,  /* cprof capture: the run is another user's (or its directory is not private) */
	CPROF_EXIT_NO_RUN = 5,  /* cprof capture: no run with recording windows there (ended, or not --on-demand) */
	CPROF_EXIT_BUSY = 6,    /* cprof capture: a capture is open already */
	CPROF_EXIT_SAME_RUN = 7, /* cprof merge: two parts hold the same run (its counts would be doubled) */
};

struct cprof_cmd {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
};

int cmd_report(int argc, char **argv);
int cmd_capture(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_merge(int argc, char **argv);
int cmd_trace(int argc, char **argv);
int cmd_html(int argc, char **argv);
int cmd_stacks(int argc, char **argv);

/* The longest absolute path of a database SQLite's unix VFS opens (MAX_PATHNAME 512 less "-journal"). */
#define CPROF_SQLITE_PATH_MAX 504
/* Opens a file to read without blocking, only if it is a regular file: the fd, or -errno and why. */
int cprof_open_regular(const char *path, char *why, size_t size);
/* Opens a profile read-only and checks it is one; on failure prints one line and returns NULL. */
sqlite3 *cprof_profile_open(const char *path);
/* The read-only file: URI the readers open path with (immutable when the profile is finished: reading it
 * leaves no -wal/-shm beside it and works in a read-only directory). 0 or -ENAMETOOLONG. */
int cprof_profile_uri(const char *path, char *uri, size_t size);
/* META value as text (static buffer per call site is the caller's: copies into buf), or def. */
const char *cprof_meta(sqlite3 *db, const char *key, char *buf, size_t size, const char *def);
int64_t cprof_meta_int(sqlite3 *db, const char *key, int64_t def);
/* The first column of the first row of sql; def when there is none, it is NULL, or the query fails. */
int64_t cprof_query_int(sqlite3 *db, const char *sql, int64_t def);
/* Processes killed from outside or with no goodbye: what they had not sent is lost uncounted (lost events are then a
 * lower bound). */
int64_t cprof_killed_processes(sqlite3 *db);
/* 1 when the profile has this table (an older profile lacks the newer ones). */
int cprof_has_table(sqlite3 *db, const char *name);
int cprof_has_column(sqlite3 *db, const char *table, const char *column);
/* CUPTI shared with the program's own profiler (cupti-shared statuses): each process's last counts, summed;
 * processes = how many processes shared (0: none did). 0, or -EIO when the table cannot be read. */
struct cprof_cupti_shared {
	int64_t processes, handed, kernels, missed, pending;
};
int cprof_cupti_shared(sqlite3 *db, struct cprof_cupti_shared *s);

/* Formatting. */
enum cprof_unit { CPROF_NS = 0, CPROF_US, CPROF_MS, CPROF_S };
enum cprof_unit cprof_unit_for(double max_ns);
const char *cprof_unit_name(enum cprof_unit u);
/* "12.34 ms" in a fixed unit */
void cprof_fmt_in(char *buf, size_t size, double ns, enum cprof_unit u);
/* "12.3 ms" in the unit that suits the value */
void cprof_fmt_dur(char *buf, size_t size, double ns);
void cprof_json_str(FILE *f, const char *s);
void cprof_csv_str(FILE *f, const char *s);

/* Makes room for one more element in a growing array (*arr, n used, *cap allocated): 0 or -ENOMEM. */
int cprof_grow(void *arr, size_t *cap, size_t n, size_t elem);

/* Output files written to a temporary name next to the target and moved in place only when complete
 * (an interrupted or failed export leaves nothing); never over an existing file unless force. Target "-"
 * is standard output. */
int cprof_out_open(const char *target, FILE **f);
int cprof_out_finish(FILE *f, const char *target, int force);
void cprof_out_abort(FILE *f);
/* Before an export: refuses, with one line, an output that is one of the inputs (a link to it too), a
 * directory, an existing file without force, and (regular_only) a device or pipe; who prefixes the line.
 * 0 or -errno. */
int cprof_out_check(const char *who, const char *target, char *const *inputs, int n, int force, int regular_only);
/* One line on stderr saying what a command wrote: "cprof trace: wrote t.json (1234 events, 2 MB)"; nothing for "-". */
void cprof_out_said(const char *cmd, const char *target, const char *what);
/* Copies the file at path to an open stream (merge -o -): 0 or -errno. */
int cprof_out_copy(const char *path, FILE *to);

/* nsys's names for CUPTI copy kinds, and the length of the valid UTF-8 sequence at s (0 when it is not one). */
const char *cprof_copy_kind_name(int k);
int cprof_utf8_len(const unsigned char *s);

/* Kernel names: demangled (caller frees), and shortened for a table column. */
char *cprof_demangle(const char *name);
/* demangle.c: <...> and (...) folded, as cprof_shorten, without its cut at 70 bytes; returns the length */
size_t cprof_fold(const char *full, char *out, size_t size);
void cprof_shorten(const char *full, char *out, size_t size);
/* The template arguments kept, only parameter lists folded: "k<float, 128>(...)"; -ENOSPC past size. */
int cprof_shorten_targs(const char *full, char *out, size_t size);
/* How each of the n names one table shows is written so that two different names never look alike (s21
 * review: k<float>(...) and k<double>(...) were both "k<...>(...)"): levels[i] is 0 (cprof_shorten) unless
 * that text is another name's too, then 1 (cprof_shorten_targs), or 2 (whole) when that still is. 0 or
 * -ENOMEM (levels all 0). */
int cprof_shown_levels(const char *const *names, size_t n, unsigned char *levels);
/* Each name above level 0 of cprof_shown_levels gets its place (1, 2, ...), in the order given, among those of its
 * cprof_fold text, where a column's cut could hide what tells them apart; 0 the others. 0, or -ENOMEM (all 0). */
int cprof_twin_numbers(const char *const *names, size_t n, unsigned *num);

/* Duration statistics of one group. */
struct cprof_stats {
	uint64_t n;
	double total, min, max, avg, med, std;
};
/* The statistics of n durations sorted ascending (n > 0). */
void cprof_stats_finish(const double *d, uint64_t n, struct cprof_stats *st);
/* Runs sql (columns: group key INTEGER, label TEXT, duration INTEGER, rows ordered by key then duration)
 * and calls fn once per group. */
int cprof_group_stats(sqlite3 *db, const char *sql, int64_t bind1,
		      int (*fn)(void *ctx, int64_t key, const char *label, const struct cprof_stats *st), void *ctx);

#endif

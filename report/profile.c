/* Opening a profile for reading and the helpers every report command shares. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PR_FMT "cprof"
#include "common/log.h"
#include "common/version.h"
#include "report/cprof.h"

/* CPROF_SQL_TRACE=1: every statement and its time on stderr, to find what makes a report slow */
static int trace_cb(unsigned type, void *ctx, void *p, void *x)
{
	(void)ctx;
	if (type == SQLITE_TRACE_PROFILE) {
		char *sql = sqlite3_expanded_sql(p);

		fprintf(stderr, "sql %.3f ms: %.200s\n", *(sqlite3_int64 *)x / 1e6, sql ? sql : "?");
		sqlite3_free(sql);
	}
	return 0;
}

sqlite3 *cprof_profile_open(const char *path)
{
	sqlite3 *db = NULL;
	sqlite3_stmt *st = NULL;
	const unsigned char *schema = NULL;
	char uri[4200];

	if (access(path, R_OK) != 0) {
		pr_err("%s: cannot read it", path);
		return NULL;
	}
	snprintf(uri, sizeof(uri), "%s", path);
	if (sqlite3_open_v2(uri, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK)
		goto bad;
	if (sqlite3_prepare_v2(db, "SELECT value FROM META WHERE key='schema'", -1, &st, NULL) != SQLITE_OK)
		goto bad;
	if (sqlite3_step(st) == SQLITE_ROW)
		schema = sqlite3_column_text(st, 0);
	if (schema == NULL || strcmp((const char *)schema, CPROF_PROFILE_SCHEMA) != 0)
		goto bad;
	sqlite3_finalize(st);
	if (getenv("CPROF_SQL_TRACE"))
		sqlite3_trace_v2(db, SQLITE_TRACE_PROFILE, trace_cb, NULL);
	return db;
bad:
	pr_err("%s: not a cprof profile (or an unreadable one)", path);
	sqlite3_finalize(st);
	sqlite3_close(db);
	return NULL;
}

const char *cprof_meta(sqlite3 *db, const char *key, char *buf, size_t size, const char *def)
{
	sqlite3_stmt *st;
	const char *ret = def;

	/* the caller may read buf rather than the return value: it holds the default too */
	if (def)
		snprintf(buf, size, "%s", def);
	if (sqlite3_prepare_v2(db, "SELECT value FROM META WHERE key=?", -1, &st, NULL) != SQLITE_OK)
		return def;
	sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
	if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0)) {
		snprintf(buf, size, "%s", (const char *)sqlite3_column_text(st, 0));
		ret = buf;
	}
	sqlite3_finalize(st);
	return ret;
}

int64_t cprof_meta_int(sqlite3 *db, const char *key, int64_t def)
{
	char buf[64];
	const char *v = cprof_meta(db, key, buf, sizeof(buf), NULL);

	return v ? strtoll(v, NULL, 10) : def;
}

enum cprof_unit cprof_unit_for(double ns)
{
	if (ns >= 10e9)
		return CPROF_S;
	if (ns >= 10e6)
		return CPROF_MS;
	if (ns >= 10e3)
		return CPROF_US;
	return CPROF_NS;
}

const char *cprof_unit_name(enum cprof_unit u)
{
	static const char *const names[] = { "ns", "us", "ms", "s" };

	return names[u];
}

void cprof_fmt_in(char *buf, size_t size, double ns, enum cprof_unit u)
{
	static const double div[] = { 1, 1e3, 1e6, 1e9 };

	if (u == CPROF_NS)
		snprintf(buf, size, "%.0f", ns);
	else
		snprintf(buf, size, "%.3f", ns / div[u]);
}

void cprof_fmt_dur(char *buf, size_t size, double ns)
{
	enum cprof_unit u = cprof_unit_for(ns);
	char num[48];

	cprof_fmt_in(num, sizeof(num), ns, u);
	snprintf(buf, size, "%s %s", num, cprof_unit_name(u));
}

void cprof_json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c == '\n')
			fputs("\\n", f);
		else if (c == '\t')
			fputs("\\t", f);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

void cprof_csv_str(FILE *f, const char *s)
{
	if (s && strpbrk(s, ",\"\n") == NULL) {
		fputs(s, f);
		return;
	}
	fputc('"', f);
	for (; s && *s; s++) {
		if (*s == '"')
			fputc('"', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

int cprof_grow(void *arr, size_t *cap, size_t n, size_t elem)
{
	void **p = arr, *np;
	size_t c;

	if (n < *cap)
		return 0;
	c = *cap ? *cap * 2 : 64;
	np = realloc(*p, c * elem);
	if (np == NULL)
		return -ENOMEM;
	*p = np;
	*cap = c;
	return 0;
}

static void finish_group(double *d, uint64_t n, struct cprof_stats *st)
{
	double sum = 0, sq = 0;
	uint64_t i;

	st->n = n;
	for (i = 0; i < n; i++)
		sum += d[i];
	st->total = sum;
	st->avg = sum / n;
	for (i = 0; i < n; i++)
		sq += (d[i] - st->avg) * (d[i] - st->avg);
	/* sample standard deviation, as nsys stats prints it */
	st->std = n > 1 ? sqrt(sq / (n - 1)) : 0;
	st->min = d[0];
	st->max = d[n - 1];
	st->med = n % 2 ? d[n / 2] : (d[n / 2 - 1] + d[n / 2]) / 2;
}

int cprof_group_stats(sqlite3 *db, const char *sql, int64_t bind1,
		      int (*fn)(void *ctx, int64_t key, const char *label, const struct cprof_stats *st), void *ctx)
{
	sqlite3_stmt *st;
	double *d = NULL;
	uint64_t n = 0, cap = 0;
	int64_t key = 0;
	char *label = NULL;
	int rc, ret = 0;
	struct cprof_stats s;

	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
		pr_err("query failed: %s", sqlite3_errmsg(db));
		return -1;
	}
	if (sqlite3_bind_parameter_count(st) > 0)
		sqlite3_bind_int64(st, 1, bind1);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t k = sqlite3_column_int64(st, 0);

		if (n > 0 && k != key) {
			finish_group(d, n, &s);
			if ((ret = fn(ctx, key, label, &s)) < 0)
				goto out;
			n = 0;
		}
		if (n == 0) {
			const unsigned char *l = sqlite3_column_text(st, 1);

			free(label);
			label = strdup(l ? (const char *)l : "?");
			key = k;
		}
		if (cprof_grow(&d, &cap, n, sizeof(*d)) < 0) {
			ret = -1;
			goto out;
		}
		d[n++] = (double)sqlite3_column_int64(st, 2);
	}
	if (rc != SQLITE_DONE) {
		pr_err("query failed: %s", sqlite3_errmsg(db));
		ret = -1;
		goto out;
	}
	if (n > 0) {
		finish_group(d, n, &s);
		ret = fn(ctx, key, label, &s);
	}
out:
	sqlite3_finalize(st);
	free(d);
	free(label);
	return ret;
}

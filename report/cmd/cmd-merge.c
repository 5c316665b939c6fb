/* cprof merge: profiles of several nodes (or runs) into one, processes kept apart, names unified. */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define PR_FMT "cprof merge"
#include "common/log.h"
#include "common/version.h"
#include "report/cprof.h"

/* Every table with rows that belong to a process. Columns named processId get the process offset,
 * nameId / kernelNameId go through the string map, an INTEGER PRIMARY KEY id is renumbered. */
static const char *const tables[] = {
	"THREADS", "CPROF_API", "DIAGNOSTICS", "CPROF_STATUS", "CUPTI_ACTIVITY_KIND_KERNEL",
	"CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET", "CUPTI_ACTIVITY_KIND_RUNTIME",
	"CUPTI_ACTIVITY_KIND_DRIVER", "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION", "CUPTI_ACTIVITY_KIND_OVERHEAD",
	"CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION", "CPROF_CRASH", "CPROF_CRASH_CALLS", "CPROF_WINDOWS", "CPROF_API_COUNTS",
	"CPROF_COST", NULL,
};

/* columns holding CLOCK_REALTIME instants, shifted by --clock-offset */
static int is_time(const char *c)
{
	return !strcmp(c, "start") || !strcmp(c, "end") || !strcmp(c, "startNs") || !strcmp(c, "endNs") ||
	       !strcmp(c, "firstNs") || !strcmp(c, "lastNs") || !strcmp(c, "timeNs");
}

static int exec(sqlite3 *db, const char *sql)
{
	char *msg = NULL;

	if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK) {
		pr_err("%s", msg ? msg : sqlite3_errmsg(db));
		sqlite3_free(msg);
		return -EIO;
	}
	return 0;
}

struct sb {
	char *s;
	size_t n, cap;
};

static int sb_add(struct sb *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int sb_add(struct sb *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	for (;;) {
		va_start(ap, fmt);
		n = vsnprintf(b->s ? b->s + b->n : NULL, b->s ? b->cap - b->n : 0, fmt, ap);
		va_end(ap);
		if (n < 0)
			return -EINVAL;
		if (b->s && b->n + n < b->cap) {
			b->n += n;
			return 0;
		}
		b->cap = (b->cap + n + 1) * 2;
		b->s = realloc(b->s, b->cap);
		if (b->s == NULL)
			return -ENOMEM;
	}
}

/* INSERT INTO main.T (cols) SELECT mapped cols FROM src.T, built from the source's own columns so
 * that older profiles merge into newer ones */
static int copy_table(sqlite3 *db, const char *table, int64_t off)
{
	struct sb cols = { 0 }, vals = { 0 }, sql = { 0 };
	sqlite3_stmt *st;
	char q[256];
	int ret = 0, n = 0;

	snprintf(q, sizeof(q), "SELECT name, pk FROM pragma_table_info('%s', 'src')", table);
	if (sqlite3_prepare_v2(db, q, -1, &st, NULL) != SQLITE_OK)
		return -EIO;
	while (sqlite3_step(st) == SQLITE_ROW) {
		const char *c = (const char *)sqlite3_column_text(st, 0);
		int pk = sqlite3_column_int(st, 1);

		if (pk && !strcmp(c, "id"))
			continue; /* renumbered by the target */
		sb_add(&cols, "%s\"%s\"", n ? "," : "", c);
		if (!strcmp(c, "processId"))
			sb_add(&vals, "%st.\"processId\" + %lld", n ? "," : "", (long long)off);
		else if (!strcmp(c, "nameId") || !strcmp(c, "kernelNameId"))
			sb_add(&vals, "%s(SELECT m.new FROM temp.smap m WHERE m.old = t.\"%s\")", n ? "," : "", c);
		else
			sb_add(&vals, "%st.\"%s\"", n ? "," : "", c);
		n++;
	}
	sqlite3_finalize(st);
	if (n == 0)
		goto out; /* the source lacks this table: nothing to copy */
	if (!cols.s || !vals.s || sb_add(&sql, "INSERT INTO main.\"%s\"(%s) SELECT %s FROM src.\"%s\" t", table, cols.s,
					 vals.s, table) < 0) {
		ret = -ENOMEM;
		goto out;
	}
	ret = exec(db, sql.s);
out:
	free(cols.s);
	free(vals.s);
	free(sql.s);
	return ret;
}

/* One process in two parts (the same host, pid and start to the nanosecond) is one run given twice: the
 * same file, a copy, or a merged profile and one of its parts; merged, every count of it would double.
 * parts[k] are the inputs merged so far, their process ids above offs[k]. -EEXIST, said in one line. */
static int same_run(sqlite3 *db, const char *path, char *const *parts, const int64_t *offs, int nparts)
{
	sqlite3_stmt *st;
	int ret = 0, k;

	if (sqlite3_prepare_v2(db, "SELECT m.id, s.pid, s.host FROM src.PROCESSES s JOIN main.PROCESSES m ON m.pid = s.pid"
			       " AND m.startNs = s.startNs AND m.host IS s.host LIMIT 1", -1, &st, NULL) != SQLITE_OK) {
		pr_err("%s: %s", cprof_tx(path), sqlite3_errmsg(db));
		return -EIO;
	}
	if (sqlite3_step(st) == SQLITE_ROW) {
		int64_t id = sqlite3_column_int64(st, 0);

		for (k = nparts - 1; k > 0 && id <= offs[k]; k--)
			;
		pr_err("%s holds the same run as %s (pid %lld on %s, started at the same nanosecond): merging would count"
		       " it twice; nothing written", cprof_tx(path), cprof_tx(parts[k]), (long long)sqlite3_column_int64(st, 1),
		       cprof_tx((const char *)sqlite3_column_text(st, 2)));
		ret = -EEXIST;
	}
	sqlite3_finalize(st);
	return ret;
}

static int merge_one(sqlite3 *db, const char *path, char *const *parts, int64_t *offs, int nparts)
{
	char sql[4200];
	sqlite3_stmt *st;
	int64_t off = 0;
	int i, ret, ending = 0;

	/* a profile we can open is a cprof profile; then attach it for the copy */
	{
		sqlite3 *check = cprof_profile_open(path);

		if (check == NULL)
			return -EINVAL;
		sqlite3_close(check);
	}
	/* attached as the readers open it: immutable when finished, so no -wal/-shm is left beside it and a
	 * read-only directory works */
	{
		char uri[3 * 4096 + 64];
		char *q = cprof_profile_uri(path, uri, sizeof(uri)) == 0 ? sqlite3_mprintf("ATTACH DATABASE %Q AS src", uri) : NULL;

		if (q == NULL) {
			pr_err("%s: path too long", path);
			return -EINVAL;
		}
		ret = exec(db, q);
		sqlite3_free(q);
	}
	if (ret < 0)
		return ret;
	if ((ret = same_run(db, path, parts, offs, nparts)) < 0)
		goto out;
	if (sqlite3_prepare_v2(db, "SELECT coalesce(max(id), 0) FROM main.PROCESSES", -1, &st, NULL) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW)
		off = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	offs[nparts] = off;
	ret = exec(db, "BEGIN;"
		       "INSERT OR IGNORE INTO main.StringIds(value) SELECT value FROM src.StringIds;"
		       "DROP TABLE IF EXISTS temp.smap;"
		       "CREATE TEMP TABLE smap(old INTEGER PRIMARY KEY, new INTEGER);"
		       "INSERT INTO temp.smap SELECT s.id, m.id FROM src.StringIds s JOIN main.StringIds m ON m.value = s.value;");
	if (ret < 0)
		goto out;
	/* named columns: PROCESSES.ending is newer than some parts (merged without it) */
	if (sqlite3_prepare_v2(db, "SELECT count(*) FROM pragma_table_info('PROCESSES', 'src') WHERE name = 'ending'", -1,
			       &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
		ending = sqlite3_column_int(st, 0) > 0;
	sqlite3_finalize(st);
	snprintf(sql, sizeof(sql),
		 "INSERT INTO main.PROCESSES(id, pid, ppid, host, exe, argv, rank, localRank, worldSize, startNs, endNs,"
		 " clock, wireVersion, forked, simulatedGpu, byeReason, eventsEmitted, eventsRecorded, lostEvents, frames,"
		 " seqGaps%s) SELECT id + %lld, pid, ppid, host, exe, argv, rank, localRank, worldSize,"
		 " startNs, endNs, clock, wireVersion, forked, simulatedGpu, byeReason, eventsEmitted, eventsRecorded,"
		 " lostEvents, frames, seqGaps%s FROM src.PROCESSES",
		 ending ? ", ending" : "", (long long)off, ending ? ", ending" : "");
	if ((ret = exec(db, sql)) < 0)
		goto out;
	for (i = 0; tables[i]; i++)
		if ((ret = copy_table(db, tables[i], off)) < 0)
			goto out;
	/* totals add up; the merged profile is complete only if every part was */
	ret = exec(db,
		   "UPDATE main.META SET value = CAST(value AS INTEGER) + coalesce((SELECT CAST(s.value AS INTEGER)"
		   " FROM src.META s WHERE s.key = main.META.key), 0) WHERE key IN ('lost_events', 'bad_frames',"
		   " 'dropped_frames', 'frames', 'events', 'gpu_records', 'processes', 'processes_without_bye',"
		   " 'calls_by_program', 'calls_inside_libraries', 'calls_seen_only_by_cupti', 'gpu_records_dropped_at_edges',"
		   " 'api_records_dropped_at_edges');"
		   /* cprofd's call totals (issue 32) add up only when every part has them; else cprof info counts rows */
		   "DELETE FROM main.META WHERE key IN ('calls_by_program', 'calls_inside_libraries', 'calls_seen_only_by_cupti')"
		   " AND key NOT IN (SELECT key FROM src.META);"
		   /* a part whose collector wrote no loss count (it did not finish) leaves the sum unknown: a lower bound */
		   "DELETE FROM main.META WHERE key = 'lost_events' AND key NOT IN (SELECT key FROM src.META);"
		   "UPDATE main.META SET value = '0' WHERE key = 'complete' AND (SELECT value FROM src.META WHERE key ="
		   " 'complete') IS NOT '1';"
		   "UPDATE main.META SET value = (SELECT value FROM src.META WHERE key = 'incomplete_reason')"
		   " WHERE key = 'incomplete_reason' AND value = '' AND (SELECT value FROM src.META WHERE key = 'complete')"
		   " IS NOT '1';"
		   "INSERT OR REPLACE INTO main.META SELECT 'simulated_gpu', '1' FROM src.META WHERE key = 'simulated_gpu'"
		   " AND value = '1';"
		   /* the option that was to open the windows: kept only when every part had the same */
		   "DELETE FROM main.META WHERE key = 'recording' AND value IS NOT (SELECT value FROM src.META WHERE key ="
		   " 'recording');"
		   "COMMIT;");
out:
	if (ret < 0 && !sqlite3_get_autocommit(db))
		exec(db, "ROLLBACK");
	exec(db, "DETACH DATABASE src");
	return ret;
}

/* --clock-offset HOST=NS: that host's clock was NS behind (positive) or ahead (negative) */
static int shift_host(sqlite3 *db, const char *spec)
{
	const char *eq = strrchr(spec, '=');
	char host[256], *end, sql[512];
	long long ns;
	int i, ret = 0;

	if (eq == NULL || eq == spec || (size_t)(eq - spec) >= sizeof(host)) {
		pr_err("--clock-offset wants HOST=NANOSECONDS, got '%s'", spec);
		return -EINVAL;
	}
	ns = strtoll(eq + 1, &end, 10);
	if (*end != '\0' || eq[1] == '\0') {
		pr_err("--clock-offset wants HOST=NANOSECONDS, got '%s'", spec);
		return -EINVAL;
	}
	memcpy(host, spec, eq - spec);
	host[eq - spec] = '\0';
	if (strchr(host, '\'')) {
		pr_err("--clock-offset: quotes are not allowed in host names");
		return -EINVAL;
	}
	for (i = -1; tables[i < 0 ? 0 : i] && ret == 0; i++) {
		const char *t = i < 0 ? "PROCESSES" : tables[i];
		sqlite3_stmt *st;
		char q[512];

		/* only tables whose rows name their process can be shifted per host */
		snprintf(q, sizeof(q), "SELECT name, (SELECT count(*) FROM pragma_table_info('%s', 'main') WHERE"
			 " name IN ('processId', 'id')) FROM pragma_table_info('%s', 'main')", t, t);
		if (sqlite3_prepare_v2(db, q, -1, &st, NULL) != SQLITE_OK) {
			pr_err("--clock-offset: %s", sqlite3_errmsg(db));
			return -EIO;
		}
		while (ret == 0 && sqlite3_step(st) == SQLITE_ROW) {
			const char *c = (const char *)sqlite3_column_text(st, 0);

			if (!is_time(c) || sqlite3_column_int(st, 1) == 0)
				continue;
			snprintf(sql, sizeof(sql), "UPDATE main.\"%s\" SET \"%s\" = \"%s\" + %lld WHERE %s IN"
				 " (SELECT id FROM main.PROCESSES WHERE host = '%s')", t, c, c, ns,
				 i < 0 ? "id" : "processId", host);
			ret = exec(db, sql);
		}
		sqlite3_finalize(st);
	}
	return ret;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: cprof merge A.db B.db ... -o JOB.db|- [-f] [--clock-offset HOST=NS ...]\n"
		   "  one profile from several (one per node): processes and hosts kept apart, names unified,\n"
		   "  totals added up. Timestamps are each host's CLOCK_REALTIME (NTP keeps hosts within about a\n"
		   "  millisecond).\n"
		   "  -o, --output JOB.db      the merged profile (never overwritten unless -f); - writes the SQLite\n"
		   "                           file to standard output once it is complete\n"
		   "  -f, --force              overwrite JOB.db\n"
		   "  --clock-offset HOST=NS   add NS (may be negative) to every timestamp of HOST's processes\n"
		   "exit status: 0 merged, 2 usage or unreadable input, 7 two parts hold the same run (the same file, a\n"
		   "  copy, or a merged profile and one of its parts: a process of the same host, pid and start); nothing\n"
		   "  is written then\n");
}

int cmd_merge(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' }, { "force", no_argument, NULL, 'f' },
		{ "clock-offset", required_argument, NULL, 'c' }, { "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *out = NULL, *offsets[64];
	char tmp[4200], cmd[4200] = "merge of";
	int opt, force = 0, noff = 0, i, err, to_stdout, ret = CPROF_EXIT_USAGE;
	sqlite3 *db = NULL, *first = NULL;
	int64_t *offs = NULL;

	while ((opt = getopt_long(argc, argv, "o:fh", opts, NULL)) != -1) {
		switch (opt) {
		case 'o': out = optarg; break;
		case 'f': force = 1; break;
		case 'c':
			if (noff == 64) {
				pr_err("at most 64 --clock-offset");
				return CPROF_EXIT_USAGE;
			}
			offsets[noff++] = optarg;
			break;
		case 'h': usage(stdout); return CPROF_EXIT_OK;
		default: usage(stderr); return CPROF_EXIT_USAGE;
		}
	}
	if (out == NULL || optind >= argc) {
		pr_err("%s (cprof merge --help)", out ? "no profile to merge" : "no output given: -o JOB.db");
		return CPROF_EXIT_USAGE;
	}
	to_stdout = !strcmp(out, "-");
	if (!to_stdout && cprof_out_check(PR_FMT, out, argv + optind, argc - optind, force, 1) < 0)
		return CPROF_EXIT_USAGE;
	/* the first profile, copied whole, is the base; a temporary name until everything is in */
	first = cprof_profile_open(argv[optind]);
	if (first == NULL)
		return CPROF_EXIT_USAGE;
	/* -o -: SQLite needs a file to build in; the bytes go to standard output once it is complete */
	if (to_stdout)
		snprintf(tmp, sizeof(tmp), "%s/cprof-merge-%d.db", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp",
			 (int)getpid());
	else
		snprintf(tmp, sizeof(tmp), "%s.tmp-%d", out, (int)getpid());
	unlink(tmp);
	{
		char *q = sqlite3_mprintf("VACUUM INTO %Q", tmp);
		int rc = q ? sqlite3_exec(first, q, NULL, NULL, NULL) : SQLITE_NOMEM;

		sqlite3_free(q);
		if (rc != SQLITE_OK) {
			pr_err("%s: cannot write: %s", tmp, sqlite3_errmsg(first));
			goto out;
		}
	}
	chmod(tmp, 0600);
	if (sqlite3_open_v2(tmp, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_URI, NULL) != SQLITE_OK) {
		pr_err("%s: cannot open: %s", tmp, db ? sqlite3_errmsg(db) : "out of memory");
		goto out;
	}
	/* where each part's process ids start: the first part's are its own */
	if ((offs = calloc(argc - optind, sizeof(*offs))) == NULL) {
		pr_err("out of memory");
		goto out;
	}
	for (i = optind + 1; i < argc; i++)
		if ((err = merge_one(db, argv[i], argv + optind, offs, i - optind)) < 0) {
			/* -EINVAL, -EEXIST: merge_one said why, in its one line */
			if (err == -EEXIST)
				ret = CPROF_EXIT_SAME_RUN;
			else if (err != -EINVAL)
				pr_err("%s: cannot merge it", cprof_tx(argv[i]));
			goto out;
		}
	for (i = 0; i < noff; i++)
		if (shift_host(db, offsets[i]) < 0)
			goto out;
	for (i = optind; i < argc && strlen(cmd) + strlen(argv[i]) + 2 < sizeof(cmd); i++) {
		strcat(cmd, " ");
		strcat(cmd, argv[i]);
	}
	{
		char *q = sqlite3_mprintf("INSERT OR REPLACE INTO META VALUES('command', %Q);"
					  "INSERT OR REPLACE INTO META VALUES('merged_from', %d);",
					  cmd, argc - optind);

		if (q == NULL || exec(db, q) < 0) {
			sqlite3_free(q);
			goto out;
		}
		sqlite3_free(q);
	}
	if (sqlite3_close(db) != SQLITE_OK) {
		db = NULL;
		goto out;
	}
	db = NULL;
	if (to_stdout) {
		if ((err = cprof_out_copy(tmp, stdout)) < 0) {
			pr_err("standard output: %s", strerror(-err));
			goto out;
		}
		unlink(tmp);
	} else if (rename(tmp, out) < 0) {
		pr_err("%s: %s", out, strerror(errno));
		goto out;
	}
	ret = CPROF_EXIT_OK;
out:
	if (db)
		sqlite3_close(db);
	if (first)
		sqlite3_close(first);
	if (ret != CPROF_EXIT_OK)
		unlink(tmp);
	free(offs);
	return ret;
}

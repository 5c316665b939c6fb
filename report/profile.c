/* Opening a profile for reading and the helpers every report command shares. */
#include <errno.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define PR_FMT "cprof"
#include "common/log.h"
#include "common/schema.h"
#include "common/textsafe.h"
#include "common/version.h"
#include "common/wire.h"
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

/* A view is trusted only when it is, byte for byte, one of the statements cprofd creates. */
static int view_is_ours(const char *sql)
{
	size_t n = strlen(sql);
	const char *p;

	for (p = cprof_schema_sql; (p = strstr(p, sql)) != NULL; p++)
		if ((p == cprof_schema_sql || p[-1] == ';') && p[n] == ';')
			return 1;
	return 0;
}

/* Whether cprofd's schema creates name as a table (kind "TABLE") or a view ("VIEW"). */
static int ours_as(const char *name, const char *kind)
{
	char pat[256];
	const char *p;

	snprintf(pat, sizeof(pat), strcmp(kind, "VIEW") == 0 ? "CREATE VIEW %s AS " : "CREATE TABLE %s(", name);
	for (p = cprof_schema_sql; (p = strstr(p, pat)) != NULL; p++)
		if (p == cprof_schema_sql || p[-1] == ';')
			return 1;
	return 0;
}

/* Each check returns 0, or -EINVAL with why filled in (one line for the user). */

/* What the file's schema may hold: no triggers; cprofd's tables as tables, its views as written; the
 * tables every command reads present. Anything else under one of our names is hostile or corrupt. */
static int check_schema(sqlite3 *db, char *why, size_t size)
{
	static const char *const required[] = { "META", "StringIds", "PROCESSES", "CPROF_API" };
	sqlite3_stmt *st = NULL;
	unsigned found = 0;
	int rc, ret = -EINVAL;

	if (sqlite3_prepare_v2(db, "SELECT type, name, sql FROM main.sqlite_schema", -1, &st, NULL) != SQLITE_OK) {
		snprintf(why, size, "%s", sqlite3_errmsg(db));
		goto out;
	}
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *type = (const char *)sqlite3_column_text(st, 0);
		const char *name = (const char *)sqlite3_column_text(st, 1);
		const char *sql = (const char *)sqlite3_column_text(st, 2);

		if (type == NULL || name == NULL)
			continue;
		if (strcmp(type, "trigger") == 0) {
			snprintf(why, size, "it contains a trigger (%.64s), which cprof never writes", name);
			goto out;
		}
		for (size_t i = 0; i < sizeof(required) / sizeof(required[0]); i++)
			if (strcmp(type, "table") == 0 && strcmp(name, required[i]) == 0)
				found |= 1u << i;
		/* names that are not ours are never read, whatever they are */
		if (ours_as(name, "TABLE") && strcmp(type, "table") != 0) {
			snprintf(why, size, "%.64s is a %s, not a table", name, type);
			goto out;
		}
		if (ours_as(name, "VIEW") && (strcmp(type, "view") != 0 || sql == NULL || !view_is_ours(sql))) {
			snprintf(why, size, "view %.64s is not the one cprof writes", name);
			goto out;
		}
	}
	if (rc != SQLITE_DONE) {
		snprintf(why, size, "%s", sqlite3_errmsg(db));
		goto out;
	}
	for (size_t i = 0; i < sizeof(required) / sizeof(required[0]); i++)
		if (!(found & (1u << i))) {
			snprintf(why, size, "no %s table", required[i]);
			goto out;
		}
	ret = 0;
out:
	sqlite3_finalize(st);
	return ret;
}

/* Every command's way to open a file it reads: without blocking (open(2) of a FIFO waits for a writer
 * forever) and only if it is a regular file, through a symlink or not. The descriptor, or -errno with
 * why filled in. */
int cprof_open_regular(const char *path, char *why, size_t size)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC), err;

	if (fd < 0) {
		err = errno;
		snprintf(why, size, "cannot read it: %s", strerror(err));
		return -err;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		snprintf(why, size, "not a regular file");
		close(fd);
		return -EINVAL;
	}
	return fd;
}

/* A file shorter than the page count in its header lost its end (a WAL may legitimately hold the rest). */
static int check_truncated(int fd, const char *path, char *why, size_t size)
{
	unsigned char h[100];
	char wal[4200];
	struct stat st, wst;
	uint64_t page, pages;
	ssize_t n;

	n = fstat(fd, &st) == 0 ? pread(fd, h, sizeof(h), 0) : -1;
	if (n != (ssize_t)sizeof(h) || memcmp(h, "SQLite format 3", 16) != 0)
		return 0;
	snprintf(wal, sizeof(wal), "%s-wal", path);
	if (stat(wal, &wst) == 0 && wst.st_size > 0)
		return 0;
	page = (uint64_t)h[16] << 8 | h[17];
	if (page == 1)
		page = 65536;
	pages = (uint64_t)h[28] << 24 | (uint64_t)h[29] << 16 | (uint64_t)h[30] << 8 | h[31];
	/* the header's count is valid only when its change counter matches the version-valid-for field */
	if (memcmp(h + 24, h + 92, 4) != 0 || pages == 0 || page < 512)
		return 0;
	if ((uint64_t)st.st_size < pages * page) {
		snprintf(why, size, "truncated: %lld bytes of %llu", (long long)st.st_size,
			 (unsigned long long)(pages * page));
		return -EINVAL;
	}
	return 0;
}

/* Times and byte counts are what the commands add up and subtract: in a file cprofd wrote, times are
 * integers in [0, 2^62) with end >= start and a copy moves less than 2^50 bytes; anything else would
 * make that arithmetic overflow (in C, or in SQLite's sum()). */
#define TS_MAX "4611686018427387903"
#define TIMES(s, e) "typeof(" s ") = 'integer' AND typeof(" e ") = 'integer' AND " s " BETWEEN 0 AND " TS_MAX \
	" AND " e " BETWEEN " s " AND " TS_MAX
#define BYTES "typeof(bytes) = 'integer' AND bytes BETWEEN 0 AND 1125899906842623"

/* all: every table (profiles up to 16 MiB); else only the small ones read by SQL arithmetic whatever the
 * size (processes, threads, NVTX annotations): the event tables of a big profile are checked row by row as
 * the model loads them (cprof_row_times_ok), which costs nothing more than reading them */
static int check_ranges(sqlite3 *db, char *why, size_t size, int all)
{
	static const char *const rules[][2] = {
		{ "CPROF_API", TIMES("start", "end") },
		{ "CUPTI_ACTIVITY_KIND_KERNEL", TIMES("start", "end") },
		{ "CUPTI_ACTIVITY_KIND_MEMCPY", TIMES("start", "end") " AND " BYTES },
		{ "CUPTI_ACTIVITY_KIND_MEMSET", TIMES("start", "end") " AND " BYTES },
		{ "CUPTI_ACTIVITY_KIND_RUNTIME", TIMES("start", "end") },
		{ "CUPTI_ACTIVITY_KIND_DRIVER", TIMES("start", "end") },
		{ "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION", TIMES("start", "end") },
		{ "CUPTI_ACTIVITY_KIND_OVERHEAD", TIMES("start", "end") },
#define FIRST_ALWAYS 8 /* the rules from here on apply whatever the profile's size */
		{ "THREADS", TIMES("firstNs", "lastNs") },
		/* endNs = 0: cprofd before issue 21 ended a process replaced by a second HELLO from its pid
		 * (an exec the hooks did not see, pid reuse) there; read as "end unknown" */
		{ "PROCESSES", TIMES("startNs", "coalesce(nullif(endNs, 0), startNs)") },
		/* markers and ranges still open have no end */
		{ "NVTX_EVENTS", TIMES("start", "coalesce(end, start)") },
	};
	char sql[1024];

	_Static_assert(sizeof(rules) / sizeof(rules[0]) > FIRST_ALWAYS, "rules");
	for (size_t i = all ? 0 : FIRST_ALWAYS; i < sizeof(rules) / sizeof(rules[0]); i++) {
		sqlite3_stmt *st;
		int rc, bad;

		snprintf(sql, sizeof(sql), "SELECT EXISTS(SELECT 1 FROM main.%s WHERE NOT (%s))", rules[i][0], rules[i][1]);
		if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
			/* an optional table that is not there (an older or hand-made profile) holds nothing wrong */
			if (strstr(sqlite3_errmsg(db), "no such table"))
				continue;
			snprintf(why, size, "%s", sqlite3_errmsg(db));
			return -EINVAL;
		}
		rc = sqlite3_step(st);
		bad = rc == SQLITE_ROW && sqlite3_column_int(st, 0) != 0;
		if (bad)
			snprintf(why, size, "%s has values out of range", rules[i][0]);
		else if (rc != SQLITE_ROW)
			snprintf(why, size, "%s", sqlite3_errmsg(db));
		sqlite3_finalize(st);
		if (bad || rc != SQLITE_ROW)
			return -EINVAL;
	}
	return 0;
}

/* Every name is read through StringIds and compared as a C string: a NULL there (the schema says NOT
 * NULL, a hand-made file need not) is refused whatever the profile's size; cheap with cprofd's UNIQUE
 * index on value. */
static int check_strings(sqlite3 *db, char *why, size_t size)
{
	if (cprof_query_int(db, "SELECT EXISTS(SELECT 1 FROM main.StringIds WHERE value IS NULL OR typeof(id) != 'integer')",
			    1) == 0)
		return 0;
	snprintf(why, size, "StringIds has NULL values or ids that are not integers");
	return -EINVAL;
}

/* The preload numbers its calls uniquely in a process (thread id and a count: a thread id the kernel reuses
 * after pid_max wraps may repeat a few), and CUPTI gives each correlation one external id of ours: a
 * profile that repeats one many times (hand-made, forged) makes every join on it quadratic (5,000 launches
 * sharing one id: minutes of report). Checked with the full checks (one sort of the calls' ids). */
static int check_unique_ids(sqlite3 *db, char *why, size_t size)
{
	static const char *const rules[][2] = {
		{ "CPROF_API", "SELECT EXISTS(SELECT 1 FROM main.CPROF_API WHERE correlationId IS NOT NULL"
			       " GROUP BY processId, correlationId HAVING count(*) > 16)" },
		{ "CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION",
		  "SELECT EXISTS(SELECT 1 FROM main.CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION WHERE externalKind = 5"
		  " GROUP BY processId, correlationId HAVING count(*) > 16)" },
	};

	for (size_t i = 0; i < sizeof(rules) / sizeof(rules[0]); i++)
		if (cprof_query_int(db, rules[i][1], 0) != 0) {
			snprintf(why, size, "%s repeats a correlation id more than 16 times", rules[i][0]);
			return -EINVAL;
		}
	return 0;
}

/* Damage inside a page shows only when a query reaches it, half-way through a report: look at every page
 * first (PRAGMA quick_check, ~15 ms per MiB here). */
static int check_pages(sqlite3 *db, char *why, size_t size)
{
	static const char banner[] = "*** in database main ***";
	sqlite3_stmt *st = NULL;
	const char *res;
	int ret = -EINVAL;

	if (sqlite3_prepare_v2(db, "PRAGMA quick_check(1)", -1, &st, NULL) != SQLITE_OK ||
	    sqlite3_step(st) != SQLITE_ROW) {
		snprintf(why, size, "%s", sqlite3_errmsg(db));
		goto out;
	}
	res = (const char *)sqlite3_column_text(st, 0);
	if (res && strcmp(res, "ok") == 0) {
		ret = 0;
		goto out;
	}
	if (res && strncmp(res, banner, sizeof(banner) - 1) == 0)
		for (res += sizeof(banner) - 1; *res == '\n' || *res == ' ';)
			res++;
	snprintf(why, size, "damaged: %.160s", res ? res : "?");
out:
	sqlite3_finalize(st);
	return ret;
}

/* A file: URI for path. A finished profile (no WAL beside it, no journal) is opened immutable, so that
 * reading it creates no -wal/-shm files next to it; a profile still being written, or left by a killed
 * collector with its last commits in the WAL, is opened read-only the ordinary way. */
static int make_uri(const char *path, char *uri, size_t size)
{
	static const char hex[] = "0123456789ABCDEF";
	char side[4200];
	struct stat st;
	int immutable = 1;
	size_t o;

	snprintf(side, sizeof(side), "%s-wal", path);
	if (stat(side, &st) == 0 && st.st_size > 0)
		immutable = 0;
	snprintf(side, sizeof(side), "%s-journal", path);
	if (stat(side, &st) == 0)
		immutable = 0;
	o = snprintf(uri, size, "file:");
	for (const unsigned char *p = (const unsigned char *)path; *p; p++) {
		if (o + 4 >= size)
			return -ENAMETOOLONG;
		if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
		    strchr("/._-~", *p)) {
			uri[o++] = *p;
		} else {
			uri[o++] = '%';
			uri[o++] = hex[*p >> 4];
			uri[o++] = hex[*p & 15];
		}
	}
	if (snprintf(uri + o, size - o, "?mode=ro%s", immutable ? "&immutable=1" : "") >= (int)(size - o))
		return -ENAMETOOLONG;
	return 0;
}

int cprof_profile_uri(const char *path, char *uri, size_t size)
{
	return make_uri(path, uri, size);
}

/* The schema version: ours, or a newer one (said plainly), or none. */
static int check_version(sqlite3 *db, char *why, size_t size)
{
	static const char prefix[] = "cprof.profile/", ours[] = CPROF_PROFILE_SCHEMA;
	const size_t plen = sizeof(prefix) - 1;
	sqlite3_stmt *st = NULL;
	const char *schema = NULL;
	int ret = -EINVAL;

	if (sqlite3_prepare_v2(db, "SELECT value FROM META WHERE key='schema'", -1, &st, NULL) != SQLITE_OK) {
		snprintf(why, size, "%s", sqlite3_errmsg(db));
		goto out;
	}
	if (sqlite3_step(st) == SQLITE_ROW)
		schema = (const char *)sqlite3_column_text(st, 0);
	if (schema && strcmp(schema, ours) == 0)
		ret = 0;
	else if (schema && strncmp(schema, prefix, plen) == 0 && strtol(schema + plen, NULL, 10) > strtol(&ours[plen], NULL, 10))
		snprintf(why, size, "written by a newer cprof (schema %.40s; this one reads %s)", schema, ours);
	else
		snprintf(why, size, "no cprof schema in META");
out:
	sqlite3_finalize(st);
	return ret;
}

#define FULL_CHECK_MAX_BYTES (16ll << 20)

/* SQLite's unix VFS opens no database whose absolute path (symlinks resolved) is longer than 504 bytes
 * (512 with "-journal"). */
static int path_too_long_for_sqlite(const char *path)
{
	char *real = realpath(path, NULL);
	int too_long = real == NULL || strlen(real) > CPROF_SQLITE_PATH_MAX;

	free(real);
	return too_long;
}

/* A finished profile at a path SQLite cannot open is read from memory: the file mapped copy-on-write
 * (never written back) and handed to SQLite read-only. The mapping lives until the process exits. One
 * with its last commits still in a WAL beside it cannot be read this way: said plainly. */
static int open_mapped(int fd, const char *path, sqlite3 **db, char *why, size_t size)
{
	char wal[4200];
	struct stat st;
	void *map;

	snprintf(wal, sizeof(wal), "%s-wal", path);
	if (stat(wal, &st) == 0 && st.st_size > 0) {
		snprintf(why, size, "its path is longer than SQLite's %d bytes and it has a WAL: move it to a shorter path",
			 CPROF_SQLITE_PATH_MAX);
		return -ENAMETOOLONG;
	}
	if (fstat(fd, &st) < 0 || st.st_size == 0) {
		snprintf(why, size, "empty file");
		return -EINVAL;
	}
	map = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	if (map == MAP_FAILED) {
		snprintf(why, size, "cannot map it: %s", strerror(errno));
		return -errno;
	}
	/* a profile is in WAL mode (header bytes 18-19 = 2), which a memory database cannot be: this private
	 * copy says rollback journal (1), as a finished profile with no WAL reads the same either way */
	if (st.st_size >= 100 && ((unsigned char *)map)[18] == 2 && ((unsigned char *)map)[19] == 2)
		((unsigned char *)map)[18] = ((unsigned char *)map)[19] = 1;
	if (sqlite3_open_v2(":memory:", db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK ||
	    sqlite3_deserialize(*db, "main", map, st.st_size, st.st_size, SQLITE_DESERIALIZE_READONLY) != SQLITE_OK) {
		snprintf(why, size, "%s", *db ? sqlite3_errmsg(*db) : "out of memory");
		munmap(map, (size_t)st.st_size);
		return -EINVAL;
	}
	return 0;
}

/* The file this process last checked whole: trace --per-rank opens the profile once per rank, and 5001
 * ranks of a 1 MB profile took 155 s of the same checks (issue 21, item 11). Same file, same size and
 * mtime: the checks are not repeated. */
static struct {
	int valid;
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime;
} checked;

static int same_as_checked(const struct stat *sb)
{
	return checked.valid && checked.dev == sb->st_dev && checked.ino == sb->st_ino && checked.size == sb->st_size &&
	       checked.mtime.tv_sec == sb->st_mtim.tv_sec && checked.mtime.tv_nsec == sb->st_mtim.tv_nsec;
}

sqlite3 *cprof_profile_open(const char *path)
{
	sqlite3 *db = NULL;
	char why[256] = "", uri[3 * 4096 + 64], line[300];
	struct stat sb;
	int full, have_sb;
	int flag, fd, bad;
	size_t i;

	fd = cprof_open_regular(path, why, sizeof(why));
	if (fd < 0) {
		pr_err("%s: %s", path, why);
		return NULL;
	}
	bad = check_truncated(fd, path, why, sizeof(why)) < 0;
	if (!bad && path_too_long_for_sqlite(path)) {
		bad = open_mapped(fd, path, &db, why, sizeof(why)) < 0;
		close(fd);
		if (bad)
			goto bad;
		goto opened;
	}
	close(fd);
	if (bad)
		goto bad;
	if (make_uri(path, uri, sizeof(uri)) < 0) {
		snprintf(why, sizeof(why), "path too long");
		goto bad;
	}
	/* read-only, and a profile is untrusted input: no schema-borne functions (trusted_schema off), no
	 * triggers, no writes to the schema (defensive), bounded strings and statements */
	if (sqlite3_open_v2(uri, &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK) {
		snprintf(why, sizeof(why), "%s", db ? sqlite3_errmsg(db) : "out of memory");
		goto bad;
	}
opened:
	if (sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, 1, &flag) != SQLITE_OK ||
	    sqlite3_db_config(db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, &flag) != SQLITE_OK ||
	    sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_TRIGGER, 0, &flag) != SQLITE_OK ||
	    sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION, 0, &flag) != SQLITE_OK) {
		snprintf(why, sizeof(why), "cannot make SQLite defensive");
		goto bad;
	}
	sqlite3_limit(db, SQLITE_LIMIT_LENGTH, 64 << 20);
	sqlite3_limit(db, SQLITE_LIMIT_SQL_LENGTH, 1 << 20);
	if (check_schema(db, why, sizeof(why)) < 0 || check_version(db, why, sizeof(why)) < 0 ||
	    check_strings(db, why, sizeof(why)) < 0)
		goto bad;
	/* the checks that read every page cost ~20 ms per MiB: before every command for profiles up to
	 * 16 MiB; bigger ones (cprof-run's summary of a long run must not wait seconds) are checked as they
	 * are read, and a damaged page stops the command with status 2 all the same */
	have_sb = stat(path, &sb) == 0;
	full = !have_sb || sb.st_size <= FULL_CHECK_MAX_BYTES;
	if (!(have_sb && same_as_checked(&sb)) &&
	    ((full && check_pages(db, why, sizeof(why)) < 0) || check_ranges(db, why, sizeof(why), full) < 0 ||
	     (full && check_unique_ids(db, why, sizeof(why)) < 0)))
		goto bad;
	if (have_sb)
		checked = (typeof(checked)){ 1, sb.st_dev, sb.st_ino, sb.st_size, sb.st_mtim };
	if (getenv("CPROF_SQL_TRACE"))
		sqlite3_trace_v2(db, SQLITE_TRACE_PROFILE, trace_cb, NULL);
	return db;
bad:
	/* one line, whatever is wrong: names in a hostile schema and SQLite's check output may hold newlines */
	snprintf(line, sizeof(line), "%s", why);
	for (i = 0; line[i]; i++)
		if ((unsigned char)line[i] < 0x20 || line[i] == 0x7f)
			line[i] = ' ';
	pr_err("%s: not a cprof profile, or a damaged one (%s)", path, line);
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
	long long n;

	if (v == NULL)
		return def;
	n = strtoll(v, NULL, 10);
	/* a hostile value must not overflow the arithmetic done with it (times, counts) */
	return n > (1ll << 62) ? 1ll << 62 : n < -(1ll << 62) ? -(1ll << 62) : n;
}

int64_t cprof_query_int(sqlite3 *db, const char *sql, int64_t def)
{
	sqlite3_stmt *st;
	int64_t v = def;

	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		return def;
	if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL)
		v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}

int64_t cprof_killed_processes(sqlite3 *db)
{
	return cprof_query_int(db, "SELECT count(*) FROM PROCESSES WHERE ending LIKE '%killed by signal%'"
				   " OR ending LIKE '%no goodbye%'", 0);
}

int cprof_has_table(sqlite3 *db, const char *name)
{
	sqlite3_stmt *st;
	int found = 0;

	if (sqlite3_prepare_v2(db, "SELECT 1 FROM main.sqlite_master WHERE type = 'table' AND name = ?1", -1, &st, NULL) !=
	    SQLITE_OK)
		return 0;
	sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
	found = sqlite3_step(st) == SQLITE_ROW;
	sqlite3_finalize(st);
	return found;
}

int cprof_has_column(sqlite3 *db, const char *table, const char *column)
{
	sqlite3_stmt *st;
	int found = 0;

	if (sqlite3_prepare_v2(db, "SELECT 1 FROM pragma_table_info(?1, 'main') WHERE name = ?2", -1, &st, NULL) !=
	    SQLITE_OK)
		return 0;
	sqlite3_bind_text(st, 1, table, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, column, -1, SQLITE_STATIC);
	found = sqlite3_step(st) == SQLITE_ROW;
	sqlite3_finalize(st);
	return found;
}

int cprof_cupti_shared(sqlite3 *db, struct cprof_cupti_shared *out)
{
	/* the counts statuses only (the first one says that sharing began), each process's newest */
	static const char sql[] = "SELECT processId, message FROM CPROF_STATUS WHERE code = 'cupti-shared'"
				  " AND message LIKE 'CUPTI shared with%' ORDER BY processId, timeNs DESC";
	sqlite3_stmt *st;
	int64_t last = -1;
	int rc, any = 0;

	memset(out, 0, sizeof(*out));
	if (!cprof_has_table(db, "CPROF_STATUS"))
		return 0;
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		return -EIO;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t proc = sqlite3_column_int64(st, 0);
		const char *m = (const char *)sqlite3_column_text(st, 1);
		unsigned long long h, k, mi, p;

		if (any && proc == last)
			continue;
		any = 1;
		last = proc;
		out->processes++;
		if (m && sscanf(m, CPROF_CUPTI_SHARED_FMT, &h, &k, &mi, &p) == 4) {
			out->handed += (int64_t)h;
			out->kernels += (int64_t)k;
			out->missed += (int64_t)mi;
			out->pending += (int64_t)p;
		}
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : -EIO;
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

/* one writer of each kind for every command (common/textsafe.c) */
void cprof_json_str(FILE *f, const char *s)
{
	cprof_json_fput(f, s);
}

void cprof_csv_str(FILE *f, const char *s)
{
	cprof_csv_fput(f, s);
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

void cprof_stats_finish(const double *d, uint64_t n, struct cprof_stats *st)
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
			cprof_stats_finish(d, n, &s);
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
		cprof_stats_finish(d, n, &s);
		ret = fn(ctx, key, label, &s);
	}
out:
	sqlite3_finalize(st);
	free(d);
	free(label);
	return ret;
}

/* nsys's names for CUPTI's copy kinds */
const char *cprof_copy_kind_name(int k)
{
	static const char *const names[] = { "[CUDA memcpy Unknown]", "[CUDA memcpy Host-to-Device]",
					     "[CUDA memcpy Device-to-Host]", "[CUDA memcpy Host-to-Array]",
					     "[CUDA memcpy Array-to-Host]", "[CUDA memcpy Array-to-Array]",
					     "[CUDA memcpy Array-to-Device]", "[CUDA memcpy Device-to-Array]",
					     "[CUDA memcpy Device-to-Device]", "[CUDA memcpy Host-to-Host]",
					     "[CUDA memcpy Peer-to-Peer]" };

	return k >= 0 && k <= 10 ? names[k] : names[0];
}

int cprof_utf8_len(const unsigned char *s)
{
	return cprof_utf8_seq(s);
}

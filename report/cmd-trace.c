/* cprof trace: the profile as a Chrome trace laid out as Kineto writes it (Perfetto, TensorBoard, HTA). */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define PR_FMT "cprof trace"
#include "common/log.h"
#include "common/wire.h"
#include "report/cprof.h"
#include "report/ranges.h"
#include "report/stacks.h"

/* Kineto's constants (libkineto output_base.h / output_json.cpp): GPU processes sort after every real pid,
 * the CUPTI overhead lane is pid -1 and sorts after the GPUs. */
#define KINETO_EXCEED_MAX_PID 5000000
#define KINETO_OVERHEAD_SORT  0x100000

struct proc {
	int64_t id, pid;
};

struct cupti_thread {
	int64_t process_id, handle, tid;
};

struct lane {
	int64_t pid, tid;
};

struct demangled {
	int64_t name_id;
	char *text;
};

/* A lane named with NVTX: a thread (pid, tid) or a stream (device, CUPTI stream id). */
enum { NAME_THREAD, NAME_STREAM };
struct lane_name {
	int kind;
	int64_t pid, tid;
	char *name;
};

struct trace {
	sqlite3 *db;
	FILE *f;
	int64_t base_ns;
	int64_t first_rel_ns;
	uint64_t events;
	int first_event;
	int simulated;
	struct proc *procs;
	size_t nprocs;
	/* CUPTI's thread ids are pthread handles; the hooks know the kernel tid of the same thread */
	struct cupti_thread *tidmap;
	size_t ntidmap;
	struct lane *seen_threads;
	size_t nseen, capseen;
	struct demangled *dm;
	size_t ndm, capdm;
	sqlite3_stmt *flows;
	struct cprof_stacks stacks;
	struct pyspan *py;  /* per thread: the Python frames open as python_function spans */
	size_t npy, cappy;
	int64_t py_ids;
	struct lane_name *names;
	size_t nnames, capnames;
	int nvtx; /* the profile has NVTX events or names: the TEMP tables of write_nvtx exist */
	int64_t rank;  /* >= 0: only this rank's processes (--per-rank) */
	int64_t world; /* world size to write with --per-rank */
};

static void usage(FILE *f)
{
	fprintf(f, "usage: cprof trace PROFILE.db -o TRACE.json [-f]\n"
		   "       cprof trace PROFILE.db --per-rank DIR [-f]\n"
		   "  writes a Chrome trace in Kineto's layout (Perfetto, TensorBoard, Holistic Trace Analysis)\n"
		   "  -o PATH          the trace file (never overwritten unless -f)\n"
		   "  --per-rank DIR   one trace per rank, DIR/rank-N.json, as HTA's multi-rank analysis reads them\n"
		   "  -f               overwrite existing files\n");
}

/* ---- output primitives: one event per line, numbers formatted by hand because this is the hot loop ---- */

static void put(struct trace *t, const char *s)
{
	fputs_unlocked(s, t->f);
}

static void put_u(struct trace *t, uint64_t v)
{
	char buf[24], *p = buf + sizeof(buf);

	do {
		*--p = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	fwrite_unlocked(p, 1, (size_t)(buf + sizeof(buf) - p), t->f);
}

static void put_i(struct trace *t, int64_t v)
{
	if (v < 0) {
		fputc_unlocked('-', t->f);
		put_u(t, (uint64_t)0 - (uint64_t)v);
	} else {
		put_u(t, (uint64_t)v);
	}
}

/* Microseconds with exactly three decimals, as Kineto prints them ("{}.{:03}"), never negative. */
static void put_us(struct trace *t, int64_t ns)
{
	char frac[5];

	if (ns < 0)
		ns = 0;
	put_u(t, (uint64_t)ns / 1000);
	frac[0] = '.';
	frac[1] = (char)('0' + ns % 1000 / 100);
	frac[2] = (char)('0' + ns % 100 / 10);
	frac[3] = (char)('0' + ns % 10);
	frac[4] = '\0';
	fwrite_unlocked(frac, 1, 4, t->f);
}

static void put_ts(struct trace *t, int64_t abs_ns)
{
	put_us(t, abs_ns - t->base_ns);
}

/* A JSON string; bytes that are not UTF-8 (argv can hold anything) become U+FFFD so every parser accepts it. */
static void put_str(struct trace *t, const char *s)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");

	fputc_unlocked('"', t->f);
	while (*p) {
		int n;

		if (*p == '"' || *p == '\\') {
			fputc_unlocked('\\', t->f);
			fputc_unlocked(*p++, t->f);
		} else if (*p < 0x20) {
			fprintf(t->f, "\\u%04x", *p++);
		} else if ((n = cprof_utf8_len(p)) > 0) {
			fwrite_unlocked(p, 1, (size_t)n, t->f);
			p += n;
		} else {
			put(t, "\\ufffd");
			p++;
		}
	}
	fputc_unlocked('"', t->f);
}

/* Shortest decimal that reads back as the same double, as fmt's "{}" (Kineto's bandwidth) prints it. */
static void put_double(struct trace *t, double v)
{
	char buf[40];
	int prec;

	for (prec = 1; prec <= 17; prec++) {
		snprintf(buf, sizeof(buf), "%.*g", prec, v);
		if (strtod(buf, NULL) == v)
			break;
	}
	put(t, buf);
}

static void ev_begin(struct trace *t)
{
	put(t, t->first_event ? "\n  {" : ",\n  {");
	t->first_event = 0;
	t->events++;
}

static void put_meta(struct trace *t, const char *what, int64_t pid, int64_t tid, const char *key, const char *sval,
		     int64_t ival)
{
	ev_begin(t);
	put(t, "\"name\": ");
	put_str(t, what);
	put(t, ", \"ph\": \"M\", \"ts\": ");
	put_us(t, t->first_rel_ns);
	put(t, ", \"pid\": ");
	put_i(t, pid);
	put(t, ", \"tid\": ");
	put_i(t, tid);
	put(t, ", \"args\": {\"");
	put(t, key);
	put(t, "\": ");
	if (sval)
		put_str(t, sval);
	else
		put_i(t, ival);
	put(t, "}}");
}

/* An "X" span up to the start of its args object; the caller adds the args and closes it with "}}". */
static void span_begin(struct trace *t, const char *cat, const char *name, int64_t pid, int64_t tid, int64_t start,
		       int64_t end)
{
	ev_begin(t);
	put(t, "\"ph\": \"X\", \"cat\": \"");
	put(t, cat);
	put(t, "\", \"name\": ");
	put_str(t, name);
	put(t, ", \"pid\": ");
	put_i(t, pid);
	put(t, ", \"tid\": ");
	put_i(t, tid);
	put(t, ", \"ts\": ");
	put_ts(t, start);
	put(t, ", \"dur\": ");
	put_us(t, end - start);
}

static void flow(struct trace *t, char ph, int64_t id, int64_t pid, int64_t tid, int64_t ts)
{
	ev_begin(t);
	put(t, ph == 's' ? "\"ph\": \"s\", \"id\": " : "\"ph\": \"f\", \"id\": ");
	put_i(t, id);
	put(t, ", \"pid\": ");
	put_i(t, pid);
	put(t, ", \"tid\": ");
	put_i(t, tid);
	put(t, ", \"ts\": ");
	put_ts(t, ts);
	/* only the end binds to its enclosing slice explicitly, as Kineto writes it */
	put(t, ph == 's' ? ", \"cat\": \"ac2g\", \"name\": \"ac2g\"}"
			 : ", \"cat\": \"ac2g\", \"name\": \"ac2g\", \"bp\": \"e\"}");
}

static void arg_i(struct trace *t, const char *key, int64_t v)
{
	put(t, ", \"");
	put(t, key);
	put(t, "\": ");
	put_i(t, v);
}

static void arg_s(struct trace *t, const char *key, const char *v)
{
	put(t, ", \"");
	put(t, key);
	put(t, "\": ");
	put_str(t, v);
}

static void arg_dim3(struct trace *t, const char *key, int64_t x, int64_t y, int64_t z)
{
	put(t, ", \"");
	put(t, key);
	put(t, "\": [");
	put_i(t, x);
	put(t, ", ");
	put_i(t, y);
	put(t, ", ");
	put_i(t, z);
	put(t, "]");
}

/* ---- SQLite helpers ---- */

static int prep(struct trace *t, const char *sql, sqlite3_stmt **st)
{
	if (sqlite3_prepare_v2(t->db, sql, -1, st, NULL) != SQLITE_OK) {
		pr_err("query failed: %s", sqlite3_errmsg(t->db));
		return -EIO;
	}
	return 0;
}

static int exec(struct trace *t, const char *sql)
{
	char *msg = NULL;

	if (sqlite3_exec(t->db, sql, NULL, NULL, &msg) != SQLITE_OK) {
		pr_err("query failed: %s", msg ? msg : sqlite3_errmsg(t->db));
		sqlite3_free(msg);
		return -EIO;
	}
	return 0;
}

static const char *col_str(sqlite3_stmt *st, int i)
{
	const unsigned char *s = sqlite3_column_text(st, i);

	return s ? (const char *)s : "";
}

static int step_done(struct trace *t, int rc)
{
	if (rc == SQLITE_DONE)
		return 0;
	pr_err("reading the profile failed: %s", sqlite3_errmsg(t->db));
	return -EIO;
}

/* Profiles written before the GPU lane have no CUPTI tables: empty TEMP tables of the same name shadow the
 * missing ones, so one set of queries reads both. */
static int shim_missing_tables(struct trace *t)
{
	static const char *const tables[][2] = {
		{ "CUPTI_ACTIVITY_KIND_KERNEL",
		  "processId, start, end, deviceId, contextId, streamId, correlationId, nameId, gridX, gridY, gridZ,"
		  " blockX, blockY, blockZ, registersPerThread, staticSharedMemory, dynamicSharedMemory, graphId,"
		  " graphNodeId, gridId" },
		{ "CUPTI_ACTIVITY_KIND_MEMCPY",
		  "processId, start, end, deviceId, contextId, streamId, correlationId, bytes, copyKind, srcKind,"
		  " dstKind, graphId" },
		{ "CUPTI_ACTIVITY_KIND_MEMSET",
		  "processId, start, end, deviceId, contextId, streamId, correlationId, bytes, value, memKind, graphId" },
		{ "CUPTI_ACTIVITY_KIND_RUNTIME",
		  "processId, start, end, correlationId, nameId, cbid, threadId, returnValue" },
		{ "CUPTI_ACTIVITY_KIND_DRIVER", "processId, start, end, correlationId, nameId, cbid, threadId, returnValue" },
		{ "CUPTI_ACTIVITY_KIND_OVERHEAD",
		  "processId, start, end, overheadKind, objectKind, deviceId, contextId, streamId, correlationId" },
		{ "CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION", "processId, externalKind, externalId, correlationId" },
		{ "THREADS", "processId, tid, firstNs, lastNs, calls" },
		{ "NVTX_EVENTS",
		  "id INTEGER PRIMARY KEY, processId, pid, tid, start, end, eventType, textId, domainId, categoryId, color,"
		  " depth, parentId, endTid" },
		{ "CPROF_NAMES", "processId, kind, key, nameId" },
	};
	char sql[512];
	size_t i;
	int ret;

	for (i = 0; i < sizeof(tables) / sizeof(tables[0]); i++) {
		if (cprof_has_table(t->db, tables[i][0]))
			continue;
		snprintf(sql, sizeof(sql), "CREATE TEMP TABLE %s(%s)", tables[i][0], tables[i][1]);
		if ((ret = exec(t, sql)) < 0)
			return ret;
	}
	return 0;
}

/* The joins the export needs, indexed once in TEMP tables: CUPTI id -> our external id, our id -> the hooked
 * call, CUPTI ids that reached the GPU, CUPTI ids of API records. SQLite spills TEMP tables to a file, so
 * memory stays flat. The key columns are typed INTEGER on purpose: an untyped column has no affinity, SQLite
 * cannot search it with an INTEGER value and scans it for every row instead (minutes on 100k events).
 * externalKind 5 is CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2, the kind libcprof pushes. */
static const char index_sql[] =
	"CREATE TEMP TABLE x_ext(processId INTEGER, correlationId INTEGER, externalId INTEGER,"
	" PRIMARY KEY(processId, correlationId)) WITHOUT ROWID;"
	"INSERT OR IGNORE INTO x_ext SELECT processId, correlationId, externalId"
	" FROM CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION WHERE externalKind = 5;"
	"CREATE INDEX temp.x_ext_by_ext ON x_ext(processId, externalId);"
	"CREATE TEMP TABLE x_hook(processId INTEGER, extId INTEGER, nameId INTEGER, tid INTEGER,"
	" PRIMARY KEY(processId, extId)) WITHOUT ROWID;"
	"INSERT OR IGNORE INTO x_hook SELECT processId, correlationId, nameId, tid FROM CPROF_API"
	" WHERE correlationId IS NOT NULL;"
	"CREATE TEMP TABLE x_gpu(processId INTEGER, correlationId INTEGER, PRIMARY KEY(processId, correlationId))"
	" WITHOUT ROWID;"
	"INSERT OR IGNORE INTO x_gpu SELECT processId, correlationId FROM CUPTI_ACTIVITY_KIND_KERNEL;"
	"INSERT OR IGNORE INTO x_gpu SELECT processId, correlationId FROM CUPTI_ACTIVITY_KIND_MEMCPY;"
	"INSERT OR IGNORE INTO x_gpu SELECT processId, correlationId FROM CUPTI_ACTIVITY_KIND_MEMSET;"
	"CREATE TEMP TABLE x_api(processId INTEGER, correlationId INTEGER, nameId INTEGER, cbid INTEGER,"
	" PRIMARY KEY(processId, correlationId)) WITHOUT ROWID;"
	"INSERT OR IGNORE INTO x_api SELECT processId, correlationId, nameId, cbid FROM CUPTI_ACTIVITY_KIND_RUNTIME;"
	"INSERT OR IGNORE INTO x_api SELECT processId, correlationId, nameId, cbid FROM CUPTI_ACTIVITY_KIND_DRIVER;"
	/* per hooked call: its first CUPTI id that reached the GPU, its first CUPTI id at all, how many reached */
	"CREATE TEMP TABLE x_hsum(processId INTEGER, extId INTEGER, gcorr INTEGER, anycorr INTEGER, ngpu INTEGER,"
	" PRIMARY KEY(processId, extId)) WITHOUT ROWID;"
	"INSERT INTO x_hsum SELECT e.processId, e.externalId,"
	" min(CASE WHEN g.correlationId IS NOT NULL THEN e.correlationId END), min(e.correlationId),"
	" count(g.correlationId) FROM x_ext e LEFT JOIN x_gpu g"
	" ON g.processId = e.processId AND g.correlationId = e.correlationId GROUP BY e.processId, e.externalId;"
	/* per hooked call made inside an ATen op range (cprof-run --torch-ops): the innermost op, whose id is the
	 * "External id" of the call and of its GPU work, as Kineto links a cpu_op to them (filled by nvtx_index) */
	"CREATE TEMP TABLE x_opof(processId INTEGER, extId INTEGER, opId INTEGER, PRIMARY KEY(processId, extId))"
	" WITHOUT ROWID;";

/* Names compare equal when they are the same API: "__cudaLaunchKernel" is cudaLaunchKernel, CUPTI's
 * "cudaMemcpyAsync_ptsz_v7000" is cudaMemcpyAsync. */
static void api_key(const char *in, char *out, size_t size)
{
	size_t n, o = 0;
	const char *p;

	while (*in == '_')
		in++;
	n = strlen(in);
	p = strrchr(in, '_');
	if (p && p[1] == 'v' && p[2] >= '0' && p[2] <= '9' && strspn(p + 2, "0123456789") == strlen(p + 2))
		n = (size_t)(p - in);
	for (p = in; p < in + n && o + 1 < size; p++) {
		if (!strncmp(p, "_ptsz", 5) || !strncmp(p, "_ptds", 5)) {
			p += 4;
			continue;
		}
		out[o++] = *p;
	}
	out[o] = '\0';
}

static int same_api(const char *a, const char *b)
{
	char ka[128], kb[128];

	api_key(a, ka, sizeof(ka));
	api_key(b, kb, sizeof(kb));
	return strcmp(ka, kb) == 0;
}

/* CUPTI's runtime names carry the API version ("cudaLaunchKernel_v7000"); Kineto prints them without it. */
static void display_api_name(const char *in, char *out, size_t size)
{
	const char *p = strrchr(in, '_');

	snprintf(out, size, "%s", in);
	if (p && p[1] == 'v' && strlen(p + 2) >= 4 && strspn(p + 2, "0123456789") == strlen(p + 2) &&
	    (size_t)(p - in) < size)
		out[p - in] = '\0';
}

/* Kineto demangles kernel names (libstdc++'s __cxa_demangle); one demangling per distinct name, not per event. */
static const char *kernel_name(struct trace *t, int64_t name_id, const char *mangled)
{
	size_t lo = 0, hi = t->ndm, i;
	char *text;

	if (strncmp(mangled, "_Z", 2) != 0 || name_id < 0)
		return mangled;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (t->dm[mid].name_id == name_id)
			return t->dm[mid].text;
		if (t->dm[mid].name_id < name_id)
			lo = mid + 1;
		else
			hi = mid;
	}
	text = cprof_demangle(mangled);
	if (text == NULL)
		return mangled;
	if (t->ndm == t->capdm) {
		size_t cap = t->capdm ? t->capdm * 2 : 64;
		struct demangled *n = realloc(t->dm, cap * sizeof(*n));

		if (n == NULL) {
			free(text);
			return mangled;
		}
		t->dm = n;
		t->capdm = cap;
	}
	/* kept sorted by id: one entry per distinct kernel name, not per event */
	for (i = t->ndm; i > lo; i--)
		t->dm[i] = t->dm[i - 1];
	t->dm[lo].name_id = name_id;
	t->dm[lo].text = text;
	t->ndm++;
	return text;
}

static int64_t proc_pid(const struct trace *t, int64_t process_id)
{
	size_t lo = 0, hi = t->nprocs;

	/* loaded ORDER BY id */
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (t->procs[mid].id == process_id)
			return t->procs[mid].pid;
		if (t->procs[mid].id < process_id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return 0;
}

/* CUPTI correlation ids count from 1 in every process: when a profile holds several, the process's row id
 * in the high bits keeps flow ids and HTA's correlation join from pairing one process's launch with
 * another's kernel. */
static int64_t corr_id(const struct trace *t, int64_t process_id, int64_t corr)
{
	return t->nprocs > 1 ? (int64_t)((uint64_t)process_id << 32 | (uint32_t)corr) : corr;
}

/* Kineto's fallback for a CUPTI thread it cannot name: the handle truncated to int32, made positive. */
static int64_t cupti_tid(const struct trace *t, int64_t process_id, int64_t thread_id)
{
	int32_t v = (int32_t)(uint32_t)thread_id;
	size_t i;

	for (i = 0; i < t->ntidmap; i++)
		if (t->tidmap[i].process_id == process_id && t->tidmap[i].handle == thread_id)
			return t->tidmap[i].tid;
	return v == INT32_MIN ? 0 : v < 0 ? -(int64_t)v : v;
}

static int load_procs(struct trace *t)
{
	sqlite3_stmt *st;
	int rc, ret;

	if ((ret = prep(t, "SELECT id, pid FROM PROCESSES ORDER BY id", &st)) < 0)
		return ret;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct proc *n = realloc(t->procs, (t->nprocs + 1) * sizeof(*n));

		if (n == NULL) {
			ret = -ENOMEM;
			goto out;
		}
		t->procs = n;
		t->procs[t->nprocs].id = sqlite3_column_int64(st, 0);
		t->procs[t->nprocs].pid = sqlite3_column_int64(st, 1);
		t->nprocs++;
	}
	ret = step_done(t, rc);
out:
	sqlite3_finalize(st);
	return ret;
}

static int load_tidmap(struct trace *t)
{
	sqlite3_stmt *st;
	int rc, ret;

	ret = prep(t,
		   "SELECT r.processId, r.threadId, min(h.tid) FROM (SELECT processId, correlationId, threadId"
		   " FROM CUPTI_ACTIVITY_KIND_RUNTIME UNION ALL SELECT processId, correlationId, threadId"
		   " FROM CUPTI_ACTIVITY_KIND_DRIVER) r"
		   " JOIN x_ext e ON e.processId = r.processId AND e.correlationId = r.correlationId"
		   " JOIN x_hook h ON h.processId = e.processId AND h.extId = e.externalId"
		   " GROUP BY r.processId, r.threadId ORDER BY 1, 2",
		   &st);
	if (ret < 0)
		return ret;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct cupti_thread *n = realloc(t->tidmap, (t->ntidmap + 1) * sizeof(*n));

		if (n == NULL) {
			ret = -ENOMEM;
			goto out;
		}
		t->tidmap = n;
		t->tidmap[t->ntidmap].process_id = sqlite3_column_int64(st, 0);
		t->tidmap[t->ntidmap].handle = sqlite3_column_int64(st, 1);
		t->tidmap[t->ntidmap].tid = sqlite3_column_int64(st, 2);
		t->ntidmap++;
	}
	ret = step_done(t, rc);
out:
	sqlite3_finalize(st);
	return ret;
}

/* ---- header and metadata ---- */

static void write_header(struct trace *t)
{
	char command[4096], buf[32];
	int64_t rank = t->rank >= 0 ? t->rank
				    : cprof_query_int(t->db, "SELECT rank FROM PROCESSES WHERE rank IS NOT NULL ORDER BY id LIMIT 1", 0);
	int64_t world = t->rank >= 0 ? t->world
				     : cprof_query_int(t->db, "SELECT worldSize FROM PROCESSES WHERE worldSize IS NOT NULL"
						    " ORDER BY id LIMIT 1", 1);

	put(t, "{\n  \"schemaVersion\": 1,\n  \"deviceProperties\": [\n  ],\n");
	/* HTA finds a file's rank with the regex '"rank":\s+(\d+)' on the first line that matches: keep the
	 * space, and keep this line ahead of anything else that could say "rank" */
	put(t, "  \"distributedInfo\": {\"backend\": \"nccl\", \"rank\": ");
	put_i(t, rank < 0 ? 0 : rank);
	put(t, ", \"world_size\": ");
	put_i(t, world < 1 ? 1 : world);
	put(t, "},\n  \"cprof\": {\"lost_events\": ");
	put_i(t, cprof_meta_int(t->db, "lost_events", 0));
	put(t, ", \"complete\": ");
	put(t, cprof_meta_int(t->db, "complete", 0) == 1 ? "true" : "false");
	put(t, ", \"simulated_gpu\": ");
	put(t, t->simulated ? "true" : "false");
	put(t, ", \"command\": ");
	put_str(t, cprof_meta(t->db, "command", command, sizeof(command), ""));
	put(t, "},\n  \"displayTimeUnit\": \"ms\",\n  \"baseTimeNanoseconds\": ");
	snprintf(buf, sizeof(buf), "%lld", (long long)t->base_ns);
	put(t, buf);
	put(t, ",\n  \"traceEvents\": [");
}

static int thread_seen(struct trace *t, int64_t pid, int64_t tid)
{
	size_t i;

	for (i = 0; i < t->nseen; i++)
		if (t->seen_threads[i].pid == pid && t->seen_threads[i].tid == tid)
			return 1;
	if (t->nseen == t->capseen) {
		size_t cap = t->capseen ? t->capseen * 2 : 16;
		struct lane *n = realloc(t->seen_threads, cap * sizeof(*n));

		if (n == NULL)
			return 1; /* a missing thread name costs less than failing the export */
		t->seen_threads = n;
		t->capseen = cap;
	}
	t->seen_threads[t->nseen].pid = pid;
	t->seen_threads[t->nseen].tid = tid;
	t->nseen++;
	return 0;
}

static const char *lane_name(const struct trace *t, int kind, int64_t pid, int64_t tid)
{
	size_t i;

	for (i = 0; i < t->nnames; i++)
		if (t->names[i].kind == kind && t->names[i].pid == pid && t->names[i].tid == tid)
			return t->names[i].name;
	return NULL;
}

static void thread_meta(struct trace *t, int64_t pid, int64_t tid)
{
	const char *given = lane_name(t, NAME_THREAD, pid, tid);
	char name[64];

	if (thread_seen(t, pid, tid))
		return;
	snprintf(name, sizeof(name), "thread %lld", (long long)tid);
	/* a name given with nvtxNameOsThread replaces the number */
	put_meta(t, "thread_name", pid, tid, "name", given ? given : name, 0);
	put_meta(t, "thread_sort_index", pid, tid, "sort_index", NULL, tid);
}

static int write_metadata(struct trace *t)
{
	sqlite3_stmt *st = NULL;
	int64_t last = -1;
	char name[96];
	int rc, ret;

	/* CPU: one process per pid (an exec'd process keeps its pid), sorted by pid as Kineto does */
	ret = prep(t,
		   "SELECT pid, exe FROM PROCESSES p WHERE id = (SELECT min(id) FROM PROCESSES q WHERE q.pid = p.pid)"
		   " ORDER BY pid",
		   &st);
	if (ret < 0)
		goto out;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t pid = sqlite3_column_int64(st, 0);
		const char *exe = col_str(st, 1), *base = strrchr(exe, '/');

		put_meta(t, "process_name", pid, 0, "name", base ? base + 1 : exe, 0);
		put_meta(t, "process_labels", pid, 0, "labels", "CPU", 0);
		put_meta(t, "process_sort_index", pid, 0, "sort_index", NULL, pid);
	}
	if ((ret = step_done(t, rc)) < 0)
		goto out;
	sqlite3_finalize(st);

	/* CPU threads: those the hooks saw and those that only annotated (no CUDA call), then CUPTI threads
	 * no hook ran on */
	ret = prep(t,
		   "SELECT p.pid, t.tid FROM THREADS t JOIN PROCESSES p ON p.id = t.processId UNION"
		   " SELECT p.pid, e.tid FROM NVTX_EVENTS e JOIN PROCESSES p ON p.id = e.processId ORDER BY 1, 2",
		   &st);
	if (ret < 0)
		goto out;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		thread_meta(t, sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1));
	if ((ret = step_done(t, rc)) < 0)
		goto out;
	sqlite3_finalize(st);
	ret = prep(t,
		   "SELECT processId, threadId FROM CUPTI_ACTIVITY_KIND_RUNTIME UNION"
		   " SELECT processId, threadId FROM CUPTI_ACTIVITY_KIND_DRIVER ORDER BY 1, 2",
		   &st);
	if (ret < 0)
		goto out;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t pid = sqlite3_column_int64(st, 0);

		thread_meta(t, proc_pid(t, pid), cupti_tid(t, pid, sqlite3_column_int64(st, 1)));
	}
	if ((ret = step_done(t, rc)) < 0)
		goto out;
	sqlite3_finalize(st);

	/* GPU: pid = device, tid = stream, as Kineto; Kineto names the device's process after the host process
	 * and labels it "GPU n", but one cprof trace can hold several host processes, so the name says the
	 * device too */
	ret = prep(t,
		   "SELECT deviceId, streamId FROM CUPTI_ACTIVITY_KIND_KERNEL UNION"
		   " SELECT deviceId, streamId FROM CUPTI_ACTIVITY_KIND_MEMCPY UNION"
		   " SELECT deviceId, streamId FROM CUPTI_ACTIVITY_KIND_MEMSET ORDER BY 1, 2",
		   &st);
	if (ret < 0)
		goto out;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t dev = sqlite3_column_int64(st, 0), stream = sqlite3_column_int64(st, 1);

		if (dev != last) {
			snprintf(name, sizeof(name), "GPU %lld%s", (long long)dev, t->simulated ? " (simulated)" : "");
			put_meta(t, "process_name", dev, 0, "name", name, 0);
			put_meta(t, "process_labels", dev, 0, "labels", name, 0);
			put_meta(t, "process_sort_index", dev, 0, "sort_index", NULL, dev + KINETO_EXCEED_MAX_PID);
			last = dev;
		}
		/* Kineto formats "stream {} {}" with an empty postfix: the trailing space is its; the postfix is where
		 * a name given with nvtxNameCudaStream goes */
		snprintf(name, sizeof(name), "stream %lld %.60s", (long long)stream,
			 lane_name(t, NAME_STREAM, dev, stream) ? lane_name(t, NAME_STREAM, dev, stream) : "");
		put_meta(t, "thread_name", dev, stream, "name", name, 0);
		put_meta(t, "thread_sort_index", dev, stream, "sort_index", NULL, stream);
	}
	if ((ret = step_done(t, rc)) < 0)
		goto out;
	if (cprof_query_int(t->db, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_OVERHEAD", 0) > 0) {
		put_meta(t, "process_name", -1, 0, "name", "CUPTI Overhead", 0);
		put_meta(t, "process_sort_index", -1, 0, "sort_index", NULL, KINETO_OVERHEAD_SORT);
	}
out:
	sqlite3_finalize(st);
	return ret;
}

/* ---- events ---- */

/* %s: the stack column, NULL for a profile from before stacks */
static const char hooked_sql[] =
	"SELECT a.processId, a.pid, a.tid, a.start, a.end, a.correlationId, s.value, a.class, a.returnValue,"
	" a.nested, a.kernelNameId, k.value, a.stream, a.bytes, a.a0, a.a1, a.a2, a.a3, a.a4, a.a5, a.a6,"
	" h.gcorr, h.anycorr, h.ngpu, x.cbid, xs.value, %s, xo.opId"
	" FROM CPROF_API a JOIN StringIds s ON s.id = a.nameId LEFT JOIN StringIds k ON k.id = a.kernelNameId"
	" LEFT JOIN x_opof xo ON xo.processId = a.processId AND xo.extId = a.correlationId"
	" LEFT JOIN x_hsum h ON h.processId = a.processId AND h.extId = a.correlationId"
	" LEFT JOIN x_api x ON x.processId = a.processId AND x.correlationId = coalesce(h.gcorr, h.anycorr)"
	" LEFT JOIN StringIds xs ON xs.id = x.nameId ORDER BY a.id";

enum {
	H_PROC, H_PID, H_TID, H_START, H_END, H_EXT, H_NAME, H_CLASS, H_RET, H_NESTED, H_KNAMEID, H_KNAME, H_STREAM,
	H_BYTES, H_A0, H_A1, H_A2, H_A3, H_A4, H_A5, H_A6, H_GCORR, H_ANYCORR, H_NGPU, H_CBID, H_XNAME, H_STACK,
	H_OPID,
};

/* ---- python_function spans: consecutive calls of a thread that share their outer Python frames share
 * those frames' spans (what a sampling profiler shows; the frames' exact entry and exit are not known) ---- */
struct pyframe_open {
	const char *name;
	int64_t start, end, id;
};
struct pyspan {
	int64_t pid, tid;
	struct pyframe_open f[64]; /* outermost first */
	int n;
};

static void py_close(struct trace *t, struct pyspan *ps, int keep)
{
	while (ps->n > keep) {
		struct pyframe_open *o = &ps->f[--ps->n];

		span_begin(t, "python_function", o->name, ps->pid, ps->tid, o->start, o->end);
		put(t, ", \"args\": {\"Python id\": ");
		put_i(t, o->id);
		put(t, ", \"Python parent id\": ");
		put_i(t, ps->n ? ps->f[ps->n - 1].id : 0);
		put(t, "}}");
	}
}

static int py_track(struct trace *t, int64_t pid, int64_t tid, int64_t start, int64_t end, const struct cprof_stack *s)
{
	struct pyspan *ps = NULL;
	size_t i;
	int k, n, same = 0;

	for (i = 0; i < t->npy; i++)
		if (t->py[i].pid == pid && t->py[i].tid == tid)
			ps = &t->py[i];
	if (ps == NULL) {
		if (cprof_grow(&t->py, &t->cappy, t->npy, sizeof(t->py[0])) < 0)
			return -ENOMEM;
		ps = &t->py[t->npy++];
		memset(ps, 0, sizeof(*ps));
		ps->pid = pid;
		ps->tid = tid;
	}
	n = (int)(s->npy < 64 ? s->npy : 64);
	/* s->py is innermost first; the open frames are outermost first */
	while (same < ps->n && same < n && !strcmp(ps->f[same].name, s->py[s->npy - 1 - same]))
		same++;
	py_close(t, ps, same);
	for (k = 0; k < same; k++)
		ps->f[k].end = end;
	for (k = same; k < n; k++)
		ps->f[ps->n++] = (struct pyframe_open){ .name = s->py[s->npy - 1 - k], .start = start, .end = end,
							 .id = ++t->py_ids };
	return 0;
}

static void py_close_all(struct trace *t)
{
	size_t i;

	for (i = 0; i < t->npy; i++)
		py_close(t, &t->py[i], 0);
}

/* What the hook recorded beyond Kineto's keys; never a key named "stream", which HTA takes for a GPU op. */
static void hooked_extras(struct trace *t, sqlite3_stmt *st)
{
	const char *cls = col_str(st, H_CLASS);

	if (!strcmp(cls, "launch")) {
		arg_s(t, "kernel", kernel_name(t, sqlite3_column_int64(st, H_KNAMEID), col_str(st, H_KNAME)));
		arg_dim3(t, "grid", sqlite3_column_int64(st, H_A0), sqlite3_column_int64(st, H_A1),
			 sqlite3_column_int64(st, H_A2));
		arg_dim3(t, "block", sqlite3_column_int64(st, H_A3), sqlite3_column_int64(st, H_A4),
			 sqlite3_column_int64(st, H_A5));
		arg_i(t, "dynamic shared memory", sqlite3_column_int64(st, H_A6));
	} else if (!strcmp(cls, "gemm")) {
		arg_i(t, "m", sqlite3_column_int64(st, H_A0));
		arg_i(t, "n", sqlite3_column_int64(st, H_A1));
		arg_i(t, "k", sqlite3_column_int64(st, H_A2));
		arg_i(t, "batch", sqlite3_column_int64(st, H_A3));
	} else if (!strcmp(cls, "memcpy")) {
		arg_i(t, "bytes", sqlite3_column_int64(st, H_BYTES));
		arg_i(t, "cudaMemcpyKind", sqlite3_column_int64(st, H_A0));
	} else if (!strcmp(cls, "memset")) {
		arg_i(t, "bytes", sqlite3_column_int64(st, H_BYTES));
		arg_i(t, "value", sqlite3_column_int64(st, H_A0));
	} else if (!strcmp(cls, "memory") && sqlite3_column_type(st, H_BYTES) != SQLITE_NULL) {
		arg_i(t, "bytes", sqlite3_column_int64(st, H_BYTES));
	}
	if (sqlite3_column_type(st, H_STREAM) != SQLITE_NULL &&
	    (!strcmp(cls, "launch") || !strcmp(cls, "gemm") || !strcmp(cls, "memcpy") || !strcmp(cls, "memset") ||
	     !strcmp(cls, "sync")))
		arg_i(t, "cuda stream", sqlite3_column_int64(st, H_STREAM));
	if (sqlite3_column_int64(st, H_RET) != 0)
		arg_i(t, "return value", sqlite3_column_int64(st, H_RET));
	if (sqlite3_column_int64(st, H_NESTED))
		arg_i(t, "nested", 1);
	if (sqlite3_column_type(st, H_STACK) != SQLITE_NULL) {
		const struct cprof_stack *s = cprof_stacks_find(&t->stacks, sqlite3_column_int64(st, H_PROC),
								sqlite3_column_int64(st, H_STACK));

		if (s && s->callsite)
			arg_s(t, "call site", s->callsite);
		if (s && s->ops)
			arg_s(t, "ops", s->ops);
	}
}

/* Every hooked call (cudart and cuBLAS) as Kineto's cuda_runtime span; its correlation is CUPTI's id of the
 * launch it made, so the span, its flow and the GPU op agree, and HTA joins them. */
static int write_hooked(struct trace *t)
{
	sqlite3_stmt *st = NULL;
	int rc, ret;
	char sql[sizeof(hooked_sql) + 32];

	snprintf(sql, sizeof(sql), hooked_sql, t->stacks.n ? "a.stackId" : "NULL");
	if ((ret = prep(t, sql, &st)) < 0)
		return ret;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t proc = sqlite3_column_int64(st, H_PROC), pid = sqlite3_column_int64(st, H_PID);
		int64_t tid = sqlite3_column_int64(st, H_TID), start = sqlite3_column_int64(st, H_START);
		int64_t ext = sqlite3_column_int64(st, H_EXT), ngpu = sqlite3_column_int64(st, H_NGPU);
		const char *name = col_str(st, H_NAME);
		int same = sqlite3_column_type(st, H_XNAME) != SQLITE_NULL && same_api(name, col_str(st, H_XNAME));
		int64_t corr;

		/* a CUPTI id that reached the GPU, else the CUPTI record of this very call, else our own id */
		if (sqlite3_column_type(st, H_GCORR) != SQLITE_NULL)
			corr = corr_id(t, proc, sqlite3_column_int64(st, H_GCORR));
		else if (same)
			corr = corr_id(t, proc, sqlite3_column_int64(st, H_ANYCORR));
		else
			corr = ext;
		span_begin(t, "cuda_runtime", name, pid, tid, start, sqlite3_column_int64(st, H_END));
		put(t, ", \"args\": {\"External id\": ");
		put_i(t, sqlite3_column_type(st, H_OPID) != SQLITE_NULL ? sqlite3_column_int64(st, H_OPID) : ext);
		if (same)
			arg_i(t, "cbid", sqlite3_column_int64(st, H_CBID));
		arg_i(t, "correlation", corr);
		hooked_extras(t, st);
		put(t, "}}");
		if (sqlite3_column_type(st, H_STACK) != SQLITE_NULL) {
			const struct cprof_stack *s = cprof_stacks_find(&t->stacks, proc, sqlite3_column_int64(st, H_STACK));

			if (s && s->npy && (ret = py_track(t, pid, tid, start, sqlite3_column_int64(st, H_END), s)) < 0)
				goto out;
		}
		if (ngpu == 1) {
			flow(t, 's', corr, pid, tid, start);
		} else if (ngpu > 1) {
			/* a graph launch or a library call with several launches: one flow per GPU-bound CUPTI id */
			sqlite3_reset(t->flows);
			sqlite3_bind_int64(t->flows, 1, proc);
			sqlite3_bind_int64(t->flows, 2, ext);
			while ((rc = sqlite3_step(t->flows)) == SQLITE_ROW)
				flow(t, 's', corr_id(t, proc, sqlite3_column_int64(t->flows, 0)), pid, tid, start);
			if ((ret = step_done(t, rc)) < 0)
				goto out;
		}
	}
	ret = step_done(t, rc);
	py_close_all(t);
out:
	sqlite3_finalize(st);
	return ret;
}

/* CUPTI's runtime/driver records. One that is the CUPTI side of a hooked call (joined through our external
 * id, and either the same API or the launch the hooked library call made) is already there as that call;
 * the rest (cuBLAS's internal occupancy queries, driver launches by Triton) are calls no hook saw. */
static int write_api_records(struct trace *t, const char *table, const char *cat)
{
	sqlite3_stmt *st = NULL;
	char sql[1024], name[256];
	int rc, ret;

	snprintf(sql, sizeof(sql),
		 "SELECT r.processId, r.start, r.end, r.correlationId, rn.value, r.cbid, r.threadId,"
		 " coalesce(xo.opId, e.externalId),"
		 " h.extId IS NOT NULL, hn.value, h.tid, g.correlationId IS NOT NULL"
		 " FROM %s r LEFT JOIN StringIds rn ON rn.id = r.nameId"
		 " LEFT JOIN x_ext e ON e.processId = r.processId AND e.correlationId = r.correlationId"
		 " LEFT JOIN x_hook h ON h.processId = e.processId AND h.extId = e.externalId"
		 " LEFT JOIN x_opof xo ON xo.processId = e.processId AND xo.extId = e.externalId"
		 " LEFT JOIN StringIds hn ON hn.id = h.nameId"
		 " LEFT JOIN x_gpu g ON g.processId = r.processId AND g.correlationId = r.correlationId"
		 " ORDER BY r.rowid",
		 table);
	if ((ret = prep(t, sql, &st)) < 0)
		return ret;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t proc = sqlite3_column_int64(st, 0), start = sqlite3_column_int64(st, 1);
		int hooked = sqlite3_column_int(st, 8), to_gpu = sqlite3_column_int(st, 11);
		int64_t pid = proc_pid(t, proc), tid, corr = corr_id(t, proc, sqlite3_column_int64(st, 3));

		if (hooked && (to_gpu || same_api(col_str(st, 4), col_str(st, 9))))
			continue;
		tid = hooked ? sqlite3_column_int64(st, 10) : cupti_tid(t, proc, sqlite3_column_int64(st, 6));
		display_api_name(col_str(st, 4), name, sizeof(name));
		span_begin(t, cat, name, pid, tid, start, sqlite3_column_int64(st, 2));
		put(t, ", \"args\": {");
		if (sqlite3_column_type(st, 7) != SQLITE_NULL) {
			put(t, "\"External id\": ");
			put_i(t, sqlite3_column_int64(st, 7));
			put(t, ", ");
		}
		put(t, "\"cbid\": ");
		put_i(t, sqlite3_column_int64(st, 5));
		arg_i(t, "correlation", corr);
		put(t, "}}");
		if (to_gpu)
			flow(t, 's', corr, pid, tid, start);
	}
	ret = step_done(t, rc);
	sqlite3_finalize(st);
	return ret;
}

/* Columns every GPU op query starts with; the launcher exists when a hooked call or an API record has the id. */
#define GPU_COMMON                                                                                               \
	"o.processId, o.start, o.end, o.deviceId, o.contextId, o.streamId, o.correlationId,"                      \
	" coalesce(xo.opId, e.externalId),"                                                                       \
	" (h.extId IS NOT NULL OR x.correlationId IS NOT NULL)"
#define GPU_JOINS                                                                                                \
	" LEFT JOIN x_ext e ON e.processId = o.processId AND e.correlationId = o.correlationId"                   \
	" LEFT JOIN x_hook h ON h.processId = e.processId AND h.extId = e.externalId"                             \
	" LEFT JOIN x_opof xo ON xo.processId = e.processId AND xo.extId = e.externalId"                         \
	" LEFT JOIN x_api x ON x.processId = o.processId AND x.correlationId = o.correlationId"
enum { G_PROC, G_START, G_END, G_DEV, G_CTX, G_STREAM, G_CORR, G_EXT, G_LAUNCHED, G__N };

enum gpu_kind { GPU_KERNEL, GPU_MEMCPY, GPU_MEMSET };

static const char *memcpy_kind(int64_t k)
{
	static const char *const names[] = { "<unknown>", "HtoD", "DtoH", "HtoA", "AtoH", "AtoA",
					     "AtoD",      "DtoA", "DtoD", "HtoH", "PtoP" };

	return k >= 0 && k < (int64_t)(sizeof(names) / sizeof(names[0])) ? names[k] : "<unknown>";
}

static const char *memory_kind(int64_t k)
{
	static const char *const names[] = { "Unknown", "Pageable", "Pinned", "Device", "Array", "Managed",
					     "Device Static", "Managed Static" };

	return k >= 0 && k < (int64_t)(sizeof(names) / sizeof(names[0])) ? names[k] : "Unrecognized";
}

static void bandwidth(struct trace *t, int64_t bytes, int64_t ns)
{
	put(t, ", \"memory bandwidth (GB/s)\": ");
	if (ns <= 0)
		put(t, "\"N/A\"");
	else
		put_double(t, (double)bytes / (double)ns);
}

static int write_gpu_ops(struct trace *t, enum gpu_kind kind)
{
	static const char *const sql[] = {
		[GPU_KERNEL] = "SELECT " GPU_COMMON ", o.nameId, n.value, o.gridX, o.gridY, o.gridZ, o.blockX, o.blockY,"
			       " o.blockZ, o.registersPerThread, o.staticSharedMemory + o.dynamicSharedMemory"
			       " FROM CUPTI_ACTIVITY_KIND_KERNEL o LEFT JOIN StringIds n ON n.id = o.nameId" GPU_JOINS
			       " ORDER BY o.rowid",
		[GPU_MEMCPY] = "SELECT " GPU_COMMON ", o.bytes, o.copyKind, o.srcKind, o.dstKind"
			       " FROM CUPTI_ACTIVITY_KIND_MEMCPY o" GPU_JOINS " ORDER BY o.rowid",
		[GPU_MEMSET] = "SELECT " GPU_COMMON ", o.bytes, o.memKind FROM CUPTI_ACTIVITY_KIND_MEMSET o" GPU_JOINS
			       " ORDER BY o.rowid",
	};
	static const char *const cats[] = { "kernel", "gpu_memcpy", "gpu_memset" };
	sqlite3_stmt *st = NULL;
	char name[128];
	int rc, ret;

	if ((ret = prep(t, sql[kind], &st)) < 0)
		return ret;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t proc = sqlite3_column_int64(st, G_PROC), start = sqlite3_column_int64(st, G_START);
		int64_t end = sqlite3_column_int64(st, G_END), dev = sqlite3_column_int64(st, G_DEV);
		int64_t stream = sqlite3_column_int64(st, G_STREAM);
		int64_t corr = corr_id(t, proc, sqlite3_column_int64(st, G_CORR));
		const char *label = name;

		if (kind == GPU_KERNEL)
			label = kernel_name(t, sqlite3_column_int64(st, G__N), col_str(st, G__N + 1));
		else if (kind == GPU_MEMCPY)
			snprintf(name, sizeof(name), "Memcpy %s (%s -> %s)",
				 memcpy_kind(sqlite3_column_int64(st, G__N + 1)),
				 memory_kind(sqlite3_column_int64(st, G__N + 2)),
				 memory_kind(sqlite3_column_int64(st, G__N + 3)));
		else
			snprintf(name, sizeof(name), "Memset (%s)", memory_kind(sqlite3_column_int64(st, G__N + 1)));
		span_begin(t, cats[kind], label, dev, stream, start, end);
		put(t, ", \"args\": {");
		if (sqlite3_column_type(st, G_EXT) != SQLITE_NULL) {
			put(t, "\"External id\": ");
			put_i(t, sqlite3_column_int64(st, G_EXT));
			put(t, ", ");
		}
		if (kind == GPU_KERNEL)
			put(t, "\"queued\": 0, "); /* CUPTI's queued timestamp is not recorded; 0 is its "unknown" */
		put(t, "\"device\": ");
		put_i(t, dev);
		arg_i(t, "context", sqlite3_column_int64(st, G_CTX));
		arg_i(t, "stream", stream);
		arg_i(t, "correlation", corr);
		if (kind == GPU_KERNEL) {
			arg_i(t, "registers per thread", sqlite3_column_int64(st, G__N + 8));
			arg_i(t, "shared memory", sqlite3_column_int64(st, G__N + 9));
			arg_dim3(t, "grid", sqlite3_column_int64(st, G__N + 2), sqlite3_column_int64(st, G__N + 3),
				 sqlite3_column_int64(st, G__N + 4));
			arg_dim3(t, "block", sqlite3_column_int64(st, G__N + 5), sqlite3_column_int64(st, G__N + 6),
				 sqlite3_column_int64(st, G__N + 7));
		} else {
			arg_i(t, "bytes", sqlite3_column_int64(st, G__N));
			bandwidth(t, sqlite3_column_int64(st, G__N), end - start);
		}
		put(t, "}}");
		if (sqlite3_column_int(st, G_LAUNCHED))
			flow(t, 'f', corr, dev, stream, start);
	}
	ret = step_done(t, rc);
	sqlite3_finalize(st);
	return ret;
}

static const char *overhead_kind(int64_t k)
{
	/* Kineto's strings for the kinds it knows; CUDA 12+ kinds it calls "Unrecognized" get their own names */
	switch (k) {
	case 0:
		return "Unknown";
	case 1:
		return "Driver Compiler";
	case 1 << 16:
		return "Buffer Flush";
	case 2 << 16:
		return "Instrumentation";
	case 3 << 16:
		return "Resource";
	case 4 << 16:
		return "Runtime Triggered Module Loading";
	case 5 << 16:
		return "Lazy Function Loading";
	case 6 << 16:
		return "Command Buffer Full";
	case 7 << 16:
		return "Activity Buffer Request";
	case 8 << 16:
		return "UVM Activity Init";
	default:
		return "Unrecognized";
	}
}

static int write_overhead(struct trace *t)
{
	sqlite3_stmt *st = NULL;
	int rc, ret;

	ret = prep(t, "SELECT start, end, overheadKind FROM CUPTI_ACTIVITY_KIND_OVERHEAD ORDER BY rowid", &st);
	if (ret < 0)
		return ret;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		span_begin(t, "overhead", overhead_kind(sqlite3_column_int64(st, 2)), -1, 0, sqlite3_column_int64(st, 0),
			   sqlite3_column_int64(st, 1));
		put(t, "}");
	}
	ret = step_done(t, rc);
	sqlite3_finalize(st);
	return ret;
}

/* ---- NVTX: ranges as Kineto's user_annotation spans on their thread, projected onto the GPU lanes as
 * gpu_user_annotation spans; names given to threads and streams name their lanes ---- */

/* %s: what a range never ended is measured up to (cprof_sql_process_end), or nothing when every range ended.
 * x_ops: every GPU op by CUPTI id; x_lcall: the calls that reached the GPU on threads that annotated, by thread
 * and time, so the ranges find theirs through an index instead of a scan each; x_rng: the ranges, ended. */
static const char nvtx_index_sql[] =
	"CREATE TEMP TABLE x_ops(processId INTEGER, correlationId INTEGER, deviceId INTEGER, streamId INTEGER,"
	" start INTEGER, end INTEGER);"
	"INSERT INTO x_ops SELECT processId, correlationId, deviceId, streamId, start, end FROM CUPTI_ACTIVITY_KIND_KERNEL"
	" UNION ALL SELECT processId, correlationId, deviceId, streamId, start, end FROM CUPTI_ACTIVITY_KIND_MEMCPY"
	" UNION ALL SELECT processId, correlationId, deviceId, streamId, start, end FROM CUPTI_ACTIVITY_KIND_MEMSET;"
	"CREATE INDEX temp.x_ops_corr ON x_ops(processId, correlationId);"
	"CREATE TEMP TABLE x_lcall(processId INTEGER, tid INTEGER, start INTEGER, extId INTEGER);"
	"INSERT INTO x_lcall SELECT a.processId, a.tid, a.start, a.correlationId FROM CPROF_API a JOIN x_hsum h"
	" ON h.processId = a.processId AND h.extId = a.correlationId WHERE h.ngpu > 0"
	" AND (a.processId, a.tid) IN (SELECT processId, tid FROM NVTX_EVENTS);"
	"CREATE INDEX temp.x_lcall_t ON x_lcall(processId, tid, start);"
	"CREATE TEMP TABLE x_pend(processId INTEGER PRIMARY KEY, e INTEGER);"
	"%s"
	"CREATE TEMP TABLE x_rng(id INTEGER PRIMARY KEY, processId INTEGER, tid INTEGER, start INTEGER, end INTEGER,"
	" depth INTEGER, textId INTEGER);"
	"INSERT INTO x_rng SELECT n.id, n.processId, n.tid, n.start, max(n.start, coalesce(n.end, p.e, n.start)),"
	" coalesce(n.depth, 0), n.textId FROM NVTX_EVENTS n LEFT JOIN x_pend p ON p.processId = n.processId"
	" WHERE n.eventType IN ('range', 'startend');"
	"CREATE TEMP TABLE x_oprng(id INTEGER PRIMARY KEY, processId INTEGER, tid INTEGER, start INTEGER, end INTEGER,"
	" ended INTEGER);"
	"INSERT INTO x_oprng SELECT r.id, r.processId, r.tid, r.start, r.end, n.end IS NOT NULL FROM x_rng r"
	" JOIN NVTX_EVENTS n ON n.id = r.id WHERE n.categoryId = %lld AND n.eventType = 'range';"
	"CREATE INDEX temp.x_oprng_t ON x_oprng(processId, tid, start);"
	/* the innermost op is the latest-starting one still open at the call */
	"INSERT INTO x_opof SELECT * FROM (SELECT a.processId, a.correlationId, (SELECT r.id FROM x_oprng r"
	"  WHERE r.processId = a.processId AND r.tid = a.tid AND r.start <= a.start AND r.end >= a.start AND r.ended"
	"  ORDER BY r.start DESC LIMIT 1) AS o FROM CPROF_API a WHERE a.correlationId IS NOT NULL"
	"  AND (a.processId, a.tid) IN (SELECT DISTINCT processId, tid FROM x_oprng)) WHERE o IS NOT NULL;";

static int nvtx_index(struct trace *t)
{
	char *sql, ins[1024];
	int ret;

	t->nvtx = cprof_query_int(t->db, "SELECT EXISTS(SELECT 1 FROM NVTX_EVENTS) OR EXISTS(SELECT 1 FROM CPROF_NAMES)", 0) != 0;
	if (!t->nvtx)
		return 0; /* a profile without annotations costs nothing more */
	ins[0] = '\0';
	if (cprof_query_int(t->db, "SELECT EXISTS(SELECT 1 FROM NVTX_EVENTS WHERE end IS NULL AND eventType != 'mark')", 0))
		snprintf(ins, sizeof(ins), "INSERT INTO x_pend %s;", cprof_sql_process_end);
	if (asprintf(&sql, nvtx_index_sql, ins, (long long)CPROF_NVTX_CATEGORY_TORCH_OP) < 0)
		return -ENOMEM;
	ret = exec(t, sql);
	free(sql);
	return ret;
}

static int name_add(struct trace *t, int kind, int64_t pid, int64_t tid, const char *name)
{
	struct lane_name *n;

	if (cprof_grow(&t->names, &t->capnames, t->nnames, sizeof(t->names[0])) < 0)
		return -ENOMEM;
	n = &t->names[t->nnames];
	n->kind = kind;
	n->pid = pid;
	n->tid = tid;
	n->name = strdup(name);
	if (n->name == NULL)
		return -ENOMEM;
	t->nnames++;
	return 0;
}

/* Threads by (pid, tid) as their CPU lanes; streams by the cudaStream_t handle the hooked calls carried, which
 * their GPU ops turn into CUPTI's (device, stream id), the GPU lane (a handle freed and handed out again names
 * the stream it had first). */
static int load_names(struct trace *t)
{
	static const char *const sql[] = {
		"SELECT p.pid, n.key, s.value FROM CPROF_NAMES n JOIN PROCESSES p ON p.id = n.processId"
		" JOIN StringIds s ON s.id = n.nameId WHERE n.kind = 'thread' ORDER BY n.processId, n.key",
		/* the first call on the handle that reached the GPU says where: CPROF_API has no index on stream, and
		 * a scan that stops there is short */
		"SELECT m.lane >> 32, m.lane & 4294967295, m.name FROM (SELECT n.processId AS p, s.value AS name,"
		" (SELECT o.deviceId * 4294967296 + o.streamId FROM CPROF_API a"
		"  CROSS JOIN x_ext e ON e.processId = a.processId AND e.externalId = a.correlationId"
		"  CROSS JOIN x_ops o ON o.processId = e.processId AND o.correlationId = e.correlationId"
		"  WHERE a.processId = n.processId AND a.stream = n.key LIMIT 1) AS lane"
		" FROM CPROF_NAMES n JOIN StringIds s ON s.id = n.nameId WHERE n.kind = 'stream') m"
		" WHERE m.lane IS NOT NULL ORDER BY m.p, m.lane",
	};
	sqlite3_stmt *st = NULL;
	int kind, rc, ret = 0;

	if (!t->nvtx)
		return 0;
	for (kind = NAME_THREAD; kind <= NAME_STREAM; kind++) {
		if ((ret = prep(t, sql[kind], &st)) < 0)
			return ret;
		while ((rc = sqlite3_step(st)) == SQLITE_ROW)
			if ((ret = name_add(t, kind, sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1),
					    col_str(st, 2))) < 0)
				goto out;
		if ((ret = step_done(t, rc)) < 0)
			goto out;
		sqlite3_finalize(st);
		st = NULL;
	}
out:
	sqlite3_finalize(st);
	return ret;
}

/* What NVTX said beyond the name; "External id" pairs a range with its GPU projection, as Kineto does. */
static void nvtx_args(struct trace *t, sqlite3_stmt *st)
{
	put(t, ", \"args\": {\"External id\": ");
	put_i(t, sqlite3_column_int64(st, 0));
	if (sqlite3_column_type(st, 7) != SQLITE_NULL)
		arg_s(t, "domain", col_str(st, 7));
	if (sqlite3_column_type(st, 10) != SQLITE_NULL)
		arg_i(t, "category", sqlite3_column_int64(st, 10));
	if (sqlite3_column_type(st, 11) != SQLITE_NULL)
		arg_i(t, "color", sqlite3_column_int64(st, 11));
	if (sqlite3_column_int(st, 8))
		arg_i(t, "never ended", 1);
	else if (sqlite3_column_type(st, 9) != SQLITE_NULL && sqlite3_column_int64(st, 9) != sqlite3_column_int64(st, 2))
		arg_i(t, "ended on thread", sqlite3_column_int64(st, 9));
	put(t, "}}");
}

static int write_nvtx(struct trace *t)
{
	sqlite3_stmt *st = NULL;
	int rc, ret;

	if (!t->nvtx)
		return 0;
	/* outer ranges first: a viewer nests spans that start together in the order it reads them */
	ret = prep(t,
		   "SELECT n.id, n.processId, n.tid, n.start, coalesce(r.end, n.start), n.eventType,"
		   " coalesce(s.value, '(no message)'), d.value, n.end IS NULL, n.endTid, n.categoryId, n.color"
		   " FROM NVTX_EVENTS n LEFT JOIN x_rng r ON r.id = n.id LEFT JOIN StringIds s ON s.id = n.textId"
		   " LEFT JOIN StringIds d ON d.id = n.domainId ORDER BY n.start, coalesce(n.depth, 0), n.id",
		   &st);
	if (ret < 0)
		return ret;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t pid = proc_pid(t, sqlite3_column_int64(st, 1)), tid = sqlite3_column_int64(st, 2);

		if (!strcmp(col_str(st, 5), "mark")) {
			ev_begin(t);
			put(t, "\"ph\": \"i\", \"s\": \"t\", \"cat\": \"user_annotation\", \"name\": ");
			put_str(t, col_str(st, 6));
			put(t, ", \"pid\": ");
			put_i(t, pid);
			put(t, ", \"tid\": ");
			put_i(t, tid);
			put(t, ", \"ts\": ");
			put_ts(t, sqlite3_column_int64(st, 3));
		} else {
			/* PyTorch's op ranges are Kineto's cpu_op spans */
			int op = sqlite3_column_int64(st, 10) == CPROF_NVTX_CATEGORY_TORCH_OP;

			span_begin(t, op ? "cpu_op" : "user_annotation", col_str(st, 6), pid, tid,
				   sqlite3_column_int64(st, 3), sqlite3_column_int64(st, 4));
		}
		nvtx_args(t, st);
	}
	if ((ret = step_done(t, rc)) < 0)
		goto out;
	sqlite3_finalize(st);
	/* per range and stream, from the first to the last GPU op launched by a call made inside the range on its
	 * thread (Kineto's gpu_user_annotation); the longer span first, so the outer range holds the inner one.
	 * CROSS JOIN fixes the order range -> its calls -> their ops: the TEMP tables have no statistics, and SQLite
	 * left to itself scans every op for every range */
	ret = prep(t,
		   "SELECT r.id, o.deviceId, o.streamId, min(o.start) AS gs, max(o.end) AS ge,"
		   " coalesce(x.value, '(no message)'), r.depth FROM x_rng r CROSS JOIN x_lcall c"
		   " ON c.processId = r.processId AND c.tid = r.tid AND c.start >= r.start AND c.start <= r.end"
		   " CROSS JOIN x_ext e ON e.processId = c.processId AND e.externalId = c.extId"
		   " CROSS JOIN x_ops o ON o.processId = e.processId AND o.correlationId = e.correlationId"
		   " LEFT JOIN StringIds x ON x.id = r.textId WHERE r.id NOT IN (SELECT id FROM x_oprng)"
		   " GROUP BY r.id, o.deviceId, o.streamId ORDER BY gs, ge DESC, r.depth, r.id",
		   &st);
	if (ret < 0)
		return ret;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		span_begin(t, "gpu_user_annotation", col_str(st, 5), sqlite3_column_int64(st, 1), sqlite3_column_int64(st, 2),
			   sqlite3_column_int64(st, 3), sqlite3_column_int64(st, 4));
		put(t, ", \"args\": {\"External id\": ");
		put_i(t, sqlite3_column_int64(st, 0));
		put(t, "}}");
	}
	ret = step_done(t, rc);
out:
	sqlite3_finalize(st);
	return ret;
}

/* Kineto writes every ts relative to a base so a double keeps ns precision; the base is the profile's first
 * timestamp rounded down to a whole second. */
static void choose_base(struct trace *t)
{
	int64_t first = cprof_query_int(t->db,
					"SELECT min(m) FROM (SELECT min(start) AS m FROM CPROF_API"
					" UNION ALL SELECT min(start) FROM CUPTI_ACTIVITY_KIND_RUNTIME"
					" UNION ALL SELECT min(start) FROM CUPTI_ACTIVITY_KIND_DRIVER"
					" UNION ALL SELECT min(start) FROM CUPTI_ACTIVITY_KIND_KERNEL"
					" UNION ALL SELECT min(start) FROM CUPTI_ACTIVITY_KIND_MEMCPY"
					" UNION ALL SELECT min(start) FROM CUPTI_ACTIVITY_KIND_MEMSET"
					" UNION ALL SELECT min(start) FROM CUPTI_ACTIVITY_KIND_OVERHEAD"
					" UNION ALL SELECT min(start) FROM NVTX_EVENTS)",
					-1);

	if (first < 0)
		first = cprof_meta_int(t->db, "created_ns", 0);
	if (first < 0)
		first = 0;
	t->base_ns = first - first % 1000000000;
	t->first_rel_ns = first - t->base_ns;
}

/* --per-rank: TEMP views named like the tables shadow them (unqualified names find temp first), so
 * every query below sees only this rank's processes without knowing it */
static int rank_filter(struct trace *t)
{
	static const char *const tables[] = { "CPROF_API", "THREADS", "CUPTI_ACTIVITY_KIND_KERNEL",
					      "CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET",
					      "CUPTI_ACTIVITY_KIND_RUNTIME", "CUPTI_ACTIVITY_KIND_DRIVER",
					      "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION", "CUPTI_ACTIVITY_KIND_OVERHEAD",
					      "CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION", "NVTX_EVENTS", "CPROF_NAMES",
					      NULL };
	char sql[512];
	int ret, i;

	if (t->rank < 0)
		return 0;
	snprintf(sql, sizeof(sql), "CREATE TEMP VIEW PROCESSES AS SELECT * FROM main.PROCESSES WHERE rank = %lld",
		 (long long)t->rank);
	if ((ret = exec(t, sql)) < 0)
		return ret;
	for (i = 0; tables[i]; i++) {
		if (!cprof_has_table(t->db, tables[i]))
			continue; /* an older profile: shim_missing_tables makes it empty */
		snprintf(sql, sizeof(sql),
			 "CREATE TEMP VIEW %s AS SELECT * FROM main.%s WHERE processId IN"
			 " (SELECT id FROM main.PROCESSES WHERE rank = %lld)",
			 tables[i], tables[i], (long long)t->rank);
		if ((ret = exec(t, sql)) < 0)
			return ret;
	}
	return 0;
}

static int export_trace(struct trace *t)
{
	int ret;

	/* first: changing temp_store drops existing TEMP tables */
	if ((ret = exec(t, "PRAGMA temp_store=FILE")) < 0 || (ret = rank_filter(t)) < 0 ||
	    (ret = shim_missing_tables(t)) < 0 || (ret = exec(t, index_sql)) < 0)
		return ret;
	ret = prep(t,
		   "SELECT e.correlationId FROM x_ext e JOIN x_gpu g"
		   " ON g.processId = e.processId AND g.correlationId = e.correlationId"
		   " WHERE e.processId = ?1 AND e.externalId = ?2 ORDER BY 1",
		   &t->flows);
	if (ret < 0 || (ret = load_procs(t)) < 0 || (ret = load_tidmap(t)) < 0 || (ret = nvtx_index(t)) < 0 ||
	    (ret = load_names(t)) < 0)
		return ret;
	if ((ret = cprof_stacks_load(t->db, &t->stacks)) < 0) {
		pr_err("cannot read the call stacks: %s", sqlite3_errmsg(t->db));
		return ret;
	}
	t->simulated = cprof_meta_int(t->db, "simulated_gpu", 0) == 1;
	choose_base(t);
	write_header(t);
	if ((ret = write_metadata(t)) < 0 || (ret = write_nvtx(t)) < 0 || (ret = write_hooked(t)) < 0 ||
	    (ret = write_api_records(t, "CUPTI_ACTIVITY_KIND_RUNTIME", "cuda_runtime")) < 0 ||
	    (ret = write_api_records(t, "CUPTI_ACTIVITY_KIND_DRIVER", "cuda_driver")) < 0 ||
	    (ret = write_gpu_ops(t, GPU_KERNEL)) < 0 || (ret = write_gpu_ops(t, GPU_MEMCPY)) < 0 ||
	    (ret = write_gpu_ops(t, GPU_MEMSET)) < 0 || (ret = write_overhead(t)) < 0)
		return ret;
	put(t, "\n  ]\n}\n");
	return 0;
}


static void trace_free(struct trace *t)
{
	size_t i;

	for (i = 0; i < t->ndm; i++)
		free(t->dm[i].text);
	free(t->dm);
	free(t->procs);
	free(t->tidmap);
	free(t->seen_threads);
	free(t->py);
	for (i = 0; i < t->nnames; i++)
		free(t->names[i].name);
	free(t->names);
	cprof_stacks_free(&t->stacks);
	sqlite3_finalize(t->flows);
	sqlite3_close(t->db);
}

/* One export, profile to file; rank >= 0 keeps that rank's processes only. Returns an exit code. */
static int export_to(const char *profile, const char *out, int force, int64_t rank, int64_t world)
{
	struct trace t = { .first_event = 1, .rank = rank, .world = world };
	int err, ret = CPROF_EXIT_USAGE;

	if (!force && access(out, F_OK) == 0) {
		pr_err("%s exists; -f overwrites it", out);
		return CPROF_EXIT_USAGE;
	}
	t.db = cprof_profile_open(profile);
	if (t.db == NULL)
		goto out;
	if ((err = cprof_out_open(out, &t.f)) < 0) {
		pr_err("%s: cannot write next to it: %s", out, strerror(-err));
		goto out;
	}
	if (export_trace(&t) < 0) {
		/* export_trace said what failed */
		cprof_out_abort(t.f);
		goto out;
	}
	err = cprof_out_finish(t.f, out, force);
	if (err == -EEXIST) {
		pr_err("%s exists; -f overwrites it", out);
		goto out;
	} else if (err < 0) {
		pr_err("%s: write failed: %s", out, strerror(-err));
		goto out;
	}
	pr_dbg("%s: %llu events", out, (unsigned long long)t.events);
	ret = CPROF_EXIT_OK;
out:
	trace_free(&t);
	return ret;
}

/* --per-rank DIR: DIR/rank-N.json for every rank the profile's processes carry */
static int export_ranks(const char *profile, const char *dir, int force)
{
	sqlite3 *db = cprof_profile_open(profile);
	sqlite3_stmt *st = NULL;
	int64_t ranks[4096], world = 0;
	size_t n = 0, i;
	int ret = CPROF_EXIT_USAGE;

	if (db == NULL)
		return CPROF_EXIT_USAGE;
	if (sqlite3_prepare_v2(db, "SELECT DISTINCT rank FROM PROCESSES WHERE rank IS NOT NULL ORDER BY rank", -1, &st,
			       NULL) != SQLITE_OK) {
		pr_err("%s: cannot read its processes: %s", profile, sqlite3_errmsg(db));
		goto out;
	}
	while (sqlite3_step(st) == SQLITE_ROW && n < sizeof(ranks) / sizeof(ranks[0]))
		ranks[n++] = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	st = NULL;
	if (n == 0) {
		pr_err("%s: no process has a rank (RANK, OMPI_COMM_WORLD_RANK, PMI_RANK or SLURM_PROCID); use -o", profile);
		goto out;
	}
	/* the world is what the launcher said, or at least every rank that showed up */
	if (sqlite3_prepare_v2(db, "SELECT max(worldSize) FROM PROCESSES", -1, &st, NULL) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW)
		world = sqlite3_column_int64(st, 0);
	if (world < (int64_t)n)
		world = (int64_t)n;
	if (mkdir(dir, 0777) < 0 && errno != EEXIST) {
		pr_err("%s: cannot create it: %s", dir, strerror(errno));
		goto out;
	}
	for (i = 0; i < n; i++) {
		char path[PATH_MAX];

		if (snprintf(path, sizeof(path), "%s/rank-%lld.json", dir, (long long)ranks[i]) >= (int)sizeof(path)) {
			pr_err("%s: path too long", dir);
			goto out;
		}
		if ((ret = export_to(profile, path, force, ranks[i], world)) != CPROF_EXIT_OK)
			goto out;
	}
	ret = CPROF_EXIT_OK;
out:
	sqlite3_finalize(st);
	sqlite3_close(db);
	return ret;
}

int cmd_trace(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "per-rank", required_argument, NULL, 'r' },
		{ "force", no_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *out = NULL, *dir = NULL;
	int opt, force = 0;

	while ((opt = getopt_long(argc, argv, "o:fh", opts, NULL)) != -1) {
		switch (opt) {
		case 'o':
			out = optarg;
			break;
		case 'r':
			dir = optarg;
			break;
		case 'f':
			force = 1;
			break;
		case 'h':
			usage(stdout);
			return CPROF_EXIT_OK;
		default:
			usage(stderr);
			return CPROF_EXIT_USAGE;
		}
	}
	if (optind != argc - 1 || (out == NULL) == (dir == NULL) || (out && *out == '\0') || (dir && *dir == '\0')) {
		pr_err("%s (cprof trace --help)", optind >= argc ? "no profile given" :
						  optind < argc - 1 ? "more than one profile given" :
						  out && dir ? "-o and --per-rank exclude each other" :
								      "no output given: -o TRACE.json or --per-rank DIR");
		return CPROF_EXIT_USAGE;
	}
	return dir ? export_ranks(argv[optind], dir, force) : export_to(argv[optind], out, force, -1, 1);
}

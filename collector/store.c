/* SQLite schema and writes of the profile; names follow nsys's export where they fit (StringIds, ...). */
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>

#include <sqlite3.h>

#define PR_FMT "cprofd: store"
#include "common/api.h"
#include "common/clock.h"
#include "common/cuda-errors.h"
#include "common/ending.h"
#include "common/log.h"
#include "common/schema.h"
#include "common/shquote.h"
#include "common/version.h"
#include "collector/store.h"
#include "collector/symbolize.h"

#define COMMIT_ROWS 50000
#define COMMIT_NS   200000000ull /* a killed collector loses at most this much */

enum { ST_API, ST_THREAD, ST_PROC, ST_PROC_END, ST_STR_INS, ST_STR_SEL, ST_META, ST_DIAG, ST_KERNEL, ST_MEMCPY, ST_MEMSET,
       ST_RUNTIME, ST_DRIVER, ST_SYNC, ST_OVERHEAD, ST_EXTCORR, ST_STATUS, ST_LOST, ST_COST, ST_COUNT, ST_FRAME, ST_CRASH,
       ST_CRASH_CALL, ST__N };
static const char *const stmt_sql[ST__N] = {
	[ST_API] = "INSERT INTO CPROF_API(processId, pid, tid, start, end, correlationId, nameId, class,"
		   " returnValue, nested, kernelNameId, stream, bytes, ptr, a0, a1, a2, a3, a4, a5, a6, a7, stackId,"
		   " stackInherited) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
	[ST_PROC] = "INSERT INTO PROCESSES(pid, ppid, host, exe, argv, rank, localRank, worldSize, startNs,"
		    " clock, wireVersion, forked, simulatedGpu) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?)",
	[ST_THREAD] = "INSERT OR REPLACE INTO THREADS VALUES(?,?,?,?,?)",
	[ST_PROC_END] = "UPDATE PROCESSES SET endNs=?, byeReason=?, eventsEmitted=?, eventsRecorded=?,"
			" lostEvents=?, frames=?, seqGaps=? WHERE id=?",
	[ST_STR_INS] = "INSERT OR IGNORE INTO StringIds(value) VALUES(?)",
	[ST_STR_SEL] = "SELECT id FROM StringIds WHERE value=?",
	[ST_META] = "INSERT OR REPLACE INTO META(key, value) VALUES(?, ?)",
	[ST_DIAG] = "INSERT INTO DIAGNOSTICS(timeNs, pid, message) VALUES(?,?,?)",
	[ST_KERNEL] = "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
	[ST_MEMCPY] = "INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES(?,?,?,?,?,?,?,?,?,?,?,?)",
	[ST_MEMSET] = "INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET VALUES(?,?,?,?,?,?,?,?,?,?,?)",
	[ST_RUNTIME] = "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES(?,?,?,?,?,?,?,?)",
	[ST_DRIVER] = "INSERT INTO CUPTI_ACTIVITY_KIND_DRIVER VALUES(?,?,?,?,?,?,?,?)",
	[ST_SYNC] = "INSERT INTO CUPTI_ACTIVITY_KIND_SYNCHRONIZATION VALUES(?,?,?,?,?,?,?,?,?)",
	[ST_OVERHEAD] = "INSERT INTO CUPTI_ACTIVITY_KIND_OVERHEAD VALUES(?,?,?,?,?,?,?,?,?)",
	[ST_EXTCORR] = "INSERT INTO CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION VALUES(?,?,?,?)",
	[ST_STATUS] = "INSERT INTO CPROF_STATUS VALUES(?,?,?,?,?,?)",
	[ST_LOST] = "INSERT INTO CPROF_LOST VALUES(?,?,?,?,?)",
	[ST_COST] = "INSERT INTO CPROF_COST VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
	[ST_COUNT] = "INSERT INTO CPROF_API_COUNTS VALUES(?,?,?,?,?) ON CONFLICT(processId, nameId) DO UPDATE SET"
		     " timeNs = excluded.timeNs, calls = max(calls, excluded.calls)",
	[ST_CRASH] = "INSERT INTO CPROF_CRASH VALUES(?,?,?,?,?,?,?,?,?)",
	[ST_CRASH_CALL] = "INSERT INTO CPROF_CRASH_CALLS VALUES(?,?,?,?,?,?,?)",
	/* OR IGNORE: a stack sent twice (a frame requeued after a full pipe) is the same stack */
	[ST_FRAME] = "INSERT OR IGNORE INTO CPROF_STACK_FRAMES(processId, stackId, level, kind, moduleId, offset,"
		     " fileId, funcId, line) VALUES(?,?,?,?,?,?,?,?,?)",
};

/* Rows of the big tables wait here and go in BATCH_ROWS at a time through one multi-row INSERT: SQLite's
 * cost per statement run (cursor set-up, halt, reset) is then paid once per batch, not once per row. A
 * commit writes what waits first, so what is committed is all that came before it. */
#define BATCH_ROWS 32
#define BATCH_COLS 24

enum { B_API, B_KERNEL, B_MEMCPY, B_MEMSET, B_RUNTIME, B_DRIVER, B_SYNC, B_OVERHEAD, B_EXTCORR, B__N };

struct batch {
	int single;   /* the one-row statement (ST_*), for what is left at a commit */
	int ncols;
	int text_col; /* 1-based column bound as the API class name its value numbers; 0: none */
	int n;
	sqlite3_stmt *multi;
	uint32_t nulls[BATCH_ROWS]; /* bit c: column c+1 is NULL */
	int64_t v[BATCH_ROWS][BATCH_COLS];
	/* what multi's parameters hold now (a reset keeps them): a value bound there already is not bound
	 * again, and most columns of a call repeat the previous batch's (process, class, arguments, NULLs) */
	int bound;
	uint32_t bound_nulls[BATCH_ROWS];
	int64_t bound_v[BATCH_ROWS][BATCH_COLS];
};

static const struct {
	int single, ncols, text_col;
} batch_def[B__N] = {
	[B_API] = { ST_API, 24, 8 },          [B_KERNEL] = { ST_KERNEL, 20, 0 }, [B_MEMCPY] = { ST_MEMCPY, 12, 0 },
	[B_MEMSET] = { ST_MEMSET, 11, 0 },    [B_RUNTIME] = { ST_RUNTIME, 8, 0 }, [B_DRIVER] = { ST_DRIVER, 8, 0 },
	[B_SYNC] = { ST_SYNC, 9, 0 },         [B_OVERHEAD] = { ST_OVERHEAD, 9, 0 },
	[B_EXTCORR] = { ST_EXTCORR, 4, 0 },
};

/* THREADS, summed up as the rows go in (a GROUP BY over CPROF_API at the end cost 0.7 s per million calls,
 * all of it after the target's exit). pending_*: the open transaction's rows, kept apart so that a rolled
 * back transaction is not counted. */
struct thread_sum {
	int64_t proc_id, tid;
	int64_t first, last, calls;
	int64_t pending_first, pending_last, pending_calls;
	/* the ending's CUDA error (common/ending.h), kept as the rows go in: the start of the thread's last
	 * successful outermost call, and the first failing one since (a thread's outermost calls come in order) */
	int64_t ok_start;
	int32_t run_ret;
	uint16_t run_api;
	uint8_t has_ok, has_run;
};

/* What common/ending.h's query found through the api_start index, kept per process (by PROCESSES.id) as the
 * rows go in instead (issue 32: the index cost every call a B-tree insert, for one query per process that
 * ended abnormally): the keys (start, order stored, which is id order) of its last END_OUTER outermost
 * calls, a min-heap (calls of several threads come out of start order), and its latest failing one. */
#define END_OUTER 1000
struct end_key {
	int64_t start;
	uint64_t seq;
};
struct end_proc {
	struct end_key *heap;
	uint32_t n, cap;
	struct end_key fail;
	int64_t fail_tid;
	int has_fail;
};

/* cprof info's call totals (by the program, inside libraries, seen only by CUPTI), counted as the rows go in
 * so that cprof-run's summary need not load the profile (issue 32). They are the report's totals
 * (report/model/tables.c) only under conditions checked here; when one fails (a driver record, CUPTI's
 * records out of the order it writes them: an external id before the API record it annotates, a hooked
 * library call whose runtime records came too long before it), the profile gets none and cprof info counts
 * from the rows, as before. */
#define SPLIT_PENDING 256
#define SPLIT_RECENT  512     /* runtime records seen inside a hooked call not (yet) known as a library's */
#define SPLIT_LIBS    (1 << 18) /* hooked library calls kept: cuBLAS's, the driver API's */
#define SPLIT_SEEN    4096    /* runtime records remembered: the furthest out of id order one may come */
struct call_split {
	int64_t program, nested, cupti_only, in_libs;
	int inexact;
	/* external ids (kind CUSTOM2) waiting for their API record: (process, CUPTI correlation id, external id) */
	int64_t pend[SPLIT_PENDING][3];
	int npend;
	/* per PROCESSES.id: the highest CUPTI id that left seen[] (an id at or below it cannot be told new), and
	 * the highest external id that left recent[] unclaimed */
	int64_t (*last)[2];
	size_t nlast;
	/* the hooked library calls by (process, our correlation id), open addressing, process 0 = empty */
	int64_t (*libs)[2];
	size_t nlibs, libs_cap;
	/* the last named runtime records with an external id of no library call known then: (process, id,
	 * records); the library call they belong to may come after them */
	int64_t recent[SPLIT_RECENT][3];
	size_t nrecent, recent_head;
	/* the last runtime records' (process, CUPTI id), a FIFO with a hash of it (slot: FIFO index + 1, 0 empty):
	 * CUPTI gives an id at a call's start and writes the record at its end, so with several threads the
	 * records come out of id order; a record sent twice is told from a late one by this set, not by order */
	int64_t seen[SPLIT_SEEN][2];
	size_t nseen, seen_head;
	uint32_t seen_slot[2 * SPLIT_SEEN];
	uint8_t api_lib[CPROF_API__COUNT]; /* a library's entry point (cuBLAS, the driver API), not the runtime's */
};

static int library_api(const char *api);
static void split_call(struct call_split *c, int64_t proc_id, const struct cprof_wire_api *ev);

struct cprof_store {
	sqlite3 *db;
	struct call_split split;
	int lock_fd; /* the file as created, flock'ed shared while we write it: another cprof-run -f keeps off */
	struct thread_sum *threads;
	size_t nthreads, threads_cap, last_thread;
	/* (proc_id, tid) -> index + 1 in threads, open addressing at most half full, and the threads with calls
	 * in the open transaction: a run of 160k short processes made both a scan of every thread so far */
	uint32_t *thidx;
	size_t thidx_cap;
	uint32_t *pending;
	size_t npending, pending_cap;
	sqlite3_stmt *st[ST__N];
	struct batch batch[B__N];
	int64_t api_name_id[CPROF_API__COUNT];
	struct end_proc *endp; /* by PROCESSES.id */
	size_t nendp;
	uint64_t api_seq;
	int end_inexact; /* out of memory once: the ending's query is run instead */
	int in_txn;
	uint64_t txn_rows;
	uint64_t txn_start_ns;
	uint64_t rows;
	int simulated;
	int threads_done;
};

static int db_err(struct cprof_store *s, const char *what)
{
	pr_err("%s: %s", what, sqlite3_errmsg(s->db));
	return -EIO;
}

static int exec(struct cprof_store *s, const char *sql)
{
	char *msg = NULL;

	if (sqlite3_exec(s->db, sql, NULL, NULL, &msg) != SQLITE_OK) {
		pr_err("%s", msg ? msg : "sqlite error");
		sqlite3_free(msg);
		return -EIO;
	}
	return 0;
}

/* "INSERT ... VALUES(?,...)" of one row made into BATCH_ROWS rows. */
static int batch_prepare(struct cprof_store *s, struct batch *b, const char *one)
{
	const char *values = strstr(one, "VALUES(");
	size_t head = values ? (size_t)(values - one) + 6 : 0, group = 2 * (size_t)b->ncols + 1;
	char *sql = values ? malloc(head + BATCH_ROWS * (group + 1) + 1) : NULL;
	char *p;
	int i, c, ret = 0;

	if (sql == NULL)
		return -ENOMEM;
	memcpy(sql, one, head);
	p = sql + head;
	for (i = 0; i < BATCH_ROWS; i++) {
		*p++ = i ? ',' : ' ';
		*p++ = '(';
		for (c = 0; c < b->ncols; c++) {
			*p++ = '?';
			*p++ = c + 1 < b->ncols ? ',' : ')';
		}
	}
	*p = '\0';
	if (sqlite3_prepare_v3(s->db, sql, -1, SQLITE_PREPARE_PERSISTENT, &b->multi, NULL) != SQLITE_OK)
		ret = db_err(s, "prepare batch");
	free(sql);
	return ret;
}

static void batch_bind(sqlite3_stmt *st, int first, const struct batch *b, int row)
{
	int c;

	for (c = 0; c < b->ncols; c++) {
		if (b->nulls[row] & (1u << c))
			sqlite3_bind_null(st, first + c);
		else if (c + 1 == b->text_col)
			sqlite3_bind_text(st, first + c, cprof_api_class_name((int)b->v[row][c]), -1, SQLITE_STATIC);
		else
			sqlite3_bind_int64(st, first + c, b->v[row][c]);
	}
}

/* Row i of b into the multi-row statement's i-th group, binding only what differs from what is there. */
static void batch_bind_changed(sqlite3_stmt *st, struct batch *b, int row)
{
	int c, first = 1 + row * b->ncols;
	uint32_t nulls = b->nulls[row];

	if (!b->bound) {
		batch_bind(st, first, b, row);
	} else {
		for (c = 0; c < b->ncols; c++) {
			uint32_t bit = 1u << c;

			if ((nulls & bit) ? (b->bound_nulls[row] & bit) != 0
					  : !(b->bound_nulls[row] & bit) && b->v[row][c] == b->bound_v[row][c])
				continue;
			if (nulls & bit)
				sqlite3_bind_null(st, first + c);
			else if (c + 1 == b->text_col)
				sqlite3_bind_text(st, first + c, cprof_api_class_name((int)b->v[row][c]), -1, SQLITE_STATIC);
			else
				sqlite3_bind_int64(st, first + c, b->v[row][c]);
		}
	}
	b->bound_nulls[row] = nulls;
	memcpy(b->bound_v[row], b->v[row], (size_t)b->ncols * sizeof(b->v[row][0]));
}

/* Writes the rows waiting in b: a full batch in one statement, a partial one (at a commit) row by row. */
static int batch_flush(struct cprof_store *s, struct batch *b)
{
	sqlite3_stmt *st;
	int i, ret = 0;

	if (b->n == BATCH_ROWS) {
		st = b->multi;
		for (i = 0; i < BATCH_ROWS; i++)
			batch_bind_changed(st, b, i);
		b->bound = 1;
		if (sqlite3_step(st) != SQLITE_DONE)
			ret = db_err(s, "insert rows");
		sqlite3_reset(st);
	} else {
		st = s->st[b->single];
		for (i = 0; i < b->n && ret == 0; i++) {
			batch_bind(st, 1, b, i);
			if (sqlite3_step(st) != SQLITE_DONE)
				ret = db_err(s, "insert row");
			sqlite3_reset(st);
		}
	}
	b->n = 0;
	return ret;
}

static int flush_all(struct cprof_store *s)
{
	int i, ret = 0;

	for (i = 0; i < B__N; i++)
		if (s->batch[i].n && batch_flush(s, &s->batch[i]) < 0)
			ret = -EIO;
	return ret;
}

static int begin(struct cprof_store *s);

/* a (process, key) pair's hash, for the open-addressing tables below (threads, library calls, CUPTI ids) */
static inline size_t pair_hash(int64_t proc_id, int64_t x)
{
	return (size_t)(((uint64_t)proc_id * 0x9e3779b97f4a7c15ull) ^ ((uint64_t)x * 2654435761u));
}

static size_t thread_slot(const struct cprof_store *s, int64_t proc_id, int64_t tid)
{
	size_t mask = s->thidx_cap - 1, i = pair_hash(proc_id, tid) & mask;

	while (s->thidx[i] && (s->threads[s->thidx[i] - 1].tid != tid || s->threads[s->thidx[i] - 1].proc_id != proc_id))
		i = (i + 1) & mask;
	return i;
}

static int thread_index_grow(struct cprof_store *s)
{
	size_t cap = s->thidx_cap ? s->thidx_cap * 2 : 64, old = s->thidx_cap, i;
	uint32_t *o = s->thidx, *n = calloc(cap, sizeof(*n));

	if (n == NULL)
		return -ENOMEM;
	s->thidx = n;
	s->thidx_cap = cap;
	for (i = 0; i < old; i++)
		if (o[i])
			s->thidx[thread_slot(s, s->threads[o[i] - 1].proc_id, s->threads[o[i] - 1].tid)] = o[i];
	free(o);
	return 0;
}

/* The running sums of thread (proc_id, tid); NULL when out of memory. */
static struct thread_sum *thread_sum(struct cprof_store *s, int64_t proc_id, int64_t tid)
{
	struct thread_sum *t;
	size_t slot;

	/* calls come in runs from one thread */
	if (s->last_thread < s->nthreads && s->threads[s->last_thread].tid == tid &&
	    s->threads[s->last_thread].proc_id == proc_id)
		return &s->threads[s->last_thread];
	if (s->thidx_cap) {
		slot = thread_slot(s, proc_id, tid);
		if (s->thidx[slot]) {
			s->last_thread = s->thidx[slot] - 1;
			return &s->threads[s->last_thread];
		}
	}
	if (2 * (s->nthreads + 1) > s->thidx_cap && thread_index_grow(s) < 0)
		return NULL;
	if (s->nthreads == s->threads_cap) {
		size_t cap = s->threads_cap ? s->threads_cap * 2 : 16;

		t = realloc(s->threads, cap * sizeof(*t));
		if (t == NULL)
			return NULL;
		s->threads = t;
		s->threads_cap = cap;
	}
	t = &s->threads[s->nthreads];
	memset(t, 0, sizeof(*t));
	t->proc_id = proc_id;
	t->tid = tid;
	s->thidx[thread_slot(s, proc_id, tid)] = (uint32_t)(s->nthreads + 1);
	s->last_thread = s->nthreads++;
	return t;
}

/* The open transaction committed (keep its calls) or rolled back (forget them). */
static void threads_settle(struct cprof_store *s, int committed)
{
	size_t i;

	for (i = 0; i < s->npending; i++) {
		struct thread_sum *t = &s->threads[s->pending[i]];

		if (committed && t->pending_calls) {
			if (t->calls == 0 || t->pending_first < t->first)
				t->first = t->pending_first;
			if (t->calls == 0 || t->pending_last > t->last)
				t->last = t->pending_last;
			t->calls += t->pending_calls;
		}
		t->pending_calls = 0;
	}
	s->npending = 0;
}

/* The next row of b's table, to be filled in (all columns, nulls[] as well). */
static int64_t *batch_row(struct cprof_store *s, struct batch *b, uint32_t **nulls)
{
	if (begin(s) < 0)
		return NULL;
	s->rows++;
	s->txn_rows++;
	*nulls = &b->nulls[b->n];
	**nulls = 0;
	return b->v[b->n];
}

/* The row batch_row handed out is complete. */
static int batch_done(struct cprof_store *s, struct batch *b)
{
	return ++b->n == BATCH_ROWS ? batch_flush(s, b) : 0;
}

static int begin(struct cprof_store *s)
{
	if (s->in_txn)
		return 0;
	if (exec(s, "BEGIN") < 0)
		return -EIO;
	s->in_txn = 1;
	s->txn_rows = 0;
	s->txn_start_ns = cprof_now_ns();
	return 0;
}

struct sqlite3 *cprof_store_db(struct cprof_store *s)
{
	return s->db;
}

int cprof_store_begin(struct cprof_store *s, unsigned rows)
{
	if (begin(s) < 0)
		return -EIO;
	s->txn_rows += rows;
	s->rows += rows;
	return 0;
}

int cprof_store_commit(struct cprof_store *s, int force)
{
	if (!s->in_txn)
		return 0;
	if (!force && s->txn_rows < COMMIT_ROWS && cprof_now_ns() - s->txn_start_ns < COMMIT_NS)
		return 0;
	if (flush_all(s) < 0)
		return -EIO;
	s->in_txn = 0;
	if (exec(s, "COMMIT") < 0)
		return -EIO;
	threads_settle(s, 1);
	return 0;
}

int cprof_store_string(struct cprof_store *s, const char *text, size_t len, int64_t *global_id)
{
	sqlite3_stmt *ins = s->st[ST_STR_INS], *sel = s->st[ST_STR_SEL];
	int ret = 0;

	if (begin(s) < 0)
		return -EIO;
	sqlite3_bind_text(ins, 1, text, (int)len, SQLITE_TRANSIENT);
	if (sqlite3_step(ins) != SQLITE_DONE)
		ret = db_err(s, "insert string");
	sqlite3_reset(ins);
	if (ret < 0)
		return ret;
	if (sqlite3_changes(s->db) == 1) {
		*global_id = sqlite3_last_insert_rowid(s->db);
		return 0;
	}
	sqlite3_bind_text(sel, 1, text, (int)len, SQLITE_TRANSIENT);
	if (sqlite3_step(sel) == SQLITE_ROW)
		*global_id = sqlite3_column_int64(sel, 0);
	else
		ret = db_err(s, "find string");
	sqlite3_reset(sel);
	return ret;
}

int cprof_store_meta(struct cprof_store *s, const char *key, const char *value)
{
	sqlite3_stmt *st = s->st[ST_META];
	int ret = 0;

	if (begin(s) < 0)
		return -EIO;
	sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, value, -1, SQLITE_TRANSIENT);
	if (sqlite3_step(st) != SQLITE_DONE)
		ret = db_err(s, "meta");
	sqlite3_reset(st);
	return ret;
}

int cprof_store_meta_int(struct cprof_store *s, const char *key, int64_t value)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%lld", (long long)value);
	return cprof_store_meta(s, key, buf);
}

int cprof_store_open(struct cprof_store **out, const char *path)
{
	struct cprof_store *s = calloc(1, sizeof(*s));
	int ret = -EIO, fd, i;

	if (s == NULL)
		return -ENOMEM;
	/* profile files are private: create 0600 before SQLite opens it. O_EXCL: a file or a symlink planted
	 * at the path is refused, never followed or overwritten */
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		ret = -errno;
		pr_err("cannot create %s: %s", path, strerror(errno));
		goto out_free;
	}
	/* 0600 whatever the umask (a umask of 0777 would leave a file even we cannot open) */
	if (fchmod(fd, 0600) < 0)
		pr_warn("cannot set the mode of %s: %s", path, strerror(errno));
	/* flock, not fcntl: SQLite's own locks on the file are fcntl locks, independent of this one */
	if (flock(fd, LOCK_SH) < 0)
		pr_warn("cannot lock %s: %s", path, strerror(errno));
	s->lock_fd = fd;
	/* SQLite's memory statistics take a mutex and a counter update on every allocation; cprofd reads none.
	 * Refused (SQLITE_MISUSE, harmless) once SQLite is initialised: then it keeps them */
	sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
	/* NOFOLLOW: a symlink swapped in after the create, or planted at the -wal/-shm names, is refused */
	/* one thread uses this connection: no per-call mutex (8% of cprofd at 500k events/s) */
	if (sqlite3_open_v2(path, &s->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOFOLLOW | SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK) {
		pr_err("cannot open %s: %s", path, s->db ? sqlite3_errmsg(s->db) : "out of memory");
		/* the empty file just created (O_EXCL: ours) would block the next run at this path */
		unlink(path);
		goto out_close;
	}
	/* no index but the tables' keys (issue 32): the ending's look-ups that walked back on api_start run on
	 * state kept as the rows go in (end_note) and, in cprof, on the model's arrays; built after the run
	 * instead, an index cost 0.4 s per million calls after the target's exit, kept up, a B-tree insert
	 * per row. Profiles that have them (api_start, ext_ext, k_corr, and the eight before) read the same. */
	if (exec(s, cprof_schema_sql) < 0)
		goto out_close;
	for (i = 0; i < ST__N; i++) {
		if (sqlite3_prepare_v3(s->db, stmt_sql[i], -1, SQLITE_PREPARE_PERSISTENT, &s->st[i], NULL) != SQLITE_OK) {
			db_err(s, stmt_sql[i]);
			goto out_close;
		}
	}
	for (i = 0; i < B__N; i++) {
		struct batch *b = &s->batch[i];

		b->single = batch_def[i].single;
		b->ncols = batch_def[i].ncols;
		b->text_col = batch_def[i].text_col;
		if (batch_prepare(s, b, stmt_sql[b->single]) < 0)
			goto out_close;
	}
	for (i = 1; i < CPROF_API__COUNT; i++) {
		const char *name = cprof_api_name(i);

		s->split.api_lib[i] = (uint8_t)library_api(name);
		if (cprof_store_string(s, name, strlen(name), &s->api_name_id[i]) < 0)
			goto out_close;
	}
	if (cprof_store_meta(s, "schema", CPROF_PROFILE_SCHEMA) < 0 ||
	    cprof_store_meta(s, "cprof_version", CPROF_VERSION) < 0 ||
	    cprof_store_meta_int(s, "wire_version", CPROF_WIRE_VERSION) < 0 ||
	    cprof_store_meta(s, "clock", "CLOCK_REALTIME") < 0 ||
	    cprof_store_meta_int(s, "created_ns", (int64_t)cprof_now_ns()) < 0 ||
	    cprof_store_meta(s, "complete", "0") < 0 || cprof_store_meta(s, "finalised", "0") < 0 ||
	    cprof_store_meta(s, "incomplete_reason",
			     "collector did not finish (killed, out of disk space, or still running)") < 0 ||
	    cprof_store_commit(s, 1) < 0)
		goto out_close;
	*out = s;
	return 0;
out_close:
	for (i = 0; i < ST__N; i++)
		sqlite3_finalize(s->st[i]);
	for (i = 0; i < B__N; i++)
		sqlite3_finalize(s->batch[i].multi);
	sqlite3_close(s->db);
	close(s->lock_fd);
out_free:
	free(s);
	return ret;
}

int64_t cprof_store_bytes(struct cprof_store *s)
{
	sqlite3_stmt *st = NULL;
	int64_t pages = -1, size = -1;

	if (flush_all(s) < 0)
		return -EIO;
	if (sqlite3_prepare_v2(s->db, "SELECT page_count, page_size FROM pragma_page_count, pragma_page_size", -1, &st,
			       NULL) != SQLITE_OK)
		return db_err(s, "page count");
	if (sqlite3_step(st) == SQLITE_ROW) {
		pages = sqlite3_column_int64(st, 0);
		size = sqlite3_column_int64(st, 1);
	}
	sqlite3_finalize(st);
	return pages < 0 ? -EIO : pages * size;
}

/* A window's inner bounds (capture-on, capture-off), between which every call cprof passed through had
 * reached CUDA, for drop_edge_orphans. */
struct inner_window {
	int64_t proc;
	uint64_t start, end;
};
struct inner_windows {
	struct inner_window *w;
	size_t n, cap;
};

/* One window of a process; one that --max-size cut short ends at the cut. Its row is its inner bounds (0: not known,
 * its own), kept in *in for a process's window: every call made wholly inside them was recorded, while its outer
 * ones (capture-start, capture-stop) hold CUPTI's switches, during which calls are passed through (preload/capture.c;
 * a launch 90 us before capture-stop went unrecorded inside the outer window, CI 2026-12-07). */
static int window_row(sqlite3_stmt *ins, sqlite3_value *proc, sqlite3_value *pid, int number, uint64_t start, uint64_t end,
		      uint64_t cut_ns, const char *why, const char *end_why, uint64_t inner_start, uint64_t inner_end,
		      struct inner_windows *in)
{
	int ret = 0;

	/* an old preload sent no inner bounds; a stray one outside the window is not believed */
	if (inner_start >= start && inner_start <= end)
		start = inner_start;
	if (inner_end >= start && inner_end <= end)
		end = inner_end;
	if (cut_ns && cut_ns < end) {
		end = cut_ns > start ? cut_ns : start;
		end_why = "max-size reached";
	}
	if (proc && in) {
		struct inner_window *w;

		if (in->n == in->cap) {
			size_t cap = in->cap ? in->cap * 2 : 8;

			if ((w = realloc(in->w, cap * sizeof(*w))) == NULL)
				return -ENOMEM;
			in->w = w;
			in->cap = cap;
		}
		w = &in->w[in->n++];
		w->proc = sqlite3_value_int64(proc);
		w->start = start;
		w->end = end;
	}
	if (proc)
		sqlite3_bind_value(ins, 1, proc);
	else
		sqlite3_bind_null(ins, 1);
	if (pid)
		sqlite3_bind_value(ins, 2, pid);
	else
		sqlite3_bind_null(ins, 2);
	sqlite3_bind_int(ins, 3, number);
	sqlite3_bind_int64(ins, 4, (int64_t)start);
	sqlite3_bind_int64(ins, 5, (int64_t)end);
	sqlite3_bind_text(ins, 6, why, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(ins, 7, end_why, -1, SQLITE_STATIC);
	if (sqlite3_step(ins) != SQLITE_DONE)
		ret = -EIO;
	sqlite3_reset(ins);
	return ret;
}

/* Recorded calls that make GPU work themselves (launches, copies, memsets) of a process CUPTI served and ended after
 * their window's inner end with no GPU record: they entered while the window was open and reached CUDA after its
 * stop had switched CUPTI's kinds off (preload/capture.c's order says so), so their work went unrecorded: 12 of
 * 9,000 launches a run, 3 threads launching while another toggled cudaProfilerStart/Stop 400 times (a review,
 * 2026-12-06), each shown as a launch with no kernel. They go with CUPTI's records of them, counted (cprof's and CUPTI's API records) as API records
 * dropped at the edges. A call's GPU record is found through its external id (the hooks' pushed id) and the
 * correlation ids CUPTI gave its calls. The candidates are few (a window's last calls): found by one scan of the
 * calls against the windows in memory (a subquery a row cost 0.8 us a call), then their own small tables. */
static int inner_cmp(const void *pa, const void *pb)
{
	const struct inner_window *a = pa, *b = pb;

	if (a->proc != b->proc)
		return a->proc < b->proc ? -1 : 1;
	return a->start < b->start ? -1 : a->start > b->start;
}

/* the end of the last of w[0..n) (by process, start) of proc that began at or before t; 0 none */
static uint64_t inner_end_at(const struct inner_window *w, size_t n, int64_t proc, uint64_t t)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (w[mid].proc < proc || (w[mid].proc == proc && w[mid].start <= t))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo > 0 && w[lo - 1].proc == proc ? w[lo - 1].end : 0;
}

static int drop_cut_calls(struct cprof_store *s, const struct inner_windows *in, int64_t *api_dropped)
{
	static const char *const steps[] = {
		/* a process CUPTI never tagged (CPROF_NO_CUPTI, no driver, a fork child of a CUDA parent) has no GPU
		 * record of any call: the missing one says nothing of a window's end, and its calls stay */
		"DELETE FROM temp.cprof_cut WHERE processId NOT IN (SELECT processId FROM"
		"  CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION WHERE externalKind = 5)",
		"CREATE TEMP TABLE cprof_cut_corr AS SELECT c.id, e.processId, e.correlationId"
		" FROM CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION e JOIN temp.cprof_cut c ON e.processId = c.processId AND"
		"  e.externalId = c.correlationId WHERE e.externalKind = 5",
		/* each GPU table scanned once, the few candidates probed (CROSS JOIN keeps that order): a subquery a
		 * candidate scanned the tables once each, 48 s for 1,000 candidates against 1M kernels (s21 review) */
		"CREATE INDEX temp.cprof_cut_corr_pc ON cprof_cut_corr(processId, correlationId)",
		"DELETE FROM temp.cprof_cut WHERE id IN (SELECT x.id FROM CUPTI_ACTIVITY_KIND_KERNEL g CROSS JOIN"
		"  temp.cprof_cut_corr x ON x.processId = g.processId AND x.correlationId = g.correlationId"
		" UNION ALL SELECT x.id FROM CUPTI_ACTIVITY_KIND_MEMCPY g CROSS JOIN temp.cprof_cut_corr x ON"
		"  x.processId = g.processId AND x.correlationId = g.correlationId"
		" UNION ALL SELECT x.id FROM CUPTI_ACTIVITY_KIND_MEMSET g CROSS JOIN temp.cprof_cut_corr x ON"
		"  x.processId = g.processId AND x.correlationId = g.correlationId)",
		"DELETE FROM CUPTI_ACTIVITY_KIND_RUNTIME AS t WHERE (t.processId, t.correlationId) IN (SELECT processId,"
		"  correlationId FROM temp.cprof_cut_corr WHERE id IN (SELECT id FROM temp.cprof_cut))",
		"DELETE FROM CUPTI_ACTIVITY_KIND_DRIVER AS t WHERE (t.processId, t.correlationId) IN (SELECT processId,"
		"  correlationId FROM temp.cprof_cut_corr WHERE id IN (SELECT id FROM temp.cprof_cut))",
		"DELETE FROM CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION AS t WHERE t.externalKind = 5 AND (t.processId,"
		"  t.externalId) IN (SELECT processId, correlationId FROM temp.cprof_cut)",
		/* THREADS was written from the counts kept while streaming: the dropped calls come off them */
		"UPDATE THREADS SET calls = calls - (SELECT count(*) FROM temp.cprof_cut c WHERE c.processId ="
		"  THREADS.processId AND c.tid = THREADS.tid) WHERE (processId, tid) IN (SELECT processId, tid FROM"
		"  temp.cprof_cut)",
		"DELETE FROM CPROF_API WHERE id IN (SELECT id FROM temp.cprof_cut)",
	};
	struct inner_window *w = malloc((in->n ? in->n : 1) * sizeof(*w));
	sqlite3_stmt *sel = NULL, *ins = NULL;
	size_t i, ncut = 0;
	int ret = 0, rc;

	if (w == NULL)
		return -ENOMEM;
	memcpy(w, in->w, in->n * sizeof(*w));
	qsort(w, in->n, sizeof(*w), inner_cmp);
	if (sqlite3_exec(s->db, "CREATE TEMP TABLE cprof_cut(id INTEGER, processId INTEGER, correlationId INTEGER, tid INTEGER)", NULL,
			 NULL, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(s->db, "SELECT id, processId, start, end, correlationId, tid FROM CPROF_API WHERE class IN"
				      " ('launch', 'memcpy', 'memset')", -1, &sel, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(s->db, "INSERT INTO temp.cprof_cut VALUES(?,?,?,?)", -1, &ins, NULL) != SQLITE_OK) {
		ret = db_err(s, "calls cut by a window's end");
		goto out;
	}
	while ((rc = sqlite3_step(sel)) == SQLITE_ROW) {
		int64_t proc = sqlite3_column_int64(sel, 1);
		uint64_t start = (uint64_t)sqlite3_column_int64(sel, 2), end = (uint64_t)sqlite3_column_int64(sel, 3),
			 e = inner_end_at(w, in->n, proc, start);

		if (e == 0 || end <= e)
			continue;
		sqlite3_bind_int64(ins, 1, sqlite3_column_int64(sel, 0));
		sqlite3_bind_int64(ins, 2, proc);
		sqlite3_bind_int64(ins, 3, sqlite3_column_int64(sel, 4));
		sqlite3_bind_int64(ins, 4, sqlite3_column_int64(sel, 5));
		if (sqlite3_step(ins) != SQLITE_DONE)
			rc = SQLITE_ERROR;
		sqlite3_reset(ins);
		if (rc == SQLITE_ERROR)
			break;
		ncut++;
	}
	if (rc != SQLITE_DONE) {
		ret = db_err(s, "calls cut by a window's end");
		goto out;
	}
	for (i = 0; ncut > 0 && i < sizeof(steps) / sizeof(steps[0]); i++) {
		if (sqlite3_exec(s->db, steps[i], NULL, NULL, NULL) != SQLITE_OK) {
			ret = db_err(s, "calls cut by a window's end");
			goto out;
		}
		if (!strncmp(steps[i], "DELETE FROM CUPTI_ACTIVITY_KIND_RUNTIME", 39) ||
		    !strncmp(steps[i], "DELETE FROM CUPTI_ACTIVITY_KIND_DRIVER", 38) || !strncmp(steps[i], "DELETE FROM CPROF_API", 21))
			*api_dropped += sqlite3_changes(s->db);
	}
	if (sqlite3_exec(s->db, "DROP TABLE temp.cprof_cut; DROP TABLE IF EXISTS temp.cprof_cut_corr", NULL, NULL, NULL) !=
	    SQLITE_OK)
		ret = db_err(s, "calls cut by a window's end");
out:
	sqlite3_finalize(sel);
	sqlite3_finalize(ins);
	free(w);
	return ret;
}

/* GPU records (kernels, copies, memsets) and CUPTI's synchronization records of no recorded call whose CUDA call
 * started outside every inner window of its process: those of calls cprof passed through just before a window opened or just after it closed, while
 * CUPTI's kinds were on (preload/capture.c); then CUPTI's API records of those calls. A record of a recorded call
 * (its external id) stays, and so does one of a call cprof does not hook made inside a window. Counted in META
 * gpu_records_dropped_at_edges and api_records_dropped_at_edges. */
static int drop_edge_orphans(struct cprof_store *s, const struct inner_windows *in)
{
	static const struct {
		const char *table;
		int api; /* CUPTI's record of a call (else of its GPU work) */
	} drop[] = { { "CUPTI_ACTIVITY_KIND_KERNEL", 0 }, { "CUPTI_ACTIVITY_KIND_MEMCPY", 0 },
		     { "CUPTI_ACTIVITY_KIND_MEMSET", 0 }, { "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION", 0 },
		     { "CUPTI_ACTIVITY_KIND_RUNTIME", 1 },
		     { "CUPTI_ACTIVITY_KIND_DRIVER", 1 } };
	/* a GPU record's call is not among the API records that started inside a window; an API record did not */
	static const char gpu_outside[] =
		"(t.processId, t.correlationId) NOT IN ("
		"  SELECT a.processId, a.correlationId FROM CUPTI_ACTIVITY_KIND_RUNTIME a WHERE a.start <= (SELECT w.e"
		"   FROM temp.cprof_inner w WHERE w.processId = a.processId AND w.s <= a.start ORDER BY w.s DESC LIMIT 1)"
		"  UNION ALL SELECT a.processId, a.correlationId FROM CUPTI_ACTIVITY_KIND_DRIVER a WHERE a.start <= (SELECT"
		"   w.e FROM temp.cprof_inner w WHERE w.processId = a.processId AND w.s <= a.start ORDER BY w.s DESC"
		"   LIMIT 1))";
	static const char api_outside[] =
		"NOT t.start <= coalesce((SELECT w.e FROM temp.cprof_inner w WHERE w.processId = t.processId"
		"  AND w.s <= t.start ORDER BY w.s DESC LIMIT 1), -1)";
	sqlite3_stmt *ins = NULL;
	int64_t dropped = 0, api_dropped = 0;
	int ret = 0;
	size_t i;

	if (in->n == 0)
		return 0;
	if (sqlite3_exec(s->db, "CREATE TEMP TABLE IF NOT EXISTS cprof_inner(processId INTEGER, s INTEGER, e INTEGER);"
				"CREATE INDEX IF NOT EXISTS temp.cprof_inner_ps ON cprof_inner(processId, s);"
				"DELETE FROM temp.cprof_inner", NULL, NULL, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(s->db, "INSERT INTO temp.cprof_inner VALUES(?,?,?)", -1, &ins, NULL) != SQLITE_OK)
		return db_err(s, "edge windows");
	for (i = 0; i < in->n && ret == 0; i++) {
		sqlite3_bind_int64(ins, 1, in->w[i].proc);
		sqlite3_bind_int64(ins, 2, (int64_t)in->w[i].start);
		sqlite3_bind_int64(ins, 3, (int64_t)in->w[i].end);
		if (sqlite3_step(ins) != SQLITE_DONE)
			ret = db_err(s, "edge window");
		sqlite3_reset(ins);
	}
	sqlite3_finalize(ins);
	/* externalKind 5: CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2, the kind the hooks push their ids as. A process's
	 * inner windows do not overlap: a call started inside one iff it started before the end of the last one that
	 * began before it, one index seek a record (a join on the process alone was every record against every window:
	 * 10^11 probes for 50,000 windows over millions of calls). The GPU records go first: they are found through
	 * CUPTI's API records of their calls, which go next (a window holds no call that started outside it, CUPTI's
	 * record of one either: t-window-on-demand's trace found a passed-through launch's runtime record 1 us outside
	 * a window, 2026-12-06) */
	for (i = 0; i < sizeof(drop) / sizeof(drop[0]) && ret == 0; i++) {
		char sql[1024];

		snprintf(sql, sizeof(sql),
			 "DELETE FROM %s AS t WHERE t.processId IN (SELECT processId FROM temp.cprof_inner)"
			 " AND (t.processId, t.correlationId) NOT IN (SELECT processId, correlationId"
			 "  FROM CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION WHERE externalKind = 5) AND %s",
			 drop[i].table, drop[i].api ? api_outside : gpu_outside);
		if (sqlite3_exec(s->db, sql, NULL, NULL, NULL) != SQLITE_OK)
			ret = db_err(s, drop[i].api ? "drop edge API records" : "drop edge GPU records");
		else
			*(drop[i].api ? &api_dropped : &dropped) += sqlite3_changes(s->db);
	}
	if (ret == 0)
		ret = drop_cut_calls(s, in, &api_dropped);
	if (ret == 0 && sqlite3_exec(s->db, "DROP TABLE temp.cprof_inner", NULL, NULL, NULL) != SQLITE_OK)
		ret = db_err(s, "edge windows");
	if (ret == 0)
		ret = cprof_store_meta_int(s, "gpu_records_dropped_at_edges", dropped);
	if (ret == 0)
		ret = cprof_store_meta_int(s, "api_records_dropped_at_edges", api_dropped);
	/* the call totals counted while streaming hold the dropped records: none written, cprof info counts rows */
	if (api_dropped > 0)
		s->split.inexact = 1;
	return ret;
}

int cprof_store_windows(struct cprof_store *s, uint64_t cut_ns)
{
	sqlite3_stmt *sel = NULL, *ins = NULL, *run = NULL;
	sqlite3_value *proc = NULL, *pid = NULL;
	uint64_t open_start = 0, proc_end = 0, inner_start = 0, inner_end = 0;
	struct inner_windows inner = { 0 };
	char why[256] = "";
	int open_number = 0, rows = 0, ret = 0, more = 1;
	int64_t cur = INT64_MIN;

	if (begin(s) < 0 || flush_all(s) < 0)
		return -EIO;
	if (sqlite3_prepare_v2(s->db, "SELECT st.processId, st.pid, st.timeNs, st.code, st.err, st.message, p.endNs"
				      " FROM CPROF_STATUS st LEFT JOIN PROCESSES p ON p.id = st.processId"
				      " WHERE st.code IN ('capture-start', 'capture-stop', 'capture-on', 'capture-off')"
				      " ORDER BY st.processId, st.rowid",
			       -1, &sel, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(s->db, "INSERT INTO CPROF_WINDOWS VALUES(?,?,?,?,?,?,?)", -1, &ins, NULL) != SQLITE_OK) {
		ret = db_err(s, "prepare windows");
		goto out;
	}
	while (ret == 0 && more) {
		const char *code = "";
		int64_t p = 0;
		uint64_t t = 0;
		int start = 0;

		more = sqlite3_step(sel) == SQLITE_ROW;
		if (more) {
			p = sqlite3_column_int64(sel, 0);
			t = (uint64_t)sqlite3_column_int64(sel, 2);
			code = (const char *)sqlite3_column_text(sel, 3);
			start = !strcmp(code, "capture-start");
		}
		/* a window still open when its process's rows end ran until the process ended, or until its capture-off
		 * where the process ended in its stop (its CUPTI flush) before capture-stop: nothing was recorded after */
		if ((!more || p != cur) && open_number) {
			uint64_t end = proc_end > open_start ? proc_end : open_start;

			if (window_row(ins, proc, pid, open_number, open_start, end > inner_end ? end : inner_end, cut_ns, why,
				       inner_end ? "window ended" : "process ended", inner_start, inner_end, &inner) < 0)
				ret = db_err(s, "insert window");
			rows++;
			open_number = 0;
		}
		if (!more || ret < 0)
			break;
		if (p != cur) {
			sqlite3_value_free(proc);
			sqlite3_value_free(pid);
			proc = sqlite3_value_dup(sqlite3_column_value(sel, 0));
			pid = sqlite3_value_dup(sqlite3_column_value(sel, 1));
			proc_end = (uint64_t)sqlite3_column_int64(sel, 6);
			cur = p;
		}
		if (!strcmp(code, "capture-on")) {
			if (open_number && !inner_start)
				inner_start = t;
		} else if (!strcmp(code, "capture-off")) {
			if (open_number)
				inner_end = t;
		} else if (start && !open_number) {
			const unsigned char *m = sqlite3_column_text(sel, 5);

			open_number = sqlite3_column_int(sel, 4) > 0 ? sqlite3_column_int(sel, 4) : 1;
			open_start = t;
			inner_start = inner_end = 0;
			snprintf(why, sizeof(why), "%s", m ? (const char *)m : "");
		} else if (!start && open_number) {
			if (window_row(ins, proc, pid, open_number, open_start, t, cut_ns, why, "window ended", inner_start,
				       inner_end, &inner) < 0)
				ret = db_err(s, "insert window");
			rows++;
			open_number = 0;
		}
	}
	if (ret == 0 && rows == 0 && cut_ns) {
		/* the whole run was being recorded: its window is from the first process's start to the cut */
		uint64_t first = 0;

		if (sqlite3_prepare_v2(s->db, "SELECT min(startNs) FROM PROCESSES", -1, &run, NULL) == SQLITE_OK &&
		    sqlite3_step(run) == SQLITE_ROW)
			first = (uint64_t)sqlite3_column_int64(run, 0);
		if (window_row(ins, NULL, NULL, 1, first && first < cut_ns ? first : cut_ns, cut_ns, 0, "whole run",
			       "max-size reached", 0, 0, NULL) < 0)
			ret = db_err(s, "insert window");
	}
	if (ret == 0)
		ret = drop_edge_orphans(s, &inner);
out:
	free(inner.w);
	sqlite3_value_free(proc);
	sqlite3_value_free(pid);
	sqlite3_finalize(run);
	sqlite3_finalize(sel);
	sqlite3_finalize(ins);
	return ret;
}

int cprof_store_threads(struct cprof_store *s)
{
	int ret = 0;

	if (s->threads_done)
		return 0;
	if (begin(s) < 0 || flush_all(s) < 0)
		return -EIO;
	/* what the open transaction holds counts once it commits below */
	for (size_t i = 0; i < s->nthreads && ret == 0; i++) {
		struct thread_sum t = s->threads[i];
		sqlite3_stmt *st = s->st[ST_THREAD];

		if (t.pending_calls) {
			t.first = t.calls && t.first < t.pending_first ? t.first : t.pending_first;
			t.last = t.calls && t.last > t.pending_last ? t.last : t.pending_last;
			t.calls += t.pending_calls;
		}
		if (t.calls == 0)
			continue;
		sqlite3_bind_int64(st, 1, t.proc_id);
		sqlite3_bind_int64(st, 2, t.tid);
		sqlite3_bind_int64(st, 3, t.first);
		sqlite3_bind_int64(st, 4, t.last);
		sqlite3_bind_int64(st, 5, t.calls);
		if (sqlite3_step(st) != SQLITE_DONE)
			ret = db_err(s, "insert thread");
		sqlite3_reset(st);
	}
	if (ret == 0)
		ret = cprof_store_commit(s, 1);
	s->threads_done = ret == 0;
	return ret;
}

#define CHECKPOINT_WAIT_MS 10000
/* Merges the WAL into the profile and truncates it, so the .db alone is the whole profile (copied, mailed).
 * A reader of the profile (cprof during the run) pins the WAL: the checkpoint does not fail then, it reports
 * busy, and is tried again until the reader lets go, within a bound. 0, or -EIO / -EBUSY. */
static int checkpoint(struct cprof_store *s)
{
	int busy = 1, rc, waited;

	for (waited = 0; busy && waited <= CHECKPOINT_WAIT_MS; waited += 50) {
		sqlite3_stmt *st;

		if (sqlite3_prepare_v2(s->db, "PRAGMA wal_checkpoint(TRUNCATE)", -1, &st, NULL) != SQLITE_OK)
			return -EIO;
		rc = sqlite3_step(st);
		busy = rc != SQLITE_ROW || sqlite3_column_int(st, 0) != 0;
		sqlite3_finalize(st);
		if (rc != SQLITE_ROW && rc != SQLITE_BUSY && rc != SQLITE_LOCKED)
			return -EIO;
		if (busy)
			usleep(50000);
	}
	return busy ? -EBUSY : 0;
}

int cprof_store_close(struct cprof_store *s)
{
	int ret = 0, i;

	if (s == NULL)
		return 0;
	ret = cprof_store_threads(s);
	if (cprof_store_commit(s, 1) < 0)
		ret = -EIO;
	for (i = 0; i < ST__N; i++)
		sqlite3_finalize(s->st[i]);
	for (i = 0; i < B__N; i++)
		sqlite3_finalize(s->batch[i].multi);
	free(s->threads);
	free(s->thidx);
	free(s->pending);
	free(s->split.last);
	free(s->split.libs);
	for (size_t e = 0; e < s->nendp; e++)
		free(s->endp[e].heap);
	free(s->endp);
	/* a failed checkpoint loses nothing: the WAL keeps the commits, and readers see them */
	if (ret == 0 && checkpoint(s) < 0)
		pr_warn("the profile's WAL could not be merged into it (disk full, or a reader held it %d s); keep the -wal"
			" file with it", CHECKPOINT_WAIT_MS / 1000);
	if (sqlite3_close(s->db) != SQLITE_OK)
		ret = -EIO;
	close(s->lock_fd);
	free(s);
	return ret;
}

int cprof_store_process(struct cprof_store *s, const struct cprof_wire_hello *h, int64_t *proc_id)
{
	sqlite3_stmt *st = s->st[ST_PROC];
	const char *argv = cprof_wire_hello_argv(h);
	char *joined;
	int ret = 0;

	if (begin(s) < 0)
		return -EIO;
	/* argv as one line, each argument quoted as a shell reads it back (until 2026-12-06 joined by spaces as they
	 * were: `sh -c 'a b'` read as `sh -c a b`, and control bytes stored raw) */
	joined = cprof_sh_join(argv, h->argv_len);
	if (joined == NULL)
		return -ENOMEM;
	sqlite3_bind_int64(st, 1, h->pid);
	sqlite3_bind_int64(st, 2, h->ppid);
	sqlite3_bind_text(st, 3, cprof_wire_hello_host(h), -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 4, cprof_wire_hello_exe(h), -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 5, joined, -1, SQLITE_STATIC);
	if (h->rank >= 0)
		sqlite3_bind_int(st, 6, h->rank);
	else
		sqlite3_bind_null(st, 6);
	if (h->local_rank >= 0)
		sqlite3_bind_int(st, 7, h->local_rank);
	else
		sqlite3_bind_null(st, 7);
	if (h->world_size >= 0)
		sqlite3_bind_int(st, 8, h->world_size);
	else
		sqlite3_bind_null(st, 8);
	sqlite3_bind_int64(st, 9, (int64_t)h->start_ns);
	sqlite3_bind_text(st, 10, h->clock == CPROF_CLOCK_REALTIME ? "CLOCK_REALTIME" : "unknown", -1, SQLITE_STATIC);
	sqlite3_bind_int(st, 11, (int)h->wire_version);
	sqlite3_bind_int(st, 12, !!(h->flags & CPROF_HELLO_FORKED));
	sqlite3_bind_int(st, 13, !!(h->flags & CPROF_HELLO_SIMGPU));
	if (sqlite3_step(st) != SQLITE_DONE)
		ret = db_err(s, "insert process");
	else
		*proc_id = sqlite3_last_insert_rowid(s->db);
	sqlite3_reset(st);
	free(joined);
	if (ret == 0 && (h->flags & CPROF_HELLO_SIMGPU) && !s->simulated) {
		/* anything printed from this profile must say the GPU was simulated */
		s->simulated = 1;
		ret = cprof_store_meta(s, "simulated_gpu", "1");
	}
	return ret;
}

int cprof_store_process_end(struct cprof_store *s, int64_t proc_id, const struct cprof_wire_bye *bye,
			    uint64_t recorded, uint64_t lost, uint32_t frames, uint32_t seq_gaps)
{
	static const char *const reasons[] = { "none", "exit", "_exit", "exec", "replaced" };
	sqlite3_stmt *st = s->st[ST_PROC_END];
	int ret = 0;

	if (begin(s) < 0)
		return -EIO;
	if (bye) {
		sqlite3_bind_int64(st, 1, (int64_t)bye->end_ns);
		sqlite3_bind_text(st, 2, bye->reason < 5 ? reasons[bye->reason] : "unknown", -1, SQLITE_STATIC);
		sqlite3_bind_int64(st, 3, (int64_t)bye->emitted);
	} else {
		sqlite3_bind_null(st, 1);
		sqlite3_bind_null(st, 2); /* no BYE: killed, or still running when the run ended */
		sqlite3_bind_int64(st, 3, (int64_t)(recorded + lost));
	}
	sqlite3_bind_int64(st, 4, (int64_t)recorded);
	sqlite3_bind_int64(st, 5, (int64_t)lost);
	sqlite3_bind_int64(st, 6, frames);
	sqlite3_bind_int64(st, 7, seq_gaps);
	sqlite3_bind_int64(st, 8, proc_id);
	if (sqlite3_step(st) != SQLITE_DONE)
		ret = db_err(s, "update process");
	sqlite3_reset(st);
	return ret;
}

static int end_key_lt(struct end_key a, struct end_key b)
{
	return a.start < b.start || (a.start == b.start && a.seq < b.seq);
}

/* The slot of PROCESSES.id proc_id in an array grown on demand, new slots filled with the byte fill; NULL for
 * an id out of range or no memory. */
static void *proc_slot(void **arr, size_t *n, size_t size, int64_t proc_id, int fill)
{
	if (proc_id <= 0 || proc_id > (1 << 24))
		return NULL;
	if ((size_t)proc_id >= *n) {
		size_t m = (size_t)proc_id * 2 + 16;
		char *a = realloc(*arr, m * size);

		if (a == NULL)
			return NULL;
		memset(a + *n * size, fill, (m - *n) * size);
		*arr = a;
		*n = m;
	}
	return (char *)*arr + (size_t)proc_id * size;
}

static struct end_proc *end_proc(struct cprof_store *s, int64_t proc_id)
{
	void *a = s->endp;
	struct end_proc *p = proc_slot(&a, &s->nendp, sizeof(*s->endp), proc_id, 0);

	s->endp = a;
	return p;
}

/* an outermost call of thread t, as stored (s->api_seq: its place) */
static void end_note(struct cprof_store *s, struct thread_sum *t, int64_t proc_id, const struct cprof_wire_api *ev)
{
	struct end_key k = { (int64_t)ev->start_ns, s->api_seq };
	struct end_proc *p = end_proc(s, proc_id);
	int fail = ev->ret != 0 && ev->ret != 600; /* 600 cudaErrorNotReady: polling returns it all along */
	uint32_t i, c;

	if (p == NULL) {
		s->end_inexact = 1;
		return;
	}
	if (p->n < END_OUTER) {
		if (p->n == p->cap) {
			uint32_t cap = p->cap ? 2 * p->cap : 16;
			struct end_key *h = realloc(p->heap, (cap < END_OUTER ? cap : END_OUTER) * sizeof(*h));

			if (h == NULL) {
				s->end_inexact = 1;
				return;
			}
			p->heap = h;
			p->cap = cap < END_OUTER ? cap : END_OUTER;
		}
		/* nearly always the latest: it stays at the bottom */
		for (i = p->n++; i > 0 && end_key_lt(k, p->heap[(i - 1) / 2]); i = (i - 1) / 2)
			p->heap[i] = p->heap[(i - 1) / 2];
		p->heap[i] = k;
	} else if (end_key_lt(p->heap[0], k)) {
		for (i = 0; (c = 2 * i + 1) < p->n; i = c) {
			if (c + 1 < p->n && end_key_lt(p->heap[c + 1], p->heap[c]))
				c++;
			if (!end_key_lt(p->heap[c], k))
				break;
			p->heap[i] = p->heap[c];
		}
		p->heap[i] = k;
	}
	if (fail && (!p->has_fail || end_key_lt(p->fail, k))) {
		p->fail = k;
		p->fail_tid = ev->tid;
		p->has_fail = 1;
	}
	if (ev->ret == 0) {
		if (!t->has_ok || k.start >= t->ok_start) {
			t->ok_start = k.start;
			t->has_ok = 1;
			t->has_run = 0;
		}
	} else if (fail && !t->has_run) {
		t->has_run = 1;
		t->run_api = ev->api;
		t->run_ret = ev->ret;
	}
}

/* common/ending.h's query on the state above: 1 and the call that named the error of process proc_id, 0 none */
static int end_error(struct cprof_store *s, int64_t proc_id, int *api, int64_t *ret)
{
	const struct end_proc *p = proc_id > 0 && (size_t)proc_id < s->nendp ? &s->endp[proc_id] : NULL;
	const struct thread_sum *t;
	size_t slot;

	/* not among the last END_OUTER outermost calls: too far back to be the ending */
	if (p == NULL || !p->has_fail || (p->n == END_OUTER && end_key_lt(p->fail, p->heap[0])) || !s->thidx_cap)
		return 0;
	slot = thread_slot(s, proc_id, p->fail_tid);
	if (!s->thidx[slot])
		return 0;
	t = &s->threads[s->thidx[slot] - 1];
	/* its thread made a successful call after it: it went on */
	if ((t->has_ok && t->ok_start > p->fail.start) || !t->has_run)
		return 0;
	*api = t->run_api;
	*ret = t->run_ret;
	return 1;
}

int cprof_store_api(struct cprof_store *s, int64_t proc_id, uint32_t pid, const struct cprof_wire_api *ev,
		    int64_t kernel_name_id)
{
	struct batch *b = &s->batch[B_API];
	struct thread_sum *t = thread_sum(s, proc_id, ev->tid);
	uint32_t *nulls;
	int64_t *v = t ? batch_row(s, b, &nulls) : NULL;
	int i;

	if (v == NULL)
		return t ? -EIO : -ENOMEM;
	if (t->pending_calls == 0) {
		if (s->npending == s->pending_cap) {
			size_t cap = s->pending_cap ? s->pending_cap * 2 : 16;
			uint32_t *n = realloc(s->pending, cap * sizeof(*n));

			if (n == NULL)
				return -ENOMEM;
			s->pending = n;
			s->pending_cap = cap;
		}
		s->pending[s->npending++] = (uint32_t)(t - s->threads);
	}
	if (t->pending_calls == 0 || (int64_t)ev->start_ns < t->pending_first)
		t->pending_first = (int64_t)ev->start_ns;
	if (t->pending_calls == 0 || (int64_t)ev->end_ns > t->pending_last)
		t->pending_last = (int64_t)ev->end_ns;
	t->pending_calls++;
	v[0] = proc_id;
	v[1] = pid;
	v[2] = ev->tid;
	v[3] = (int64_t)ev->start_ns;
	v[4] = (int64_t)ev->end_ns;
	v[5] = (int64_t)ev->corr;
	v[6] = s->api_name_id[ev->api];
	v[7] = cprof_api_class(ev->api); /* bound as its name */
	v[8] = ev->ret;
	v[9] = !!(ev->flags & CPROF_API_F_NESTED);
	v[10] = kernel_name_id;
	if (kernel_name_id <= 0)
		*nulls |= 1u << 10;
	v[11] = (int64_t)ev->stream;
	v[12] = (int64_t)ev->bytes;
	v[13] = (int64_t)ev->ptr;
	for (i = 0; i < 8; i++)
		v[14 + i] = ev->arg[i];
	v[22] = ev->stack;
	v[23] = !!(ev->flags & CPROF_API_F_STACK_INHERITED);
	if (!ev->stack)
		*nulls |= 3u << 22;
	split_call(&s->split, proc_id, ev);
	if (!(ev->flags & CPROF_API_F_NESTED))
		end_note(s, t, proc_id, ev);
	s->api_seq++;
	return batch_done(s, b);
}

int cprof_store_frame(struct cprof_store *s, int64_t proc_id, uint32_t stack, int level, int native, uint64_t off,
		      int64_t module_or_file, int64_t func)
{
	sqlite3_stmt *st = s->st[ST_FRAME];
	int ret = 0, i;

	if (begin(s) < 0)
		return -EIO;
	for (i = 5; i <= 9; i++)
		sqlite3_bind_null(st, i);
	sqlite3_bind_int64(st, 1, proc_id);
	sqlite3_bind_int64(st, 2, stack);
	sqlite3_bind_int(st, 3, level);
	sqlite3_bind_text(st, 4, native ? "native" : "python", -1, SQLITE_STATIC);
	if (native) {
		if (module_or_file > 0)
			sqlite3_bind_int64(st, 5, module_or_file);
		sqlite3_bind_int64(st, 6, (int64_t)(off & INT64_MAX));
	} else {
		if (module_or_file > 0)
			sqlite3_bind_int64(st, 7, module_or_file);
		if (func > 0)
			sqlite3_bind_int64(st, 8, func);
		sqlite3_bind_int64(st, 9, (int64_t)(off & 0xffffffff));
	}
	if (sqlite3_step(st) != SQLITE_DONE)
		ret = db_err(s, "insert stack frame");
	sqlite3_reset(st);
	s->rows++;
	s->txn_rows++;
	return ret;
}

int cprof_store_symbolize(struct cprof_store *s)
{
	int n;

	if (begin(s) < 0 || flush_all(s) < 0)
		return -EIO;
	n = cprof_symbolize_profile(s->db);
	if (n < 0)
		pr_warn("native stack frames could not be symbolised (%s); the report shows module+offset", strerror(-n));
	return n;
}

int cprof_store_diag(struct cprof_store *s, uint32_t pid, const char *message)
{
	sqlite3_stmt *st = s->st[ST_DIAG];
	int ret = 0;

	if (begin(s) < 0)
		return -EIO;
	sqlite3_bind_int64(st, 1, (int64_t)cprof_now_ns());
	sqlite3_bind_int64(st, 2, pid);
	sqlite3_bind_text(st, 3, message, -1, SQLITE_TRANSIENT);
	if (sqlite3_step(st) != SQLITE_DONE)
		ret = db_err(s, "insert diagnostic");
	sqlite3_reset(st);
	return ret;
}

/* Queues a row of integers for batch b's table. */
static int queue_ints(struct cprof_store *s, int which, const int64_t *v, int n)
{
	struct batch *b = &s->batch[which];
	uint32_t *nulls;
	int64_t *row = batch_row(s, b, &nulls);

	if (row == NULL)
		return -EIO;
	memcpy(row, v, (size_t)n * sizeof(*v));
	return batch_done(s, b);
}

/* Binds a list of integers to a statement from position 1 and steps it. */
static int insert_ints(struct cprof_store *s, sqlite3_stmt *st, const int64_t *v, int n, const char *what)
{
	int i, ret = 0;

	if (begin(s) < 0)
		return -EIO;
	for (i = 0; i < n; i++)
		sqlite3_bind_int64(st, i + 1, v[i]);
	if (sqlite3_step(st) != SQLITE_DONE)
		ret = db_err(s, what);
	sqlite3_reset(st);
	s->rows++;
	s->txn_rows++;
	return ret;
}

/* as report/model/tables.c's library_call: a hooked entry point whose runtime calls CUPTI shows inside it */
static int library_api(const char *api)
{
	return api && strncmp(api, "cuda", 4) != 0 && strncmp(api, "__cuda", 6) != 0 && strncmp(api, "cu", 2) == 0;
}

static int64_t *split_last(struct call_split *c, int64_t proc_id)
{
	void *a = c->last;
	int64_t(*l)[2] = proc_slot(&a, &c->nlast, sizeof(*c->last), proc_id, 0xff); /* -1: none yet */

	c->last = a;
	if (l == NULL) {
		c->inexact = 1;
		return NULL;
	}
	return *l;
}

static size_t lib_slot(const struct call_split *c, int64_t proc_id, int64_t x)
{
	size_t mask = c->libs_cap - 1, i = pair_hash(proc_id, x) & mask;

	while (c->libs[i][0] && (c->libs[i][0] != proc_id || c->libs[i][1] != x))
		i = (i + 1) & mask;
	return i;
}

static int lib_known(const struct call_split *c, int64_t proc_id, int64_t x)
{
	return c->nlibs && c->libs[lib_slot(c, proc_id, x)][0];
}

static void lib_add(struct call_split *c, int64_t proc_id, int64_t x)
{
	size_t i;

	if (c->libs_cap && c->libs[lib_slot(c, proc_id, x)][0])
		return;
	if (2 * (c->nlibs + 1) > c->libs_cap) {
		size_t cap = c->libs_cap ? c->libs_cap * 2 : 256, old = c->libs_cap;
		int64_t(*o)[2] = c->libs, (*n)[2] = c->nlibs >= SPLIT_LIBS ? NULL : calloc(cap, sizeof(*n));

		if (n == NULL) {
			c->inexact = 1;
			return;
		}
		c->libs = n;
		c->libs_cap = cap;
		for (i = 0; i < old; i++)
			if (o[i][0])
				memcpy(c->libs[lib_slot(c, o[i][0], o[i][1])], o[i], sizeof(o[i]));
		free(o);
	}
	i = lib_slot(c, proc_id, x);
	c->libs[i][0] = proc_id;
	c->libs[i][1] = x;
	c->nlibs++;
}

static void split_call(struct call_split *c, int64_t proc_id, const struct cprof_wire_api *ev)
{
	int64_t *last, x = (int64_t)ev->corr;
	size_t i;

	if (ev->flags & CPROF_API_F_NESTED)
		c->nested++;
	else
		c->program++;
	if (!c->api_lib[ev->api] || c->inexact)
		return;
	/* a library call: the runtime records inside it (its external id) are counted as inside libraries,
	 * those that came before it too, unless they already left recent[] */
	if ((last = split_last(c, proc_id)) == NULL)
		return;
	if (x < 0 || x <= last[1]) {
		c->inexact = 1;
		return;
	}
	for (i = 0; i < c->nrecent; i++)
		if (c->recent[i][0] == proc_id && c->recent[i][1] == x) {
			c->in_libs += c->recent[i][2];
			c->recent[i][2] = 0;
		}
	lib_add(c, proc_id, x);
}

/* a named runtime record inside the hooked call of external id x, of no library call known now */
static void recent_add(struct call_split *c, int64_t proc_id, int64_t x)
{
	int64_t *r, *last;

	if (c->nrecent && c->recent[(c->recent_head + SPLIT_RECENT - 1) % SPLIT_RECENT][0] == proc_id &&
	    c->recent[(c->recent_head + SPLIT_RECENT - 1) % SPLIT_RECENT][1] == x) {
		c->recent[(c->recent_head + SPLIT_RECENT - 1) % SPLIT_RECENT][2]++;
		return;
	}
	r = c->recent[c->recent_head];
	if (c->nrecent == SPLIT_RECENT) {
		/* the oldest leaves: a library call of its id coming later could not be counted */
		if ((last = split_last(c, r[0])) != NULL && r[1] > last[1])
			last[1] = r[1];
	} else {
		c->nrecent++;
	}
	r[0] = proc_id;
	r[1] = x;
	r[2] = 1;
	c->recent_head = (c->recent_head + 1) % SPLIT_RECENT;
}

static size_t seen_home(int64_t proc_id, int64_t x)
{
	return pair_hash(proc_id, x) & (2 * SPLIT_SEEN - 1);
}

static int seen_has(const struct call_split *c, int64_t proc_id, int64_t x)
{
	size_t i = seen_home(proc_id, x);

	for (; c->seen_slot[i]; i = (i + 1) & (2 * SPLIT_SEEN - 1))
		if (c->seen[c->seen_slot[i] - 1][0] == proc_id && c->seen[c->seen_slot[i] - 1][1] == x)
			return 1;
	return 0;
}

/* takes FIFO entry e out of the hash: linear probing's backward shift, so no tombstones pile up */
static void seen_unhash(struct call_split *c, size_t e)
{
	const size_t mask = 2 * SPLIT_SEEN - 1;
	size_t i = seen_home(c->seen[e][0], c->seen[e][1]), j, k;

	while (c->seen_slot[i] != e + 1)
		i = (i + 1) & mask;
	for (j = i;;) {
		j = (j + 1) & mask;
		if (!c->seen_slot[j])
			break;
		k = seen_home(c->seen[c->seen_slot[j] - 1][0], c->seen[c->seen_slot[j] - 1][1]);
		/* j's entry may fill the hole at i unless its home lies cyclically in (i, j] */
		if (i <= j ? (k > i && k <= j) : (k > i || k <= j))
			continue;
		c->seen_slot[i] = c->seen_slot[j];
		i = j;
	}
	c->seen_slot[i] = 0;
}

static void seen_add(struct call_split *c, int64_t proc_id, int64_t x)
{
	size_t e = c->seen_head, i;
	int64_t *last;

	if (c->nseen == SPLIT_SEEN) {
		if ((last = split_last(c, c->seen[e][0])) != NULL && c->seen[e][1] > last[0])
			last[0] = c->seen[e][1];
		seen_unhash(c, e);
	} else {
		c->nseen++;
	}
	c->seen[e][0] = proc_id;
	c->seen[e][1] = x;
	for (i = seen_home(proc_id, x); c->seen_slot[i]; i = (i + 1) & (2 * SPLIT_SEEN - 1))
		;
	c->seen_slot[i] = (uint32_t)e + 1;
	c->seen_head = (e + 1) % SPLIT_SEEN;
}

static void split_gpu(struct call_split *c, int64_t proc_id, const struct cprof_wire_gpu *g, int64_t name_id)
{
	int64_t *last, x, id = (int64_t)g->corr;
	int i;

	if (c->inexact)
		return;
	if (g->kind == CPROF_GPU_DRIVER) {
		c->inexact = 1; /* the report's driver-only rows need each thread's calls and times */
		return;
	}
	if ((g->kind != CPROF_GPU_EXTCORR || g->u32[0] != 5) && g->kind != CPROF_GPU_RUNTIME)
		return;
	if ((last = split_last(c, proc_id)) == NULL)
		return;
	for (i = 0; i < c->npend; i++)
		if (c->pend[i][0] == proc_id && c->pend[i][1] == id)
			break;
	/* an id seen already (a record sent twice, an external id after the record it annotates, counted
	 * without it), or one too old to tell */
	if (id <= last[0] || seen_has(c, proc_id, id)) {
		c->inexact = 1;
		return;
	}
	if (g->kind == CPROF_GPU_EXTCORR) {
		/* a second id for one record */
		if (i < c->npend || c->npend == SPLIT_PENDING || (int64_t)g->u64[0] < 0) {
			c->inexact = 1;
			return;
		}
		c->pend[c->npend][0] = proc_id;
		c->pend[c->npend][1] = id;
		c->pend[c->npend++][2] = (int64_t)g->u64[0];
		return;
	}
	seen_add(c, proc_id, id);
	if (i < c->npend) {
		/* inside a hooked call: the hook's own record (the report counts the hooked call, not this one),
		 * or a runtime call a hooked library made, counted inside it */
		x = c->pend[i][2];
		memcpy(c->pend[i], c->pend[--c->npend], sizeof(c->pend[i]));
		if (name_id <= 0)
			return;
		if (lib_known(c, proc_id, x))
			c->in_libs++;
		else
			recent_add(c, proc_id, x);
		return;
	}
	/* none waiting: a call only CUPTI saw */
	if (name_id > 0)
		c->cupti_only++;
}

int cprof_store_call_split(struct cprof_store *s)
{
	struct call_split *c = &s->split;

	if (c->inexact)
		return 0;
	if (cprof_store_meta_int(s, "calls_by_program", c->program) < 0 ||
	    cprof_store_meta_int(s, "calls_inside_libraries", c->nested + c->in_libs) < 0 ||
	    cprof_store_meta_int(s, "calls_seen_only_by_cupti", c->cupti_only) < 0)
		return -EIO;
	return 0;
}

int cprof_store_gpu(struct cprof_store *s, int64_t proc_id, const struct cprof_wire_gpu *g, int64_t name_id)
{
	const uint32_t *u = g->u32;

	/* an API record with its external id folded in (common/wire.h): the id's row first, as if sent alone */
	if ((g->kind == CPROF_GPU_RUNTIME || g->kind == CPROF_GPU_DRIVER) && u[4] != 0) {
		struct cprof_wire_gpu e = { .kind = CPROF_GPU_EXTCORR, .corr = g->corr };
		int ret;

		e.u32[0] = u[4];
		e.u64[0] = g->u64[0];
		if ((ret = cprof_store_gpu(s, proc_id, &e, 0)) < 0)
			return ret;
	}
	split_gpu(&s->split, proc_id, g, name_id);

	switch (g->kind) {
	case CPROF_GPU_KERNEL: {
		int64_t v[] = { proc_id, (int64_t)g->start_ns, (int64_t)g->end_ns, g->device, g->context, g->stream,
				g->corr, name_id, (int32_t)u[0], (int32_t)u[1], (int32_t)u[2], (int32_t)u[3],
				(int32_t)u[4], (int32_t)u[5], u[6], (int32_t)u[7], (int32_t)u[8], u[9],
				(int64_t)g->u64[0], (int64_t)g->u64[1] };
		return queue_ints(s, B_KERNEL, v, 20);
	}
	case CPROF_GPU_MEMCPY: {
		int64_t v[] = { proc_id, (int64_t)g->start_ns, (int64_t)g->end_ns, g->device, g->context, g->stream,
				g->corr, (int64_t)g->u64[0], u[0], u[1], u[2], u[3] };
		return queue_ints(s, B_MEMCPY, v, 12);
	}
	case CPROF_GPU_MEMSET: {
		int64_t v[] = { proc_id, (int64_t)g->start_ns, (int64_t)g->end_ns, g->device, g->context, g->stream,
				g->corr, (int64_t)g->u64[0], u[0], u[1], u[2] };
		return queue_ints(s, B_MEMSET, v, 11);
	}
	case CPROF_GPU_RUNTIME:
	case CPROF_GPU_DRIVER: {
		int64_t v[] = { proc_id, (int64_t)g->start_ns, (int64_t)g->end_ns, g->corr, name_id, u[0], u[2],
				(int32_t)u[3] };
		return queue_ints(s, g->kind == CPROF_GPU_RUNTIME ? B_RUNTIME : B_DRIVER, v, 8);
	}
	case CPROF_GPU_SYNC: {
		int64_t v[] = { proc_id, (int64_t)g->start_ns, (int64_t)g->end_ns, g->corr, g->context, g->stream,
				u[0], u[1], (int32_t)u[2] };
		return queue_ints(s, B_SYNC, v, 9);
	}
	case CPROF_GPU_OVERHEAD: {
		int64_t v[] = { proc_id, (int64_t)g->start_ns, (int64_t)g->end_ns, u[0], u[1], u[2], u[3], u[4], g->corr };
		return queue_ints(s, B_OVERHEAD, v, 9);
	}
	case CPROF_GPU_EXTCORR: {
		int64_t v[] = { proc_id, u[0], (int64_t)g->u64[0], g->corr };
		return queue_ints(s, B_EXTCORR, v, 4);
	}
	}
	return -EINVAL;
}

int cprof_store_status(struct cprof_store *s, int64_t proc_id, uint32_t pid, const struct cprof_wire_status *w)
{
	static const char *const codes[] = { "?", "cupti-started", "cupti-missing", "cupti-failed", "cupti-conflict",
					     "cupti-dropped", "stacks-native-missing", "cupti-no-driver",
					     "capture-start", "capture-stop", "cupti-shared",
					     "capture-on",    "capture-off", "hooks-absent",
					     "queries-sampled" };
	sqlite3_stmt *st = s->st[ST_STATUS];
	int ret = 0;

	if (begin(s) < 0)
		return -EIO;
	sqlite3_bind_int64(st, 1, proc_id);
	sqlite3_bind_int64(st, 2, pid);
	sqlite3_bind_int64(st, 3, (int64_t)w->time_ns);
	sqlite3_bind_text(st, 4, w->code < sizeof(codes) / sizeof(codes[0]) ? codes[w->code] : "?", -1, SQLITE_STATIC);
	sqlite3_bind_int(st, 5, w->err);
	sqlite3_bind_text(st, 6, w->text, -1, SQLITE_TRANSIENT);
	if (sqlite3_step(st) != SQLITE_DONE)
		ret = db_err(s, "insert status");
	sqlite3_reset(st);
	if (ret == 0 && w->code != CPROF_STATUS_CUPTI_STARTED && w->code != CPROF_STATUS_CUPTI_DROPPED &&
	    w->code != CPROF_STATUS_CAPTURE_START && w->code != CPROF_STATUS_CAPTURE_STOP &&
	    w->code != CPROF_STATUS_CAPTURE_ON && w->code != CPROF_STATUS_CAPTURE_OFF &&
	    w->code != CPROF_STATUS_HOOKS_ABSENT && w->code != CPROF_STATUS_QUERIES_SAMPLED)
		ret = cprof_store_meta(s, "gpu_records_note", w->text);
	return ret;
}

int cprof_store_lost(struct cprof_store *s, int64_t proc_id, uint32_t pid, const struct cprof_wire_lost *l,
		     uint64_t time_ns)
{
	int64_t v[] = { proc_id, pid, (int64_t)(time_ns ? time_ns : cprof_now_ns()), (int64_t)l->lost, (int64_t)l->emitted };

	return insert_ints(s, s->st[ST_LOST], v, 5, "insert lost");
}

int cprof_store_cost(struct cprof_store *s, int64_t proc_id, uint32_t pid, const struct cprof_wire_cost *c)
{
	int64_t v[] = { proc_id, pid, (int64_t)c->time_ns, (int64_t)c->hook_calls, (int64_t)c->hook_ns,
			(int64_t)c->sampled_calls, (int64_t)c->stack_calls, (int64_t)c->stack_ns, (int64_t)c->flusher_cpu_ns,
			(int64_t)c->app_run_ns, (int64_t)c->app_wait_ns, (int64_t)c->lost_ring_full, (int64_t)c->lost_cupti,
			(int64_t)c->lost_pipe, (int64_t)c->lost_nested, (int64_t)c->counted_calls, (int64_t)c->counted_ns,
			(int64_t)c->pass_calls, (int64_t)c->pass_ns, (int64_t)c->pass_sq,
			(int64_t)c->pass_launches };

	/* forged totals (a hostile frame) must not overflow a reader's sums: SQLite integers are signed */
	for (size_t i = 2; i < sizeof(v) / sizeof(v[0]); i++)
		if (v[i] < 0)
			v[i] = 0;
	return insert_ints(s, s->st[ST_COST], v, (int)(sizeof(v) / sizeof(v[0])), "insert cost");
}

int cprof_store_count(struct cprof_store *s, int64_t proc_id, uint32_t pid, uint64_t time_ns,
		      const struct cprof_wire_count *c)
{
	int64_t v[] = { proc_id, pid, (int64_t)time_ns, c->api > 0 && c->api < CPROF_API__COUNT ? s->api_name_id[c->api] : 0,
			(int64_t)c->calls };

	return insert_ints(s, s->st[ST_COUNT], v, 5, "insert count");
}

int cprof_store_crash(struct cprof_store *s, int64_t proc_id, uint32_t pid, const struct cprof_wire_crash *c)
{
	int64_t v[] = { proc_id, pid, (int64_t)c->time_ns, c->tid, c->signo, c->code, (int64_t)c->addr, c->flags,
			(int64_t)c->drained };

	return insert_ints(s, s->st[ST_CRASH], v, 9, "insert crash");
}

int cprof_store_crash_call(struct cprof_store *s, int64_t proc_id, const struct cprof_wire_crash_thread *t,
			   int64_t kernel_name_id)
{
	int64_t v[] = { proc_id, t->tid, t->api > 0 && t->api < CPROF_API__COUNT ? s->api_name_id[t->api] : 0, t->ret,
			(int64_t)t->start_ns, (int64_t)t->end_ns, kernel_name_id };

	return insert_ints(s, s->st[ST_CRASH_CALL], v, 7, "insert crash call");
}

static void signal_words(char *buf, size_t len, const char *what, int sig)
{
	const char *abbrev = sig > 0 ? sigabbrev_np(sig) : NULL;

	snprintf(buf, len, "%s%d (SIG%s)", what, sig, abbrev ? abbrev : "?");
}

/* "CUDA error 700 (cudaErrorIllegalAddress) from cudaStreamSynchronize, then " when process id ended
 * after a CUDA call failed (common/ending.h), else "" */
static void cuda_error_words(struct cprof_store *s, sqlite3_stmt *err, int64_t id, char *buf, size_t len)
{
	char words[96];
	int64_t code;
	int api;

	buf[0] = '\0';
	if (err == NULL) {
		if (end_error(s, id, &api, &code)) {
			cprof_name_code(words, sizeof(words), cprof_api_name(api), (int)code);
			snprintf(buf, len, "CUDA error %s from %s, then ", words, cprof_api_name(api));
		}
		return;
	}
	sqlite3_reset(err);
	sqlite3_bind_int64(err, 1, id);
	if (sqlite3_step(err) == SQLITE_ROW) {
		const char *api = (const char *)sqlite3_column_text(err, 2);
		int c = sqlite3_column_int(err, 3);

		cprof_name_code(words, sizeof(words), api ? api : "", c);
		snprintf(buf, len, "CUDA error %s from %s, then ", words, api ? api : "?");
	}
	sqlite3_reset(err);
}

/* After every process ended: PROCESSES.ending of each, from its BYE, its CRASH, and for cprof-run's own
 * child (ppid top_ppid, 0 = unknown) the wait status cprof-run reported; an abnormal end (a signal, a
 * non-zero status, no goodbye) right after a failed CUDA call names that call and its error first. */
int cprof_store_endings(struct cprof_store *s, uint32_t top_ppid, const struct cprof_wire_run_end *run_end)
{
	sqlite3_stmt *sel = NULL, *upd = NULL, *err = NULL;
	int ret = 0;

	if (begin(s) < 0 || flush_all(s) < 0)
		return -EIO;
	if (sqlite3_prepare_v2(s->db, "SELECT p.id, p.ppid, p.byeReason, c.signal, c.flags FROM PROCESSES p"
				      " LEFT JOIN CPROF_CRASH c ON c.processId = p.id GROUP BY p.id", -1, &sel,
			       NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(s->db, "UPDATE PROCESSES SET ending=? WHERE id=?", -1, &upd, NULL) != SQLITE_OK ||
	    /* without the state kept as the rows went in, the query (a scan of every call: no index) */
	    (s->end_inexact && sqlite3_prepare_v2(s->db, cprof_ending_error_sql, -1, &err, NULL) != SQLITE_OK)) {
		ret = db_err(s, "prepare endings");
		goto out;
	}
	while (sqlite3_step(sel) == SQLITE_ROW) {
		const unsigned char *bye = sqlite3_column_text(sel, 2);
		int top = top_ppid && run_end && sqlite3_column_int64(sel, 1) == top_ppid;
		char text[160], sigtext[64], cuda[128] = "", all[300];
		int abnormal = 1;

		if (sqlite3_column_type(sel, 3) != SQLITE_NULL) {
			signal_words(sigtext, sizeof(sigtext), "signal ", sqlite3_column_int(sel, 3));
			if (sqlite3_column_int(sel, 4) & CPROF_CRASH_F_IN_CUDA)
				strncat(sigtext, " inside a CUDA call", sizeof(sigtext) - strlen(sigtext) - 1);
			/* a BYE after the signal: the program's own handler let it go on, or exit()ed */
			snprintf(text, sizeof(text), "%s%s%s", sigtext, bye ? " handled, then " : "", bye ? (const char *)bye : "");
			/* its own handler took the signal and the program went on to exit cleanly (a probe that
			 * catches SIGSEGV, a runtime that maps faults to exceptions): no crash */
			if ((sqlite3_column_int(sel, 4) & CPROF_CRASH_F_APP_HANDLER) && bye && strcmp((const char *)bye, "exit") == 0 &&
			    (!top || (run_end->term_signal == 0 && run_end->exit_status == 0))) {
				snprintf(text, sizeof(text), "exit%s (its own handler took %s and it went on)", top ? ", status 0" : "",
					 sigtext);
				abnormal = 0;
			}
		} else if (bye && strcmp((const char *)bye, "exec") == 0) {
			snprintf(text, sizeof(text), "exec");
			abnormal = 0;
		} else if (bye && strcmp((const char *)bye, "replaced") == 0)
			snprintf(text, sizeof(text), "replaced by a new HELLO (exec without the hooks, or pid reuse)");
		else if (top && run_end->term_signal > 0)
			signal_words(text, sizeof(text), "killed by signal ", run_end->term_signal);
		else if (top && bye) {
			snprintf(text, sizeof(text), "%s, status %d", (const char *)bye, run_end->exit_status);
			abnormal = run_end->exit_status != 0;
		} else if (bye) {
			/* the status of a process cprof-run did not wait for is unknown: not called abnormal */
			snprintf(text, sizeof(text), "%s", (const char *)bye);
			abnormal = 0;
		} else
			snprintf(text, sizeof(text), "no goodbye (killed, or still running)");
		if (abnormal)
			cuda_error_words(s, err, sqlite3_column_int64(sel, 0), cuda, sizeof(cuda));
		snprintf(all, sizeof(all), "%s%s", cuda, text);
		sqlite3_bind_text(upd, 1, all, -1, SQLITE_TRANSIENT);
		sqlite3_bind_int64(upd, 2, sqlite3_column_int64(sel, 0));
		if (sqlite3_step(upd) != SQLITE_DONE) {
			ret = db_err(s, "update ending");
			break;
		}
		sqlite3_reset(upd);
	}
out:
	sqlite3_finalize(sel);
	sqlite3_finalize(upd);
	sqlite3_finalize(err);
	return ret;
}

/* After a failed write SQLite may have rolled the transaction back already; make sure it has. Then move
 * what the WAL holds into the database and empty the WAL, which may free room for the final state. */
void cprof_store_abort(struct cprof_store *s)
{
	int i;

	for (i = 0; i < B__N; i++)
		s->batch[i].n = 0; /* rows of the failed transaction */
	threads_settle(s, 0);
	s->split.inexact = 1; /* its rows were counted */
	if (!sqlite3_get_autocommit(s->db))
		sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
	s->in_txn = 0;
	sqlite3_exec(s->db, "PRAGMA wal_checkpoint(TRUNCATE)", NULL, NULL, NULL);
}

uint64_t cprof_store_rows(const struct cprof_store *s)
{
	return s->rows;
}

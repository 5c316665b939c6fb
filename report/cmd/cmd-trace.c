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
#include "report/cprof.h"
#include "report/term.h"
#include "report/model/model.h"
#include "report/model/ranges.h"
#include "report/model/stacks.h"
#include "report/render/trace.h"

static void usage(FILE *f)
{
	fprintf(f, "usage: cprof trace PROFILE.db -o TRACE.json|- [-f] [-q]\n"
		   "       cprof trace PROFILE.db --per-rank DIR [-f] [-q]\n"
		   "  writes a Chrome trace in Kineto's layout (Perfetto, TensorBoard, Holistic Trace Analysis)\n"
		   "  -o, --output PATH  the trace file (never overwritten unless -f); - writes to standard output\n"
		   "  --per-rank DIR     one trace per rank, DIR/rank-N.json, as HTA's multi-rank analysis reads them\n"
		   "  -f, --force        overwrite existing files\n"
		   "  -q, --quiet        do not say on stderr what was written\n");
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
	if ((ret = trace_exec(t, sql)) < 0)
		return ret;
	for (i = 0; tables[i]; i++) {
		if (!cprof_has_table(t->db, tables[i]))
			continue; /* an older profile: shim_missing_tables makes it empty */
		snprintf(sql, sizeof(sql),
			 "CREATE TEMP VIEW %s AS SELECT * FROM main.%s WHERE processId IN"
			 " (SELECT id FROM main.PROCESSES WHERE rank = %lld)",
			 tables[i], tables[i], (long long)t->rank);
		if ((ret = trace_exec(t, sql)) < 0)
			return ret;
	}
	return 0;
}

static int export_trace(struct trace *t)
{
	int ret;

	/* first: changing temp_store drops existing TEMP tables */
	if ((ret = trace_exec(t, "PRAGMA temp_store=FILE")) < 0 || (ret = rank_filter(t)) < 0 ||
	    (ret = trace_shim_missing_tables(t)) < 0 || (ret = trace_exec(t, index_sql)) < 0)
		return ret;
	ret = trace_prep(t,
		   "SELECT e.correlationId FROM x_ext e JOIN x_gpu g"
		   " ON g.processId = e.processId AND g.correlationId = e.correlationId"
		   " WHERE e.processId = ?1 AND e.externalId = ?2 ORDER BY 1",
		   &t->flows);
	if (ret < 0 || (ret = trace_load_procs(t)) < 0 || (ret = trace_nvtx_index(t)) < 0 ||
	    (ret = trace_load_names(t)) < 0)
		return ret;
	if ((ret = cprof_stacks_load(t->db, &t->stacks)) < 0) {
		pr_err("cannot read the call stacks: %s", sqlite3_errmsg(t->db));
		return ret;
	}
	t->simulated = cprof_meta_int(t->db, "simulated_gpu", 0) == 1;
	choose_base(t);
	trace_write_header(t);
	if ((ret = trace_write_metadata(t)) < 0 || (ret = trace_write_nvtx(t)) < 0 || (ret = trace_write_hooked(t)) < 0 ||
	    (ret = trace_write_api_records(t, "CUPTI_ACTIVITY_KIND_RUNTIME", "cuda_runtime")) < 0 ||
	    (ret = trace_write_api_records(t, "CUPTI_ACTIVITY_KIND_DRIVER", "cuda_driver")) < 0 ||
	    (ret = trace_write_gpu_ops(t, GPU_KERNEL)) < 0 || (ret = trace_write_gpu_ops(t, GPU_MEMCPY)) < 0 ||
	    (ret = trace_write_gpu_ops(t, GPU_MEMSET)) < 0 || (ret = trace_write_overhead(t)) < 0)
		return ret;
	trace_put(t, "\n  ]\n}\n");
	return 0;
}


static void trace_free(struct trace *t)
{
	size_t i;

	for (i = 0; i < t->ndm; i++)
		free(t->dm[i].text);
	free(t->dm);
	free(t->procs);
	cprof_model_free(&t->model);
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
static int export_to(const char *profile, const char *out, int force, int quiet, int64_t rank, int64_t world)
{
	struct trace t = { .first_event = 1, .rank = rank, .world = world };
	int err, ret = CPROF_EXIT_USAGE;

	if (!force && strcmp(out, "-") && access(out, F_OK) == 0) {
		pr_err("%s exists; -f overwrites it", out);
		return CPROF_EXIT_USAGE;
	}
	if (quiet || !strcmp(out, "-"))
		cprof_progress_off();
	cprof_progress_begin("cprof trace: writing the trace");
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
	cprof_progress_end();
	if (!quiet) {
		char what[48];

		snprintf(what, sizeof(what), "%llu events", (unsigned long long)t.events);
		cprof_out_said("cprof trace", out, what);
	}
	ret = CPROF_EXIT_OK;
out:
	cprof_progress_end();
	trace_free(&t);
	return ret;
}

/* --per-rank DIR: DIR/rank-N.json for every rank the profile's processes carry */
static int export_ranks(const char *profile, const char *dir, int force, int quiet)
{
	sqlite3 *db = cprof_profile_open(profile);
	sqlite3_stmt *st = NULL;
	int64_t *ranks = NULL, world = 0;
	size_t n = 0, cap = 0, i;
	int ret = CPROF_EXIT_USAGE, rc;

	if (db == NULL)
		return CPROF_EXIT_USAGE;
	if (sqlite3_prepare_v2(db, "SELECT DISTINCT rank FROM PROCESSES WHERE rank IS NOT NULL ORDER BY rank", -1, &st,
			       NULL) != SQLITE_OK) {
		pr_err("%s: cannot read its processes: %s", profile, sqlite3_errmsg(db));
		goto out;
	}
	/* every rank: it stopped at 4096 without a word (issue 21, item 11) */
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (cprof_grow(&ranks, &cap, n, sizeof(*ranks)) < 0) {
			pr_err("out of memory");
			goto out;
		}
		ranks[n++] = sqlite3_column_int64(st, 0);
	}
	if (rc != SQLITE_DONE) {
		pr_err("%s: cannot read its processes: %s", profile, sqlite3_errmsg(db));
		goto out;
	}
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
		if ((ret = export_to(profile, path, force, 1, ranks[i], world)) != CPROF_EXIT_OK)
			goto out;
	}
	if (!quiet)
		fprintf(stderr, "cprof trace: wrote %zu traces, %s/rank-N.json\n", n, cprof_tx(dir));
	ret = CPROF_EXIT_OK;
out:
	free(ranks);
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
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *out = NULL, *dir = NULL;
	int opt, force = 0, quiet = 0;

	while ((opt = getopt_long(argc, argv, "o:fqh", opts, NULL)) != -1) {
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
		case 'q':
			quiet = 1;
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
	return dir ? export_ranks(argv[optind], dir, force, quiet) : export_to(argv[optind], out, force, quiet, -1, 1);
}

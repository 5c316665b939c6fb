/* cprof_model_open: the one place report, html, stacks and info read a profile; the model's arrays, then the parts they ask for, then the profile is closed. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "report/cprof.h"
#include "report/model/parts.h"
#include "report/model/report.h"

static void load_meta(sqlite3 *db, struct cprof_meta_facts *f)
{
	char sim[16];

	f->complete = cprof_meta_int(db, "complete", 0) == 1;
	f->finalised = cprof_meta_int(db, "finalised", 0) == 1;
	f->simulated = !strcmp(cprof_meta(db, "simulated_gpu", sim, sizeof(sim), "0"), "1");
	f->exit_status = cprof_meta_int(db, "exit_status", -1);
	f->lost_events = cprof_meta_int(db, "lost_events", -1);
	f->lost_known = f->lost_events >= 0;
	f->lost_events = f->lost_known ? f->lost_events : 0;
	f->nvtx_events = cprof_meta_int(db, "nvtx_events", 0);
	f->processes = cprof_meta_int(db, "processes", 0);
	f->events = cprof_meta_int(db, "events", 0);
	f->lost_spool_full = cprof_meta_int(db, "lost_spool_full", 0);
	f->lost_unstored = cprof_meta_int(db, "lost_unstored", 0);
	f->max_size = cprof_meta_int(db, "max_size", 0);
	f->max_size_cut_ns = cprof_meta_int(db, "max_size_cut_ns", 0);
	f->max_size_unrecorded = cprof_meta_int(db, "max_size_unrecorded", 0);
	cprof_meta(db, "command", f->command, sizeof(f->command), "?");
	cprof_meta(db, "incomplete_reason", f->reason, sizeof(f->reason), "");
	cprof_meta(db, "gpu_records_note", f->gpu_note, sizeof(f->gpu_note), "");
	f->calls_program = cprof_meta_int(db, "calls_by_program", -1);
	f->calls_in_libs = cprof_meta_int(db, "calls_inside_libraries", -1);
	f->calls_cupti_only = cprof_meta_int(db, "calls_seen_only_by_cupti", -1);
	f->calls_stored = f->finalised && f->calls_program >= 0 && f->calls_in_libs >= 0 && f->calls_cupti_only >= 0;
	if (cprof_cupti_shared(db, &f->cupti_shared) < 0)
		memset(&f->cupti_shared, 0, sizeof(f->cupti_shared));
}

static void load_counts(sqlite3 *db, struct cprof_meta_facts *f)
{
	f->kernels = cprof_query_int(db, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL", 0);
	f->memcpys = cprof_query_int(db, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMCPY", 0);
	f->memsets = cprof_query_int(db, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMSET", 0);
	f->api = cprof_query_int(db, "SELECT count(*) FROM CPROF_API", 0);
	f->launch_api = cprof_query_int(db, "SELECT count(*) FROM CPROF_API WHERE class='launch'", 0);
	f->memcpy_api = cprof_query_int(db, "SELECT count(*) FROM CPROF_API WHERE class='memcpy'", 0);
	f->memset_api = cprof_query_int(db, "SELECT count(*) FROM CPROF_API WHERE class='memset'", 0);
	f->proc_rows = cprof_query_int(db, "SELECT count(*) FROM PROCESSES", 0);
	f->nvtx_rows = cprof_has_table(db, "NVTX_EVENTS") ? cprof_query_int(db, "SELECT count(*) FROM NVTX_EVENTS", 0) : 0;
}

static void load_facts(sqlite3 *db, struct cprof_meta_facts *f)
{
	f->killed = cprof_killed_processes(db);
	f->unaccounted = cprof_query_int(db, "SELECT coalesce(sum(max(eventsEmitted - eventsRecorded - lostEvents, 0)), 0)"
					     " FROM PROCESSES WHERE eventsEmitted IS NOT NULL", 0);
	f->has_windows = cprof_has_table(db, "CPROF_WINDOWS");
	f->windows = f->has_windows ? cprof_query_int(db, "SELECT count(*) FROM CPROF_WINDOWS", 0) : 0;
}

static int fail(struct cprof_model_extra *x, sqlite3 *db, int ret, const char *what)
{
	snprintf(x->err, sizeof(x->err), "%s: %s", what,
		 ret == -EIO || ret == -ERANGE ? cprof_model_errmsg(db) : strerror(-ret));
	return ret;
}

static int load_parts(sqlite3 *db, const struct cprof_model_opts *o, struct cprof_model *m);

int cprof_model_open(const char *path, const struct cprof_model_opts *o, struct cprof_model *m)
{
	sqlite3 *db;
	int ret;

	memset(m, 0, sizeof(*m));
	if ((db = cprof_profile_open(path)) == NULL)
		return -ENOENT;
	ret = load_parts(db, o, m);
	/* what the commands may want to say about a failure, before the handle goes */
	if (m->x)
		snprintf(m->x->why, sizeof(m->x->why), "%s", cprof_model_errmsg(db));
	sqlite3_close(db);
	return ret;
}

static int load_parts(sqlite3 *db, const struct cprof_model_opts *o, struct cprof_model *m)
{
	struct cprof_model_extra *x;
	unsigned p = o->parts;
	int ret;

	if ((x = calloc(1, sizeof(*x))) == NULL)
		return -ENOMEM;
	x->parts = p;
	load_meta(db, &x->meta);
	if (p & CPROF_MODEL_COUNTS)
		load_counts(db, &x->meta);
	if (p & (CPROF_MODEL_COUNTS | CPROF_MODEL_FACTS))
		load_facts(db, &x->meta);
	ret = p & CPROF_MODEL_NO_ARRAYS ? 0 : cprof_model_load(db, p & CPROF_MODEL_OWN_PARTS, m);
	m->x = x;
	if (ret < 0)
		return fail(x, db, ret, "cannot read the profile");
	if ((p & CPROF_MODEL_STACKS) &&
	    ((ret = cprof_stacks_load(db, &x->stacks)) < 0 ||
	     (ret = cprof_attr_build3(db, &x->stacks, 0, &x->ops, &x->sites, &x->chains)) < 0))
		return fail(x, db, ret, "cannot read the call stacks");
	if ((p & CPROF_MODEL_TORCH_OPS) &&
	    ((ret = cprof_op_ranges_load(db, 0, &x->op_ranges)) < 0 || (ret = cprof_ops_build(&x->op_ranges, &x->torch_ops)) < 0))
		return fail(x, db, ret, "cannot read the op ranges");
	/* cprof_ranges_build_by says why it failed */
	if ((p & CPROF_MODEL_RANGES) && (ret = cprof_ranges_build_by(db, 0, o->ranges_by_name, &x->ranges)) < 0)
		return ret;
	if ((p & CPROF_MODEL_FLAME) && (ret = cprof_flame_build(db, o->flame_weight, &x->flame)) < 0)
		return fail(x, db, ret, "cannot read the call stacks");
	return 0;
}

void cprof_model_close(struct cprof_model *m)
{
	struct cprof_model_extra *x = m->x;

	cprof_model_free(m);
	if (x == NULL)
		return;
	cprof_attr_free(&x->ops);
	cprof_attr_free(&x->sites);
	cprof_attr_free(&x->chains);
	cprof_stacks_free(&x->stacks);
	cprof_ranges_free(&x->ranges);
	cprof_op_ranges_free(&x->op_ranges);
	cprof_ops_free(&x->torch_ops);
	cprof_flame_free(&x->flame);
	free(x);
}

const char *cprof_lost_note(const struct cprof_meta_facts *f, int killed)
{
	if (!f->lost_known)
		return " (the collector wrote no count: it did not finish the profile)";
	return killed ? " (a process was killed: what it had not sent is lost uncounted)" : "";
}

const char *cprof_meta_command(const struct cprof_meta_facts *f, char *buf, size_t size)
{
	size_t n = strlen(f->command);

	if (n >= size)
		n = size - 1;
	memcpy(buf, f->command, n);
	buf[n] = '\0';
	return buf;
}

const char *cprof_model_why(const struct cprof_model *m)
{
	return m->x ? m->x->why : "not opened";
}

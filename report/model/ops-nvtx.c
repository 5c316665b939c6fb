/* ATen ops from PyTorch's own op ranges (cprof-run --torch-ops): Self/total CPU and CUDA per op, as torch.profiler. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/wire.h"
#include "report/cprof.h"
#include "report/model/model.h"
#include "report/model/ops-nvtx.h"

struct oprange {
	int64_t proc, tid, start, end, text;
	const char *name; /* into names */
	double child_ns, self_cuda, cuda_total;
	uint64_t gpu_ops;
};


/* keys of the sorts: op ranges by (process, thread, start, end descending), table order within */
static int64_t or_proc(const void *ctx, uint32_t i)
{
	return ((const struct cprof_op_range *)ctx)[i].proc;
}

static int64_t or_tid(const void *ctx, uint32_t i)
{
	return ((const struct cprof_op_range *)ctx)[i].tid;
}

static int64_t or_start(const void *ctx, uint32_t i)
{
	return ((const struct cprof_op_range *)ctx)[i].start;
}

static int64_t or_end_desc(const void *ctx, uint32_t i)
{
	int64_t e = ((const struct cprof_op_range *)ctx)[i].end;

	return e == INT64_MIN ? INT64_MAX : -e;
}

/* GPU work by (process, tid, time) */
static int cmp_gpu(const void *a, const void *b)
{
	const struct cprof_op_gpu *x = a, *y = b;

	if (x->proc != y->proc)
		return x->proc < y->proc ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return x->at < y->at ? -1 : x->at > y->at;
}


/* StringIds' ids and values (its INTEGER PRIMARY KEY: a rowid-order scan is id order) */
static int read_strings(sqlite3 *db, struct cprof_string **out, size_t *n)
{
	sqlite3_stmt *st = NULL;
	size_t cap = 0;
	int rc, ret = -EIO;

	*out = NULL;
	*n = 0;
	if (sqlite3_prepare_v2(db, "SELECT id, value FROM StringIds", -1, &st, NULL) != SQLITE_OK)
		goto out;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const unsigned char *v = sqlite3_column_text(st, 1);

		if (cprof_grow(out, &cap, *n, sizeof(**out)) < 0 ||
		    ((*out)[*n].value = v ? strdup((const char *)v) : NULL, v && (*out)[*n].value == NULL)) {
			ret = -ENOMEM;
			goto out;
		}
		(*out)[(*n)++].id = sqlite3_column_int64(st, 0);
	}
	ret = rc == SQLITE_DONE ? 0 : -EIO;
out:
	sqlite3_finalize(st);
	return ret;
}

static const struct cprof_string *find_string(const struct cprof_string *s, size_t n, int64_t id)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && s[lo].id == id ? &s[lo] : NULL;
}

/* The GPU work each hooked call launched, at the call's start on its thread (API_GPU's rows: a call whose
 * name is in StringIds, each external-correlation row of its id, each GPU op of that CUPTI id), by
 * (process, thread, start): each table one scan in rowid order, the joins in memory. */
static int read_gpu(sqlite3 *db, int64_t proc, const struct cprof_string *str, size_t nstr, struct cprof_op_ranges *r)
{
	static const char *const tables[] = { "CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY",
					      "CUPTI_ACTIVITY_KIND_MEMSET" };
	struct cprof_pkv *ex = NULL, *work = NULL; /* (proc, CUPTI id, our id); (proc, our id, GPU ns) */
	size_t nex = 0, capex = 0, nwork = 0, capwork = 0, cap = 0, i;
	sqlite3_stmt *st = NULL;
	int rc, ret = -EIO, t;

	if (sqlite3_prepare_v2(db, "SELECT processId, externalId, correlationId, externalKind FROM"
				   " CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION", -1, &st, NULL) != SQLITE_OK)
		goto out;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (sqlite3_column_type(st, 0) == SQLITE_NULL || sqlite3_column_type(st, 1) == SQLITE_NULL ||
		    sqlite3_column_type(st, 2) == SQLITE_NULL || sqlite3_column_type(st, 3) == SQLITE_NULL ||
		    sqlite3_column_int64(st, 3) != 5)
			continue;
		if (cprof_pkv_add(&ex, &nex, &capex, sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 2),
			    sqlite3_column_int64(st, 1)) < 0) {
			ret = -ENOMEM;
			goto out;
		}
	}
	sqlite3_finalize(st);
	st = NULL;
	if (rc != SQLITE_DONE)
		goto out;
	cprof_sort(ex, nex, sizeof(*ex), cprof_pkv_cmp);
	for (t = 0; t < 3; t++) {
		char sql[128];

		snprintf(sql, sizeof(sql), "SELECT processId, correlationId, end - start FROM %s", tables[t]);
		if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
			goto out;
		while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
			int64_t p = sqlite3_column_int64(st, 0), c = sqlite3_column_int64(st, 1);

			if (sqlite3_column_type(st, 0) == SQLITE_NULL || sqlite3_column_type(st, 1) == SQLITE_NULL)
				continue;
			for (i = cprof_pkv_lower(ex, nex, p, c); i < nex && ex[i].proc == p && ex[i].key == c; i++)
				if (cprof_pkv_add(&work, &nwork, &capwork, p, ex[i].v, sqlite3_column_int64(st, 2)) < 0) {
					ret = -ENOMEM;
					goto out;
				}
		}
		sqlite3_finalize(st);
		st = NULL;
		if (rc != SQLITE_DONE)
			goto out;
	}
	cprof_sort(work, nwork, sizeof(*work), cprof_pkv_cmp);
	if (sqlite3_prepare_v2(db, "SELECT processId, tid, start, correlationId, nameId FROM CPROF_API", -1, &st, NULL) !=
	    SQLITE_OK)
		goto out;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t p = sqlite3_column_int64(st, 0), x = sqlite3_column_int64(st, 3);

		if (sqlite3_column_type(st, 0) == SQLITE_NULL || sqlite3_column_type(st, 3) == SQLITE_NULL ||
		    sqlite3_column_type(st, 4) == SQLITE_NULL || (proc != 0 && p != proc) ||
		    find_string(str, nstr, sqlite3_column_int64(st, 4)) == NULL)
			continue;
		for (i = cprof_pkv_lower(work, nwork, p, x); i < nwork && work[i].proc == p && work[i].key == x; i++) {
			if (cprof_grow(&r->g, &cap, r->ng, sizeof(*r->g)) < 0) {
				ret = -ENOMEM;
				goto out;
			}
			r->g[r->ng++] = (struct cprof_op_gpu){ .proc = p, .tid = sqlite3_column_int64(st, 1),
							       .at = sqlite3_column_int64(st, 2), .ns = (double)work[i].v };
		}
	}
	if (rc != SQLITE_DONE)
		goto out;
	cprof_sort(r->g, r->ng, sizeof(*r->g), cmp_gpu);
	ret = 0;
out:
	sqlite3_finalize(st);
	free(ex);
	free(work);
	return ret;
}

static int cmp_text(const void *a, const void *b)
{
	const struct oprange *x = a, *y = b;

	return x->text < y->text ? -1 : x->text > y->text;
}

static int cmp_row(const void *a, const void *b)
{
	const struct cprof_op_row *x = a, *y = b;

	if (x->cpu_total_ns != y->cpu_total_ns)
		return x->cpu_total_ns < y->cpu_total_ns ? 1 : -1;
	return strcmp(x->name, y->name);
}

/* 1 when (p, t, at) comes after where range r ends on its thread (or r is on another thread) */
static int past(const struct oprange *r, int64_t p, int64_t t, int64_t at)
{
	return r->proc != p || r->tid != t || r->end < at;
}

/* One sweep per thread over ops and launches in time order: the stack holds the ops open at that moment
 * (push/pop ranges nest), the innermost one gets Self, all of them Total. */
static int attribute(struct oprange *o, size_t no, const struct cprof_op_gpu *g, size_t ng)
{
	size_t *stack = NULL, depth = 0, cap = 0, i = 0, j = 0;

	while (i < no || j < ng) {
		int op = j >= ng || (i < no && (o[i].proc < g[j].proc || (o[i].proc == g[j].proc &&
			 (o[i].tid < g[j].tid || (o[i].tid == g[j].tid && o[i].start <= g[j].at)))));
		int64_t p = op ? o[i].proc : g[j].proc, t = op ? o[i].tid : g[j].tid, at = op ? o[i].start : g[j].at;

		while (depth && past(&o[stack[depth - 1]], p, t, at))
			depth--;
		if (!op) {
			for (size_t k = 0; k < depth; k++)
				o[stack[k]].cuda_total += g[j].ns;
			if (depth) {
				o[stack[depth - 1]].self_cuda += g[j].ns;
				o[stack[depth - 1]].gpu_ops++;
			}
			j++;
			continue;
		}
		if (depth)
			o[stack[depth - 1]].child_ns += (double)(o[i].end - o[i].start);
		if (cprof_grow(&stack, &cap, depth, sizeof(*stack)) < 0) {
			free(stack);
			return -ENOMEM;
		}
		stack[depth++] = i++;
	}
	free(stack);
	return 0;
}

int cprof_op_ranges_load(sqlite3 *db, int64_t proc, struct cprof_op_ranges *r)
{
	struct cprof_string *str = NULL;
	struct cprof_op_range *v = NULL;
	uint32_t *ix = NULL;
	size_t cap = 0, nstr = 0, i, n = 0;
	sqlite3_stmt *st = NULL;
	int rc, ret = 0;

	memset(r, 0, sizeof(*r));
	if (!cprof_has_table(db, "NVTX_EVENTS"))
		return 0;
	if ((ret = read_strings(db, &str, &nstr)) < 0)
		goto out;
	ret = -EIO;
	if (sqlite3_prepare_v2(db, "SELECT processId, tid, start, end, textId, categoryId, eventType FROM NVTX_EVENTS", -1,
			       &st, NULL) != SQLITE_OK)
		goto out;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *type = (const char *)sqlite3_column_text(st, 6);
		const struct cprof_string *s;

		/* ATen op ranges that ended, of process proc (0: all) */
		if (sqlite3_column_type(st, 5) == SQLITE_NULL || sqlite3_column_int64(st, 5) != CPROF_NVTX_CATEGORY_TORCH_OP ||
		    type == NULL || strcmp(type, "range") || sqlite3_column_type(st, 3) == SQLITE_NULL ||
		    sqlite3_column_int64(st, 2) < 0 || (proc != 0 && sqlite3_column_int64(st, 0) != proc))
			continue;
		if (cprof_grow(&v, &cap, n, sizeof(*v)) < 0) {
			ret = -ENOMEM;
			goto out;
		}
		v[n] = (struct cprof_op_range){ .proc = sqlite3_column_int64(st, 0), .tid = sqlite3_column_int64(st, 1),
						.start = sqlite3_column_int64(st, 2), .end = sqlite3_column_int64(st, 3),
						.text = sqlite3_column_int64(st, 4) };
		s = sqlite3_column_type(st, 4) == SQLITE_NULL ? NULL : find_string(str, nstr, v[n].text);
		v[n].name = strdup(s && s->value ? s->value : "(no message)");
		if (v[n++].name == NULL) {
			ret = -ENOMEM;
			goto out;
		}
	}
	sqlite3_finalize(st);
	st = NULL;
	if (rc != SQLITE_DONE)
		goto out;
	ret = 0;
	if (n == 0)
		goto out;
	/* by (process, thread, start, end descending), table order within: stable sorts, the minor key first */
	if ((ix = malloc(n * sizeof(*ix))) == NULL || (r->r = malloc(n * sizeof(*r->r))) == NULL) {
		ret = -ENOMEM;
		goto out;
	}
	for (i = 0; i < n; i++)
		ix[i] = (uint32_t)i;
	if (cprof_radix_sort_ix(ix, n, or_end_desc, v) < 0 || cprof_radix_sort_ix(ix, n, or_start, v) < 0 ||
	    cprof_radix_sort_ix(ix, n, or_tid, v) < 0 || cprof_radix_sort_ix(ix, n, or_proc, v) < 0) {
		ret = -ENOMEM;
		goto out;
	}
	for (i = 0; i < n; i++)
		r->r[i] = v[ix[i]];
	r->n = n;
	n = 0; /* the names are r's now */
	ret = read_gpu(db, proc, str, nstr, r);
out:
	sqlite3_finalize(st);
	for (i = 0; i < n; i++)
		free(v[i].name);
	free(v);
	free(ix);
	for (i = 0; i < nstr; i++)
		free(str[i].value);
	free(str);
	if (ret < 0)
		cprof_op_ranges_free(r);
	return ret;
}

void cprof_op_ranges_free(struct cprof_op_ranges *r)
{
	for (size_t i = 0; i < r->n; i++)
		free(r->r[i].name);
	free(r->r);
	free(r->g);
	memset(r, 0, sizeof(*r));
}

/* the table of the ops that began in [from, to] */
static int build(const struct cprof_op_ranges *in, int64_t from, int64_t to, struct cprof_op_table *t)
{
	struct oprange *o = NULL;
	size_t no = 0, i;
	int ret = 0;

	memset(t, 0, sizeof(*t));
	if (in->n == 0)
		return 0;
	if ((o = calloc(in->n, sizeof(*o))) == NULL)
		return -ENOMEM;
	for (i = 0; i < in->n; i++)
		if (in->r[i].start >= from && in->r[i].start <= to)
			o[no++] = (struct oprange){ .proc = in->r[i].proc, .tid = in->r[i].tid, .start = in->r[i].start,
						    .end = in->r[i].end, .text = in->r[i].text, .name = in->r[i].name };
	if (no == 0)
		goto out;
	if ((ret = attribute(o, no, in->g, in->ng)) < 0)
		goto out;

	/* one row per name (the text id: one string per name in the profile) */
	qsort(o, no, sizeof(*o), cmp_text);
	t->rows = calloc(no, sizeof(*t->rows));
	if (t->rows == NULL) {
		ret = -ENOMEM;
		goto out;
	}
	for (i = 0; i < no; i++) {
		struct cprof_op_row *r;
		double dur = (double)(o[i].end - o[i].start);

		if (i == 0 || o[i].text != o[i - 1].text) {
			if ((t->rows[t->n].name = strdup(o[i].name)) == NULL) {
				ret = -ENOMEM;
				goto out;
			}
			t->n++;
		}
		r = &t->rows[t->n - 1];
		r->calls++;
		r->gpu_ops += o[i].gpu_ops;
		r->cpu_total_ns += dur;
		r->self_cpu_ns += dur - o[i].child_ns;
		r->self_cuda_ns += o[i].self_cuda;
		r->cuda_total_ns += o[i].cuda_total;
		t->self_cpu_ns += dur - o[i].child_ns;
		t->self_cuda_ns += o[i].self_cuda;
	}
	t->ranges = no;
	qsort(t->rows, t->n, sizeof(*t->rows), cmp_row);
out:
	free(o);
	if (ret < 0)
		cprof_ops_free(t);
	return ret;
}

int cprof_ops_build(const struct cprof_op_ranges *r, struct cprof_op_table *t)
{
	return build(r, 0, INT64_MAX, t);
}

static int cmp_self(const void *a, const void *b)
{
	const struct cprof_op_row *x = a, *y = b;

	return x->self_cpu_ns < y->self_cpu_ns ? 1 : x->self_cpu_ns > y->self_cpu_ns ? -1 : strcmp(x->name, y->name);
}

int cprof_ops_evidence(const struct cprof_op_ranges *r, uint64_t from, uint64_t to, char *out, size_t size)
{
	struct cprof_op_table t;
	size_t i, o;
	char d[32], w[32];
	int ret;

	out[0] = '\0';
	if ((ret = build(r, (int64_t)from, (int64_t)to, &t)) < 0 || t.n == 0)
		return ret;
	qsort(t.rows, t.n, sizeof(*t.rows), cmp_self);
	cprof_fmt_dur(w, sizeof(w), t.self_cpu_ns);
	o = (size_t)snprintf(out, size, "host time in ATen ops %s (%.0f%% of the window), most of it in", w,
			     to > from ? 100.0 * t.self_cpu_ns / (double)(to - from) : 0.0);
	for (i = 0; i < t.n && i < 3 && o < size; i++) {
		char name[64];
		size_t k;

		/* the op's name is the program's text: printable ASCII only in a verdict line */
		for (k = 0; t.rows[i].name[k] && k < sizeof(name) - 1; k++)
			name[k] = t.rows[i].name[k] >= 0x20 && t.rows[i].name[k] < 0x7f ? t.rows[i].name[k] : '?';
		name[k] = '\0';
		cprof_fmt_dur(d, sizeof(d), t.rows[i].self_cpu_ns);
		o += (size_t)snprintf(out + o, size - o, "%s %s Self CPU %s in %llu call%s", i ? "," : "", name, d,
				      (unsigned long long)t.rows[i].calls, t.rows[i].calls == 1 ? "" : "s");
	}
	cprof_ops_free(&t);
	return 0;
}

void cprof_ops_free(struct cprof_op_table *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->rows[i].name);
	free(t->rows);
	memset(t, 0, sizeof(*t));
}

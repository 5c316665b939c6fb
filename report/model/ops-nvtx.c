/* ATen ops from PyTorch's own op ranges (cprof-run --torch-ops): Self/total CPU and CUDA per op, as torch.profiler. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/wire.h"
#include "report/cprof.h"
#include "report/model/ops-nvtx.h"

struct oprange {
	int64_t proc, tid, start, end, text;
	const char *name; /* into names */
	double child_ns, self_cuda, cuda_total;
	uint64_t gpu_ops;
};


static const char ops_sql[] =
	"SELECT n.processId, n.tid, n.start, n.end, n.textId, coalesce(s.value, '(no message)') FROM NVTX_EVENTS n"
	" LEFT JOIN StringIds s ON s.id = n.textId WHERE n.categoryId = ?1 AND n.eventType = 'range'"
	" AND n.end IS NOT NULL AND (?2 = 0 OR n.processId = ?2) AND n.start >= ?3 AND n.start <= ?4"
	" ORDER BY 1, 2, 3, 4 DESC";
/* the GPU work each hooked call launched, at the call's start on its thread */
static const char gpu_sql[] =
	"SELECT a.processId, a.tid, a.start, g.end - g.start FROM API_GPU g JOIN CPROF_API a ON a.id = g.apiId"
	" WHERE (?1 = 0 OR a.processId = ?1) ORDER BY 1, 2, 3";

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
	sqlite3_stmt *st = NULL;
	size_t cap = 0;
	int ret = 0;

	memset(r, 0, sizeof(*r));
	if (!cprof_has_table(db, "NVTX_EVENTS"))
		return 0;
	if (sqlite3_prepare_v2(db, ops_sql, -1, &st, NULL) != SQLITE_OK) {
		ret = -EIO;
		goto out;
	}
	sqlite3_bind_int64(st, 1, CPROF_NVTX_CATEGORY_TORCH_OP);
	sqlite3_bind_int64(st, 2, proc);
	sqlite3_bind_int64(st, 3, 0);
	sqlite3_bind_int64(st, 4, INT64_MAX);
	while (sqlite3_step(st) == SQLITE_ROW) {
		if (cprof_grow(&r->r, &cap, r->n, sizeof(*r->r)) < 0) {
			ret = -ENOMEM;
			goto out;
		}
		r->r[r->n] = (struct cprof_op_range){ .proc = sqlite3_column_int64(st, 0), .tid = sqlite3_column_int64(st, 1),
						      .start = sqlite3_column_int64(st, 2), .end = sqlite3_column_int64(st, 3),
						      .text = sqlite3_column_int64(st, 4) };
		r->r[r->n].name = strdup((const char *)sqlite3_column_text(st, 5));
		if (r->r[r->n++].name == NULL) {
			ret = -ENOMEM;
			goto out;
		}
	}
	sqlite3_finalize(st);
	st = NULL;
	if (r->n == 0)
		goto out;
	cap = 0;
	if (sqlite3_prepare_v2(db, gpu_sql, -1, &st, NULL) != SQLITE_OK) {
		ret = -EIO;
		goto out;
	}
	sqlite3_bind_int64(st, 1, proc);
	while (sqlite3_step(st) == SQLITE_ROW) {
		if (cprof_grow(&r->g, &cap, r->ng, sizeof(*r->g)) < 0) {
			ret = -ENOMEM;
			goto out;
		}
		r->g[r->ng++] = (struct cprof_op_gpu){ .proc = sqlite3_column_int64(st, 0), .tid = sqlite3_column_int64(st, 1),
						       .at = sqlite3_column_int64(st, 2), .ns = sqlite3_column_double(st, 3) };
	}
out:
	sqlite3_finalize(st);
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

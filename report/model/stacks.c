/* Call stacks of a profile read back: the ATen dispatch chain, the call site, and tables by op and by call site. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "report/cprof.h"
#include "report/model/model.h"
#include "report/model/stacks.h"

#define ARROW " \xe2\x86\x92 " /* " → " */

/* "at::_ops::mm::call(...)" -> "aten::mm". ATen's op structs are named name_overload (add_Tensor,
 * addmm_out): the overload is dropped when it is recognisable (capitalised, or "out"). */
int cprof_aten_op(const char *demangled, char *out, size_t size)
{
	const char *p = strstr(demangled, "at::_ops::"), *e;
	size_t n;

	if (p == NULL || (p != demangled && p[-1] != ' ' && p[-1] != '('))
		return 0;
	p += strlen("at::_ops::");
	e = strstr(p, "::");
	if (e == NULL || (strncmp(e, "::call(", 7) && strncmp(e, "::redispatch(", 13)))
		return 0;
	n = (size_t)(e - p);
	for (;;) {
		const char *u = memrchr(p, '_', n);

		if (u == NULL || u == p)
			break;
		if ((u[1] >= 'A' && u[1] <= 'Z') || (n - (size_t)(u - p) == 4 && !strncmp(u, "_out", 4)))
			n = (size_t)(u - p);
		else
			break;
	}
	if (n == 0 || n + 7 > size)
		return 0;
	memcpy(out, "aten::", 6);
	memcpy(out + 6, p, n);
	out[6 + n] = '\0';
	return 1;
}

/* inductor's output code: DIR/xy/cxy<hash>.py in its cache (torchinductor_USER or TORCHINDUCTOR_CACHE_DIR) */
static int py_is_inductor_output(const char *file)
{
	const char *base = strrchr(file, '/'), *p;
	size_t n;

	if (base == NULL || base - file < 3 || base[-3] != '/' || base[1] != 'c' || base[2] != base[-2] ||
	    base[3] != base[-1])
		return 0;
	for (p = base + 1; *p && *p != '.'; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9')))
			return 0;
	n = (size_t)(p - base - 1);
	return n >= 40 && !strcmp(p, ".py");
}

/* Library and interpreter files are not where the user's code is: the call site is the innermost other one.
 * Code generated at run time is not either: Triton's and inductor's launchers (compiled from a "<string>") and
 * inductor's output code; the user's line is then the compiled function's own. */
static int py_is_library(const char *file)
{
	return file == NULL || strstr(file, "/site-packages/") || strstr(file, "/dist-packages/") ||
	       strstr(file, "/lib/python3") || !strncmp(file, "<frozen", 7) || !strcmp(file, "<string>") ||
	       py_is_inductor_output(file);
}

static const char *basename_of(const char *path)
{
	const char *s = path ? strrchr(path, '/') : NULL;

	return s ? s + 1 : path ? path : "?";
}

/* Native frames inside the CUDA libraries and cprof are the call's machinery, not its caller. */
static int native_is_cuda(const char *module)
{
	const char *b = basename_of(module);

	return !strncmp(b, "libcudart", 9) || !strncmp(b, "libcublas", 9) || !strncmp(b, "libcudnn", 8) ||
	       !strncmp(b, "libcprof", 8) || !strncmp(b, "libcuda.", 8) || !strncmp(b, "libnccl", 7) ||
	       !strncmp(b, "libffi", 6) || !strncmp(b, "libsimgpu", 9);
}

struct frame_row {
	int64_t proc, stack;
	int python;
	int level;
	char *module, *symbol, *file, *func;
	int64_t offset, line;
};

static char *dup_col(sqlite3_stmt *st, int i)
{
	const unsigned char *t = sqlite3_column_text(st, i);

	return t ? strdup((const char *)t) : NULL;
}

static int cmp_stack(const void *a, const void *b)
{
	const struct cprof_stack *x = a, *y = b;

	if (x->proc != y->proc)
		return x->proc < y->proc ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

/* Builds the derived strings of one stack from its frames (python first, each innermost first). */
static int finish_stack(struct cprof_stack *s, struct frame_row *fr, size_t n)
{
	char chain[1024] = "", op[256], last[256] = "", buf[1024];
	size_t i, len = 0;
	const struct frame_row *site = NULL, *inner_py = NULL, *native_site = NULL;

	/* the dispatch chain reads outermost first; redispatch through autograd repeats an op: once */
	for (i = n; i-- > 0;) {
		char *d;

		/* only ATen op entries are wanted: their mangled names spell the _ops namespace */
		if (fr[i].python || fr[i].symbol == NULL || strstr(fr[i].symbol, "4_ops") == NULL)
			continue;
		d = cprof_demangle(fr[i].symbol);
		/* a chain too long for the buffer keeps its outer ops whole */
		if (d && cprof_aten_op(d, op, sizeof(op)) && strcmp(op, last) != 0 &&
		    len + strlen(ARROW) + strlen(op) < sizeof(chain)) {
			len += snprintf(chain + len, sizeof(chain) - len, "%s%s", len ? ARROW : "", op);
			snprintf(last, sizeof(last), "%s", op);
		}
		free(d);
	}
	for (i = 0; i < n; i++) {
		if (fr[i].python) {
			if (inner_py == NULL)
				inner_py = &fr[i];
			if (site == NULL && !py_is_library(fr[i].file))
				site = &fr[i];
		} else if (native_site == NULL && !native_is_cuda(fr[i].module) &&
			   !(fr[i].symbol && strstr(fr[i].symbol, "__device_stub__"))) {
			/* nvcc's generated launch stub is the <<<>>> itself; its caller is the call site */
			native_site = &fr[i];
		}
	}
	if (site == NULL)
		site = inner_py;
	s->ops = chain[0] ? strdup(chain) : NULL;
	if (site) {
		snprintf(buf, sizeof(buf), "%s:%lld %s", site->file ? site->file : "?", (long long)site->line,
			 site->func ? site->func : "?");
		s->callsite = strdup(buf);
		s->python = 1;
	} else if (native_site) {
		char *d = native_site->symbol ? cprof_demangle(native_site->symbol) : NULL;
		char shortd[160];

		if (d) {
			cprof_shorten(d, shortd, sizeof(shortd));
			snprintf(buf, sizeof(buf), "%s (%s)", shortd, basename_of(native_site->module));
		} else
			snprintf(buf, sizeof(buf), "%s+0x%llx", basename_of(native_site->module),
				 (unsigned long long)native_site->offset);
		free(d);
		s->callsite = strdup(buf);
	}
	for (i = 0; i < n && fr[i].python; i++)
		;
	s->py = calloc(i + 1, sizeof(char *));
	if (s->py == NULL)
		return -ENOMEM;
	for (s->npy = 0; s->npy < i; s->npy++) {
		snprintf(buf, sizeof(buf), "%s(%lld): %s", fr[s->npy].file ? fr[s->npy].file : "?",
			 (long long)fr[s->npy].line, fr[s->npy].func ? fr[s->npy].func : "?");
		s->py[s->npy] = strdup(buf);
	}
	return 0;
}

int cprof_stacks_load(sqlite3 *db, struct cprof_stacks *out)
{
	sqlite3_stmt *st = NULL;
	struct frame_row *fr = NULL;
	size_t nfr = 0, capfr = 0, cap = 0;
	int ret = 0, rc;

	memset(out, 0, sizeof(*out));
	if (!cprof_has_table(db, "CPROF_STACK_FRAMES"))
		return 0;
	/* python frames first (kind 'python' > 'native' with DESC), each stack's frames innermost first */
	if (sqlite3_prepare_v2(db,
			       "SELECT f.processId, f.stackId, f.kind = 'python', f.level, m.value, y.value, fi.value, fu.value,"
			       " f.offset, f.line FROM CPROF_STACK_FRAMES f LEFT JOIN StringIds m ON m.id = f.moduleId"
			       " LEFT JOIN StringIds y ON y.id = f.symbolId LEFT JOIN StringIds fi ON fi.id = f.fileId"
			       " LEFT JOIN StringIds fu ON fu.id = f.funcId"
			       " ORDER BY f.processId, f.stackId, f.kind DESC, f.level",
			       -1, &st, NULL) != SQLITE_OK)
		return -EIO;
	for (;;) {
		int64_t proc = 0, stack = 0;

		rc = sqlite3_step(st);
		if (rc == SQLITE_ROW) {
			proc = sqlite3_column_int64(st, 0);
			stack = sqlite3_column_int64(st, 1);
		}
		/* a stack is complete when the next row is another one */
		if (nfr && (rc != SQLITE_ROW || proc != fr[0].proc || stack != fr[0].stack)) {
			size_t i;

			if (cprof_grow(&out->v, &cap, out->n, sizeof(out->v[0])) < 0) {
				ret = -ENOMEM;
				goto out;
			}
			memset(&out->v[out->n], 0, sizeof(out->v[0]));
			out->v[out->n].proc = fr[0].proc;
			out->v[out->n].id = fr[0].stack;
			ret = finish_stack(&out->v[out->n++], fr, nfr);
			for (i = 0; i < nfr; i++) {
				free(fr[i].module);
				free(fr[i].symbol);
				free(fr[i].file);
				free(fr[i].func);
			}
			nfr = 0;
			if (ret < 0)
				goto out;
		}
		if (rc != SQLITE_ROW)
			break;
		if (cprof_grow(&fr, &capfr, nfr, sizeof(fr[0])) < 0) {
			ret = -ENOMEM;
			goto out;
		}
		fr[nfr] = (struct frame_row){ .proc = proc, .stack = stack, .python = sqlite3_column_int(st, 2),
					      .level = sqlite3_column_int(st, 3), .module = dup_col(st, 4),
					      .symbol = dup_col(st, 5), .file = dup_col(st, 6), .func = dup_col(st, 7),
					      .offset = sqlite3_column_int64(st, 8), .line = sqlite3_column_int64(st, 9) };
		nfr++;
	}
	if (rc != SQLITE_DONE)
		ret = -EIO;
	if (out->n)
		qsort(out->v, out->n, sizeof(out->v[0]), cmp_stack);
out:
	sqlite3_finalize(st);
	free(fr);
	return ret;
}

const struct cprof_stack *cprof_stacks_find(const struct cprof_stacks *s, int64_t proc, int64_t id)
{
	struct cprof_stack key = { .proc = proc, .id = id };

	if (s->n == 0 || id <= 0)
		return NULL;
	return bsearch(&key, s->v, s->n, sizeof(s->v[0]), cmp_stack);
}

void cprof_stacks_free(struct cprof_stacks *s)
{
	size_t i, k;

	for (i = 0; i < s->n; i++) {
		free(s->v[i].ops);
		free(s->v[i].callsite);
		for (k = 0; k < s->v[i].npy; k++)
			free(s->v[i].py[k]);
		free(s->v[i].py);
	}
	free(s->v);
	memset(s, 0, sizeof(*s));
}

/* ---- attribution: every hooked call with a stack, and the GPU time of the work it launched ---- */

static int row_add(struct cprof_attr_table *t, size_t *cap, const char *label, const char *detail)
{
	size_t i;

	/* tables have tens to hundreds of rows: a scan from the end (runs repeat) is enough */
	for (i = t->n; i-- > 0;)
		if (!strcmp(t->rows[i].label, label) && !strcmp(t->rows[i].detail ? t->rows[i].detail : "", detail ? detail : ""))
			return (int)i;
	if (cprof_grow(&t->rows, cap, t->n, sizeof(t->rows[0])) < 0)
		return -ENOMEM;
	memset(&t->rows[t->n], 0, sizeof(t->rows[0]));
	t->rows[t->n].label = strdup(label);
	t->rows[t->n].detail = detail ? strdup(detail) : NULL;
	return (int)t->n++;
}

static int by_gpu_desc(const void *a, const void *b)
{
	const struct cprof_attr_row *x = a, *y = b;

	if (x->gpu_ns != y->gpu_ns)
		return x->gpu_ns < y->gpu_ns ? 1 : -1;
	if (x->cpu_ns != y->cpu_ns)
		return x->cpu_ns < y->cpu_ns ? 1 : -1;
	return strcmp(x->label, y->label);
}

static void account(struct cprof_attr_row *r, int nested, double cpu, double gpu, uint64_t gops)
{
	r->calls += !nested;
	r->cpu_ns += cpu;
	r->gpu_ns += gpu;
	r->gpu_ops += gops;
}

/* one call (with its stack s) into table t by by; 0 or a negative errno */
static int attr_row(struct cprof_attr_table *t, size_t *cap, enum cprof_attr_by by, const struct cprof_stack *s, int nested,
		    int inherited, double cpu, double gpu, uint64_t gops, const char *api, const char *kernel, const char *kshort)
{
	char opbuf[1024], chainbuf[2048], kbuf[160];
	int r;

	t->calls_with_stack += !nested;
	t->inherited += inherited && !nested;
	if (by != CPROF_BY_OP) {
		const char *label = s->callsite, *detail = NULL;

		if (by == CPROF_BY_CHAIN) {
			char *d;

			/* a kernel named "" is a kernel all the same (s21 review: its launches were left out) */
			if (gops == 0 || kernel == NULL)
				return 0;
			if (*kernel == '\0') {
				snprintf(kbuf, sizeof(kbuf), "(empty name)");
			} else if (kshort) {
				snprintf(kbuf, sizeof(kbuf), "%s", kshort);
			} else {
				d = cprof_demangle(kernel);
				cprof_shorten(d ? d : kernel, kbuf, sizeof(kbuf));
				free(d);
			}
			snprintf(chainbuf, sizeof(chainbuf), "%s%s%s", s->ops ? s->ops : "", s->ops ? ARROW : "", api);
			label = kbuf;
			detail = chainbuf;
		}
		if (label == NULL)
			return 0;
		r = row_add(t, cap, label, detail);
		if (r < 0)
			return r;
		account(&t->rows[r], nested, cpu, gpu, gops);
		return 0;
	}
	/* by op: the innermost op gets Self, every op of the chain gets Total (once, if it recurs) */
	if (s->ops == NULL)
		return 0;
	{
		char *ops[64], *p = opbuf, *arrow;
		int nops = 0, i, k;

		snprintf(opbuf, sizeof(opbuf), "%s", s->ops);
		while (nops < 64) {
			ops[nops++] = p;
			arrow = strstr(p, ARROW);
			if (arrow == NULL)
				break;
			*arrow = '\0';
			p = arrow + strlen(ARROW);
		}
		for (i = nops - 1; i >= 0; i--) {
			for (k = nops - 1; k > i; k--)
				if (!strcmp(ops[k], ops[i]))
					break;
			if (k > i)
				continue;
			r = row_add(t, cap, ops[i], NULL);
			if (r < 0)
				return r;
			if (i == nops - 1)
				account(&t->rows[r], nested, cpu, gpu, gops);
			t->rows[r].cpu_total_ns += cpu;
			t->rows[r].gpu_total_ns += gpu;
		}
	}
	return 0;
}

/* ---- the calls with a stack and the GPU time they launched: each table read once in rowid order, the
 * joins (our id -> CUPTI's ids -> the GPU records) in sorted arrays, as API_GPU joins them ---- */
struct attr_call {
	int64_t proc, stack, corr, name;
	int64_t cpu; /* end - start */
	uint8_t nested, inherited, has_corr, has_cpu;
};
struct attr_key {
	int64_t proc, key, val; /* (proc, our id) -> CUPTI id; or (proc, CUPTI id) -> aggregate index */
};
struct attr_kern {
	struct attr_str *name;
	int64_t gpu, n;
};
struct attr_agg {
	int64_t proc, corr;
	int64_t gpu, n;
	uint8_t has_gpu;
	/* its kernels by name: a graph replay (one CUPTI id) runs several, each its own row by chain */
	struct attr_kern *kern;
	size_t nkern, capkern;
};
struct attr_str {
	int64_t id;
	char *value;
	char *shortened; /* the demangled, shortened kernel name, made once */
};

static int cmp_attr_key(const void *x, const void *y)
{
	const struct attr_key *a = x, *b = y;

	if (a->proc != b->proc)
		return a->proc < b->proc ? -1 : 1;
	if (a->key != b->key)
		return a->key < b->key ? -1 : 1;
	return a->val < b->val ? -1 : a->val > b->val;
}

static size_t attr_lower(const struct attr_key *k, size_t n, int64_t proc, int64_t key)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (k[mid].proc < proc || (k[mid].proc == proc && k[mid].key < key))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static struct attr_str *attr_string(struct attr_str *v, size_t n, int64_t id)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (v[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && v[lo].id == id ? &v[lo] : NULL;
}

struct attr_work {
	struct attr_call *calls;
	size_t ncalls;
	struct attr_key *links; /* (proc, our id) -> CUPTI id, every row */
	size_t nlinks;
	struct attr_key *gpu_of; /* (proc, CUPTI id) -> aggregate */
	size_t ngpu_of;
	struct attr_agg *agg;
	size_t nagg;
	struct attr_str *str;
	size_t nstr;
};

static void attr_work_free(struct attr_work *w)
{
	size_t i;

	for (i = 0; i < w->nstr; i++) {
		free(w->str[i].value);
		free(w->str[i].shortened);
	}
	free(w->str);
	for (i = 0; i < w->nagg; i++)
		free(w->agg[i].kern);
	free(w->calls);
	free(w->links);
	free(w->gpu_of);
	free(w->agg);
}

/* gpu and cnt kernels of name n added to the list k (*nk entries) by name; 0 or -ENOMEM */
static int attr_kern_add(struct attr_kern **k, size_t *nk, size_t *cap, struct attr_str *n, int64_t gpu, int64_t cnt)
{
	size_t i;

	/* a CUPTI id runs one kernel, or a graph's few distinct ones: a scan is enough */
	for (i = 0; i < *nk && (*k)[i].name != n; i++)
		;
	if (i == *nk) {
		if (cprof_grow(k, cap, *nk, sizeof(**k)) < 0)
			return -ENOMEM;
		(*k)[(*nk)++] = (struct attr_kern){ n, 0, 0 };
	}
	(*k)[i].gpu += gpu;
	(*k)[i].n += cnt;
	return 0;
}

static int attr_read(sqlite3 *db, int64_t proc, struct attr_work *w)
{
	static const char *const ops[] = {
		"SELECT processId, correlationId, end - start, nameId FROM CUPTI_ACTIVITY_KIND_KERNEL ORDER BY rowid",
		"SELECT processId, correlationId, end - start, NULL FROM CUPTI_ACTIVITY_KIND_MEMCPY ORDER BY rowid",
		"SELECT processId, correlationId, end - start, NULL FROM CUPTI_ACTIVITY_KIND_MEMSET ORDER BY rowid",
	};
	struct attr_key *need = NULL;
	sqlite3_stmt *st = NULL;
	size_t cap = 0, i, k, nneed = 0;
	int rc, t, ret = -EIO;

	if (sqlite3_prepare_v2(db, "SELECT id, value FROM StringIds ORDER BY id", -1, &st, NULL) != SQLITE_OK)
		goto out;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const unsigned char *v = sqlite3_column_text(st, 1);

		if (cprof_grow(&w->str, &cap, w->nstr, sizeof(*w->str)) < 0 ||
		    (w->str[w->nstr].value = v ? strdup((const char *)v) : NULL, v && w->str[w->nstr].value == NULL)) {
			ret = -ENOMEM;
			goto out;
		}
		w->str[w->nstr].shortened = NULL;
		w->str[w->nstr++].id = sqlite3_column_int64(st, 0);
	}
	sqlite3_finalize(st);
	st = NULL;
	if (rc != SQLITE_DONE)
		goto out;
	/* the calls with a stack, in table order */
	cap = 0;
	if (sqlite3_prepare_v2(db, "SELECT processId, stackId, nested, end - start, coalesce(stackInherited, 0), nameId,"
				   " correlationId FROM CPROF_API WHERE stackId IS NOT NULL AND (?1 = 0 OR processId = ?1)"
				   " ORDER BY rowid", -1, &st, NULL) != SQLITE_OK)
		goto out;
	sqlite3_bind_int64(st, 1, proc);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct attr_call *c;
		struct attr_str *name = attr_string(w->str, w->nstr, sqlite3_column_int64(st, 5));

		if (sqlite3_column_type(st, 5) == SQLITE_NULL || name == NULL || name->value == NULL)
			continue; /* the join on its name drops it */
		if (cprof_grow(&w->calls, &cap, w->ncalls, sizeof(*w->calls)) < 0) {
			ret = -ENOMEM;
			goto out;
		}
		c = &w->calls[w->ncalls++];
		c->proc = sqlite3_column_int64(st, 0);
		c->stack = sqlite3_column_int64(st, 1);
		c->nested = sqlite3_column_int(st, 2) != 0;
		c->has_cpu = sqlite3_column_type(st, 3) != SQLITE_NULL;
		c->cpu = sqlite3_column_int64(st, 3);
		c->inherited = sqlite3_column_int(st, 4) != 0;
		c->name = sqlite3_column_int64(st, 5);
		c->has_corr = sqlite3_column_type(st, 6) != SQLITE_NULL;
		c->corr = sqlite3_column_int64(st, 6);
	}
	sqlite3_finalize(st);
	st = NULL;
	if (rc != SQLITE_DONE)
		goto out;
	/* our ids the calls carry, then CUPTI's ids of those */
	need = malloc((w->ncalls ? w->ncalls : 1) * sizeof(*need));
	if (need == NULL) {
		ret = -ENOMEM;
		goto out;
	}
	for (i = 0; i < w->ncalls; i++)
		if (w->calls[i].has_corr)
			need[nneed++] = (struct attr_key){ w->calls[i].proc, w->calls[i].corr, 0 };
	if (nneed > 1)
		cprof_sort(need, nneed, sizeof(*need), cmp_attr_key);
	cap = 0;
	if (sqlite3_prepare_v2(db, "SELECT processId, externalId, correlationId FROM CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION"
				   " WHERE externalKind = 5 ORDER BY rowid", -1, &st, NULL) != SQLITE_OK)
		goto out;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t p = sqlite3_column_int64(st, 0), e = sqlite3_column_int64(st, 1);

		if (sqlite3_column_type(st, 1) == SQLITE_NULL || sqlite3_column_type(st, 2) == SQLITE_NULL ||
		    sqlite3_column_type(st, 0) == SQLITE_NULL)
			continue;
		k = attr_lower(need, nneed, p, e);
		if (k == nneed || need[k].proc != p || need[k].key != e)
			continue;
		if (cprof_grow(&w->links, &cap, w->nlinks, sizeof(*w->links)) < 0) {
			ret = -ENOMEM;
			goto out;
		}
		w->links[w->nlinks++] = (struct attr_key){ p, e, sqlite3_column_int64(st, 2) };
	}
	sqlite3_finalize(st);
	st = NULL;
	if (rc != SQLITE_DONE)
		goto out;
	if (w->nlinks > 1)
		cprof_sort(w->links, w->nlinks, sizeof(*w->links), cmp_attr_key);
	/* one aggregate per CUPTI id the calls reach */
	w->gpu_of = malloc((w->nlinks ? w->nlinks : 1) * sizeof(*w->gpu_of));
	w->agg = malloc((w->nlinks ? w->nlinks : 1) * sizeof(*w->agg));
	if (w->gpu_of == NULL || w->agg == NULL) {
		ret = -ENOMEM;
		goto out;
	}
	for (i = 0; i < w->nlinks; i++)
		w->gpu_of[i] = (struct attr_key){ w->links[i].proc, w->links[i].val, 0 };
	if (w->nlinks > 1)
		cprof_sort(w->gpu_of, w->nlinks, sizeof(*w->gpu_of), cmp_attr_key);
	for (i = 0; i < w->nlinks; i++)
		if (w->ngpu_of == 0 || w->gpu_of[w->ngpu_of - 1].proc != w->gpu_of[i].proc ||
		    w->gpu_of[w->ngpu_of - 1].key != w->gpu_of[i].key) {
			w->agg[w->nagg] = (struct attr_agg){ .proc = w->gpu_of[i].proc, .corr = w->gpu_of[i].key };
			w->gpu_of[w->ngpu_of] = w->gpu_of[i];
			w->gpu_of[w->ngpu_of++].val = (int64_t)w->nagg++;
		}
	for (t = 0; t < 3; t++) {
		if (sqlite3_prepare_v2(db, ops[t], -1, &st, NULL) != SQLITE_OK)
			goto out;
		while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
			int64_t p = sqlite3_column_int64(st, 0), c = sqlite3_column_int64(st, 1);
			struct attr_agg *a;

			if (sqlite3_column_type(st, 1) == SQLITE_NULL)
				continue;
			k = attr_lower(w->gpu_of, w->ngpu_of, p, c);
			if (k == w->ngpu_of || w->gpu_of[k].proc != p || w->gpu_of[k].key != c)
				continue;
			a = &w->agg[w->gpu_of[k].val];
			a->n++;
			if (sqlite3_column_type(st, 2) != SQLITE_NULL) {
				a->gpu += sqlite3_column_int64(st, 2);
				a->has_gpu = 1;
			}
			if (t == 0 && sqlite3_column_type(st, 3) != SQLITE_NULL) {
				struct attr_str *n = attr_string(w->str, w->nstr, sqlite3_column_int64(st, 3));

				if (n && n->value &&
				    attr_kern_add(&a->kern, &a->nkern, &a->capkern, n,
						  sqlite3_column_type(st, 2) != SQLITE_NULL ? sqlite3_column_int64(st, 2) : 0, 1) < 0) {
					ret = -ENOMEM;
					goto out;
				}
			}
		}
		sqlite3_finalize(st);
		st = NULL;
		if (rc != SQLITE_DONE)
			goto out;
	}
	ret = 0;
out:
	sqlite3_finalize(st);
	free(need);
	return ret;
}

/* the shortened demangled name of a kernel, once per name */
static const char *attr_kshort(struct attr_str *k)
{
	if (k->shortened == NULL) {
		char kbuf[160], *d = cprof_demangle(k->value);

		cprof_shorten(d ? d : k->value, kbuf, sizeof(kbuf));
		free(d);
		k->shortened = strdup(kbuf);
	}
	return k->shortened;
}

/* the kernels by name of every CUPTI id of call a, merged into *ck (*nck entries); 0 or -ENOMEM */
static int attr_call_kernels(const struct attr_work *w, const struct attr_call *a, struct attr_kern **ck, size_t *nck,
			     size_t *cap)
{
	size_t l, j;

	*nck = 0;
	for (l = a->has_corr ? attr_lower(w->links, w->nlinks, a->proc, a->corr) : w->nlinks;
	     l < w->nlinks && w->links[l].proc == a->proc && w->links[l].key == a->corr; l++) {
		const struct attr_agg *g = &w->agg[w->gpu_of[attr_lower(w->gpu_of, w->ngpu_of, a->proc, w->links[l].val)].val];

		for (j = 0; j < g->nkern; j++)
			if (attr_kern_add(ck, nck, cap, g->kern[j].name, g->kern[j].gpu, g->kern[j].n) < 0)
				return -ENOMEM;
	}
	return 0;
}

int cprof_attr_build_n(sqlite3 *db, const struct cprof_stacks *stacks, int64_t proc, const enum cprof_attr_by *by,
		       struct cprof_attr_table *t, int n)
{
	struct attr_work w = { 0 };
	struct attr_kern *ck = NULL;
	size_t cap[8] = { 0 }, c, capck = 0;
	int ret = 0, i, chain = 0;

	for (i = 0; i < n; i++)
		memset(&t[i], 0, sizeof(t[i]));
	if (stacks->n == 0)
		return 0;
	if (n > 8)
		return -EINVAL;
	for (i = 0; i < n; i++)
		chain |= by[i] == CPROF_BY_CHAIN;
	if ((ret = attr_read(db, proc, &w)) < 0)
		goto out;
	for (c = 0; c < w.ncalls && ret == 0; c++) {
		const struct attr_call *a = &w.calls[c];
		const struct cprof_stack *s = cprof_stacks_find(stacks, a->proc, a->stack);
		const char *api;
		int64_t gsum = 0, gops = 0, kops = 0;
		double cpu;
		size_t l, nck = 0, j;

		if (s == NULL)
			continue;
		/* API_GPU's rows of this call: every CUPTI id of our id, every GPU record of each */
		for (l = a->has_corr ? attr_lower(w.links, w.nlinks, a->proc, a->corr) : w.nlinks;
		     l < w.nlinks && w.links[l].proc == a->proc && w.links[l].key == a->corr; l++) {
			size_t k = attr_lower(w.gpu_of, w.ngpu_of, a->proc, w.links[l].val);
			const struct attr_agg *g = &w.agg[w.gpu_of[k].val];

			gsum += g->gpu;
			gops += g->n;
		}
		if (chain && (ret = attr_call_kernels(&w, a, &ck, &nck, &capck)) < 0)
			goto out;
		for (j = 0; j < nck; j++)
			kops += ck[j].n;
		cpu = a->nested || !a->has_cpu ? 0 : (double)a->cpu;
		api = attr_string(w.str, w.nstr, a->name)->value;
		for (i = 0; i < n && ret == 0; i++) {
			uint64_t with_stack = t[i].calls_with_stack, inherited = t[i].inherited;

			if (by[i] != CPROF_BY_CHAIN || nck == 0) {
				ret = attr_row(&t[i], &cap[i], by[i], s, a->nested, a->inherited, cpu, (double)gsum,
					       (uint64_t)gops, api, NULL, NULL);
				continue;
			}
			/* by chain, a row per kernel name the call ran (a graph replay runs several): each its own
			 * kernels and GPU time, the call's host time shared by their count */
			for (j = 0; j < nck && ret == 0; j++)
				ret = attr_row(&t[i], &cap[i], by[i], s, a->nested, a->inherited, cpu * (double)ck[j].n / (double)kops,
					       (double)ck[j].gpu, (uint64_t)ck[j].n, api, ck[j].name->value, attr_kshort(ck[j].name));
			t[i].calls_with_stack = with_stack + !a->nested;
			t[i].inherited = inherited + (a->inherited && !a->nested);
		}
	}
	for (i = 0; i < n; i++)
		if (t[i].n)
			qsort(t[i].rows, t[i].n, sizeof(t[i].rows[0]), by_gpu_desc);
out:
	free(ck);
	attr_work_free(&w);
	return ret;
}

int cprof_attr_build(sqlite3 *db, const struct cprof_stacks *stacks, enum cprof_attr_by by, int64_t proc,
		     struct cprof_attr_table *t)
{
	return cprof_attr_build_n(db, stacks, proc, &by, t, 1);
}

int cprof_attr_build3(sqlite3 *db, const struct cprof_stacks *stacks, int64_t proc, struct cprof_attr_table *ops,
		      struct cprof_attr_table *sites, struct cprof_attr_table *chains)
{
	static const enum cprof_attr_by by[3] = { CPROF_BY_OP, CPROF_BY_CALLSITE, CPROF_BY_CHAIN };
	struct cprof_attr_table t[3];
	int ret = cprof_attr_build_n(db, stacks, proc, by, t, 3);

	/* the caller frees what was built, as with three calls */
	*ops = t[0];
	*sites = t[1];
	*chains = t[2];
	return ret;
}

void cprof_attr_free(struct cprof_attr_table *t)
{
	size_t i;

	for (i = 0; i < t->n; i++) {
		free(t->rows[i].label);
		free(t->rows[i].detail);
	}
	free(t->rows);
	memset(t, 0, sizeof(*t));
}

/* The folded stacks of a profile (Brendan Gregg's format, speedscope's input): frames from the recorded native
 * and Python stacks, the CUDA call and GPU op at the tip, weights in ns that add up to the report's totals. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/textsafe.h"
#include "report/cprof.h"
#include "report/model/flame.h"

#define NO_STACK "[no stack recorded]"

struct stack_path {
	int64_t proc, id;
	char *path; /* outermost first, ';'-separated */
};

struct paths {
	struct stack_path *v; /* sorted by (proc, id) */
	size_t n;
};

/* a frame name as one folded field: terminal-safe, no ';' (the separator); "" becomes "?" */
static void frame_name(char *out, size_t size, const char *s)
{
	char *p;

	cprof_text_safe(out, size, s && *s ? s : "?");
	for (p = out; *p; p++)
		if (*p == ';')
			*p = ':';
}

static const char *base(const char *path)
{
	const char *s = path ? strrchr(path, '/') : NULL;

	return s ? s + 1 : path ? path : "?";
}

/* the interpreter's own frames: Python frames stand for them */
static int is_interpreter(const char *module)
{
	const char *b = base(module);

	return !strncmp(b, "python", 6) || !strncmp(b, "libpython", 9);
}

struct buf {
	char *s;
	size_t len, cap;
};

/* appends ";frame" (or "frame" to an empty path) */
static int add_frame(struct buf *b, const char *frame)
{
	size_t f = strlen(frame), need = b->len + f + 2;

	if (need > b->cap) {
		size_t c = b->cap ? b->cap : 256;
		char *n;

		while (c < need)
			c *= 2;
		if ((n = realloc(b->s, c)) == NULL)
			return -ENOMEM;
		b->s = n;
		b->cap = c;
	}
	if (b->len)
		b->s[b->len++] = ';';
	memcpy(b->s + b->len, frame, f + 1);
	b->len += f;
	return 0;
}

struct frame {
	int python;
	char *name;   /* folded field */
	int interp;   /* native frame of the Python interpreter */
};

static int cmp_path(const void *a, const void *b)
{
	const struct stack_path *x = a, *y = b;

	if (x->proc != y->proc)
		return x->proc < y->proc ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

static void paths_free(struct paths *p)
{
	size_t i;

	for (i = 0; i < p->n; i++)
		free(p->v[i].path);
	free(p->v);
	memset(p, 0, sizeof(*p));
}

/* One stack's path from its frames (python first, each kind innermost first): the Python frames outermost
 * first, then the native frames they called down to the CUDA call; the native frames outside the innermost
 * Python call are the interpreter's, which the Python frames stand for. No Python frame: the native stack. */
static int compose(struct frame *fr, size_t n, const char *root, char **out)
{
	struct buf b = { 0 };
	size_t np = 0, nat, i;
	int ret = 0;

	while (np < n && fr[np].python)
		np++;
	nat = n;
	if (np)
		for (i = np; i < n; i++)
			if (fr[i].interp) {
				nat = i;
				break;
			}
	if (root && (ret = add_frame(&b, root)) < 0)
		goto out;
	for (i = np; i-- > 0;)
		if ((ret = add_frame(&b, fr[i].name)) < 0)
			goto out;
	for (i = nat; i-- > np;)
		if ((ret = add_frame(&b, fr[i].name)) < 0)
			goto out;
out:
	if (ret < 0) {
		free(b.s);
		return ret;
	}
	*out = b.s ? b.s : strdup("?");
	return *out ? 0 : -ENOMEM;
}

static int load_paths(sqlite3 *db, int multi, struct paths *out)
{
	static const char sql[] =
		"SELECT f.processId, f.stackId, f.kind = 'python', m.value, y.value, fi.value, fu.value, f.offset,"
		" f.line, p.pid FROM CPROF_STACK_FRAMES f LEFT JOIN StringIds m ON m.id = f.moduleId"
		" LEFT JOIN StringIds y ON y.id = f.symbolId LEFT JOIN StringIds fi ON fi.id = f.fileId"
		" LEFT JOIN StringIds fu ON fu.id = f.funcId LEFT JOIN PROCESSES p ON p.id = f.processId"
		" ORDER BY f.processId, f.stackId, f.kind DESC, f.level";
	sqlite3_stmt *st = NULL;
	struct frame *fr = NULL;
	size_t cap = 0, capfr = 0, nfr = 0, i;
	char name[1024], raw[1200], root[32];
	int64_t proc = 0, id = 0, pid = 0;
	int rc, ret = 0;

	memset(out, 0, sizeof(*out));
	if (!cprof_has_table(db, "CPROF_STACK_FRAMES"))
		return 0;
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		return -EIO;
	for (;;) {
		rc = sqlite3_step(st);
		if (nfr && (rc != SQLITE_ROW || sqlite3_column_int64(st, 0) != proc || sqlite3_column_int64(st, 1) != id)) {
			char *path = NULL;

			snprintf(root, sizeof(root), "pid %lld", (long long)pid);
			ret = compose(fr, nfr, multi ? root : NULL, &path);
			for (i = 0; i < nfr; i++)
				free(fr[i].name);
			nfr = 0;
			if (ret < 0)
				goto out;
			if ((ret = cprof_grow(&out->v, &cap, out->n, sizeof(out->v[0]))) < 0) {
				free(path);
				goto out;
			}
			out->v[out->n++] = (struct stack_path){ proc, id, path };
		}
		if (rc != SQLITE_ROW)
			break;
		proc = sqlite3_column_int64(st, 0);
		id = sqlite3_column_int64(st, 1);
		pid = sqlite3_column_int64(st, 9);
		if ((ret = cprof_grow(&fr, &capfr, nfr, sizeof(fr[0]))) < 0)
			goto out;
		fr[nfr].python = sqlite3_column_int(st, 2);
		fr[nfr].interp = 0;
		if (fr[nfr].python) {
			/* py-spy's and torch's spelling: function (file:line) */
			const char *file = (const char *)sqlite3_column_text(st, 5), *func = (const char *)sqlite3_column_text(st, 6);

			snprintf(raw, sizeof(raw), "%s (%s:%lld)", func ? func : "?", file ? file : "?",
				 (long long)sqlite3_column_int64(st, 8));
			frame_name(name, sizeof(name), raw);
		} else {
			const char *module = (const char *)sqlite3_column_text(st, 3), *sym = (const char *)sqlite3_column_text(st, 4);
			char *d = sym ? cprof_demangle(sym) : NULL;

			if (sym) {
				frame_name(name, sizeof(name), d ? d : sym);
			} else {
				snprintf(raw, sizeof(raw), "%s+0x%llx", base(module), (unsigned long long)sqlite3_column_int64(st, 7));
				frame_name(name, sizeof(name), raw);
			}
			free(d);
			fr[nfr].interp = is_interpreter(module);
		}
		if ((fr[nfr].name = strdup(name)) == NULL) {
			ret = -ENOMEM;
			goto out;
		}
		nfr++;
	}
	if (rc != SQLITE_DONE)
		ret = -EIO;
	if (out->n)
		qsort(out->v, out->n, sizeof(out->v[0]), cmp_path);
out:
	for (i = 0; i < nfr; i++)
		free(fr[i].name);
	free(fr);
	sqlite3_finalize(st);
	if (ret < 0)
		paths_free(out);
	return ret;
}

static const char *path_of(const struct paths *p, int64_t proc, int64_t id)
{
	struct stack_path key = { .proc = proc, .id = id }, *s;

	if (p->n == 0)
		return NULL;
	s = bsearch(&key, p->v, p->n, sizeof(p->v[0]), cmp_path);
	return s ? s->path : NULL;
}

static int cmp_line(const void *a, const void *b)
{
	return strcmp(((const struct cprof_flame_line *)a)->path, ((const struct cprof_flame_line *)b)->path);
}

/* per (process, stack, call[, GPU op name]): the time, summed by SQLite */
static const char cpu_sql[] =
	"SELECT a.processId, a.stackId, s.value, NULL, sum(a.end - a.start) FROM CPROF_API a"
	" JOIN StringIds s ON s.id = a.nameId WHERE coalesce(a.nested, 0) = 0"
	" GROUP BY a.processId, a.stackId, a.nameId";
static const char gpu_sql[] =
	"SELECT g.processId, a.stackId, g.api, coalesce(g.name, '[' || g.gpuKind || ']'), sum(g.end - g.start)"
	" FROM API_GPU g JOIN CPROF_API a ON a.id = g.apiId GROUP BY 1, 2, 3, 4";
/* GPU work no hooked call launched (inside a library's own thread, a call CUPTI alone saw) */
static const char gpu_rest_sql[] =
	"SELECT (SELECT coalesce(sum(end - start), 0) FROM GPU_OPS) - (SELECT coalesce(sum(end - start), 0) FROM API_GPU)";

int cprof_flame_build(sqlite3 *db, enum cprof_flame_weight w, struct cprof_flame *out)
{
	struct paths paths = { 0 };
	sqlite3_stmt *st = NULL;
	size_t cap = 0, i, k;
	int ret, rc, multi;

	memset(out, 0, sizeof(*out));
	multi = cprof_query_int(db, "SELECT count(*) FROM PROCESSES", 0) > 1;
	if ((ret = load_paths(db, multi, &paths)) < 0)
		return ret;
	if (sqlite3_prepare_v2(db, w == CPROF_FLAME_CPU ? cpu_sql : gpu_sql, -1, &st, NULL) != SQLITE_OK) {
		ret = -EIO;
		goto out;
	}
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *stack = path_of(&paths, sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1));
		const char *call = (const char *)sqlite3_column_text(st, 2), *op = (const char *)sqlite3_column_text(st, 3);
		int64_t weight = sqlite3_column_int64(st, 4);
		char a[512], o[1024], *d = op ? cprof_demangle(op) : NULL;
		struct buf b = { 0 };

		if (weight <= 0) {
			free(d);
			continue;
		}
		frame_name(a, sizeof(a), call);
		if (op)
			frame_name(o, sizeof(o), d ? d : op);
		free(d);
		if (add_frame(&b, stack ? stack : NO_STACK) < 0 || add_frame(&b, a) < 0 || (op && add_frame(&b, o) < 0) ||
		    cprof_grow(&out->v, &cap, out->n, sizeof(out->v[0])) < 0) {
			free(b.s);
			ret = -ENOMEM;
			goto out;
		}
		out->v[out->n++] = (struct cprof_flame_line){ b.s, (uint64_t)weight };
		out->total += (uint64_t)weight;
		if (stack == NULL)
			out->unattributed += (uint64_t)weight;
	}
	if (rc != SQLITE_DONE) {
		ret = -EIO;
		goto out;
	}
	if (w == CPROF_FLAME_GPU) {
		int64_t rest = cprof_query_int(db, gpu_rest_sql, 0);

		if (rest > 0) {
			if (cprof_grow(&out->v, &cap, out->n, sizeof(out->v[0])) < 0 ||
			    (out->v[out->n].path = strdup("[GPU work no hooked call launched]")) == NULL) {
				ret = -ENOMEM;
				goto out;
			}
			out->v[out->n++].weight = (uint64_t)rest;
			out->total += (uint64_t)rest;
			out->unattributed += (uint64_t)rest;
		}
	}
	/* stacks that differ only in offsets fold into one path */
	if (out->n)
		qsort(out->v, out->n, sizeof(out->v[0]), cmp_line);
	for (i = 0, k = 0; i < out->n; i++) {
		if (k && !strcmp(out->v[k - 1].path, out->v[i].path)) {
			out->v[k - 1].weight += out->v[i].weight;
			free(out->v[i].path);
		} else {
			out->v[k++] = out->v[i];
		}
	}
	out->n = k;
	ret = 0;
out:
	sqlite3_finalize(st);
	paths_free(&paths);
	if (ret < 0)
		cprof_flame_free(out);
	return ret;
}

void cprof_flame_free(struct cprof_flame *f)
{
	size_t i;

	for (i = 0; i < f->n; i++)
		free(f->v[i].path);
	free(f->v);
	memset(f, 0, sizeof(*f));
}

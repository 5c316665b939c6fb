/* cprof trace's model part: the call <-> CUPTI <-> GPU joins read back by block, the NVTX layout, the big tables streamed. */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#define PR_FMT "cprof trace"
#include "common/log.h"
#include "common/wire.h"
#include "report/cprof.h"
#include "report/model/trace-src.h"

#define NUL(st, i) (sqlite3_column_type(st, i) == SQLITE_NULL)
#define I64(st, i) sqlite3_column_int64(st, i)

/* qsort, but an empty array may have no buffer at all */
static void sort_n(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
	if (n > 1)
		qsort(base, n, size, cmp);
}

/* ---- a set of int64 pairs (open addressing), with a value each ---- */
struct pairmap {
	struct cprof_tsrc_pair *k;
	int64_t *v;
	uint8_t *used;
	size_t cap, n;
};

static size_t pair_hash(int64_t a, int64_t b, size_t cap)
{
	uint64_t h = (uint64_t)a * 0x9e3779b97f4a7c15ULL ^ ((uint64_t)b + 0x632be59bd9b4e019ULL) * 0xc2b2ae3d27d4eb4fULL;

	return (size_t)((h ^ (h >> 31)) & (cap - 1));
}

/* the slot of (a, b), added (with value v) when new; NULL: out of memory */
static int64_t *pairmap_get(struct pairmap *p, int64_t a, int64_t b, int64_t v, int *added)
{
	size_t i;

	if (2 * (p->n + 1) > p->cap) {
		struct pairmap g = { .cap = p->cap ? p->cap * 2 : 64 };
		size_t j;

		g.k = malloc(g.cap * sizeof(*g.k));
		g.v = malloc(g.cap * sizeof(*g.v));
		g.used = calloc(g.cap, 1);
		if (g.k == NULL || g.v == NULL || g.used == NULL) {
			free(g.k);
			free(g.v);
			free(g.used);
			return NULL;
		}
		for (j = 0; j < p->cap; j++)
			if (p->used[j]) {
				for (i = pair_hash(p->k[j].a, p->k[j].b, g.cap); g.used[i]; i = (i + 1) & (g.cap - 1))
					;
				g.used[i] = 1;
				g.k[i] = p->k[j];
				g.v[i] = p->v[j];
			}
		g.n = p->n;
		free(p->k);
		free(p->v);
		free(p->used);
		*p = g;
	}
	for (i = pair_hash(a, b, p->cap); p->used[i]; i = (i + 1) & (p->cap - 1))
		if (p->k[i].a == a && p->k[i].b == b) {
			*added = 0;
			return &p->v[i];
		}
	p->used[i] = 1;
	p->k[i].a = a;
	p->k[i].b = b;
	p->v[i] = v;
	p->n++;
	*added = 1;
	return &p->v[i];
}

static void pairmap_free(struct pairmap *p)
{
	free(p->k);
	free(p->v);
	free(p->used);
	memset(p, 0, sizeof(*p));
}

static int cmp_pair(const void *x, const void *y)
{
	const struct cprof_tsrc_pair *a = x, *b = y;

	if (a->a != b->a)
		return a->a < b->a ? -1 : 1;
	return a->b < b->b ? -1 : a->b > b->b;
}

/* the keys, sorted; the map is emptied */
static int pairmap_sorted(struct pairmap *p, struct cprof_tsrc_pair **out, size_t *n)
{
	size_t i, k = 0;

	*out = malloc((p->n ? p->n : 1) * sizeof(**out));
	if (*out == NULL)
		return -ENOMEM;
	for (i = 0; i < p->cap; i++)
		if (p->used[i])
			(*out)[k++] = p->k[i];
	*n = k;
	sort_n(*out, k, sizeof(**out), cmp_pair);
	pairmap_free(p);
	return 0;
}

/* ---- the rows kept: every one, or the rank's processes' (--per-rank) ---- */
static int kept(const struct cprof_trace_src *s, int64_t proc)
{
	size_t lo = 0, hi = s->m.nprocs;

	if (s->rank < 0)
		return 1;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->m.procs[mid].id < proc)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < s->m.nprocs && s->m.procs[lo].id == proc;
}

static size_t proc_index(const struct cprof_trace_src *s, int64_t proc)
{
	size_t lo = 0, hi = s->m.nprocs;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->m.procs[mid].id < proc)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < s->m.nprocs && s->m.procs[lo].id == proc ? lo : SIZE_MAX;
}

/* as SQL's min(start) over every table: numbers only, a NULL is no start */
static void note_start(struct cprof_trace_src *s, sqlite3_stmt *st, int i, int *have, int64_t *min)
{
	int type = sqlite3_column_type(st, i);
	int64_t v;

	if (type != SQLITE_INTEGER && type != SQLITE_FLOAT)
		return;
	v = I64(st, i);
	if (!*have || v < *min)
		*min = v;
	*have = 1;
	(void)s;
}

/* ---- the lookups ---- */
static size_t lower_pair(const void *arr, size_t n, size_t elem, int64_t a, int64_t b)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const int64_t *k = (const int64_t *)((const char *)arr + mid * elem);

		if (k[0] < a || (k[0] == a && k[1] < b))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* ---- ATen op ranges: the innermost ended one open at a time, by (proc, tid, start, id) with each range's
 * nearest earlier one that ends later (the only ones that can still be open once it has ended) ---- */
struct oprng {
	int64_t proc, tid, start, end, id;
	size_t up; /* SIZE_MAX: none */
};
static struct oprng *g_op; /* set while a trace source is loaded: one at a time */
static size_t g_nop;

static int cmp_oprng(const void *x, const void *y)
{
	const struct oprng *a = x, *b = y;

	if (a->proc != b->proc)
		return a->proc < b->proc ? -1 : 1;
	if (a->tid != b->tid)
		return a->tid < b->tid ? -1 : 1;
	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	return a->id < b->id ? -1 : a->id > b->id;
}

static int oprng_build(const struct cprof_trace_src *s)
{
	size_t i, n = 0, *stack = NULL, top = 0;

	free(g_op);
	g_op = NULL;
	g_nop = 0;
	for (i = 0; i < s->nev; i++)
		n += s->ev[i].torch_op && !s->ev[i].open;
	if (n == 0)
		return 0;
	g_op = malloc(n * sizeof(*g_op));
	stack = malloc(n * sizeof(*stack));
	if (g_op == NULL || stack == NULL) {
		free(stack);
		return -ENOMEM;
	}
	for (i = 0; i < s->nev; i++) {
		const struct cprof_tsrc_nvtx *e = &s->ev[i];

		if (e->torch_op && !e->open)
			g_op[g_nop++] = (struct oprng){ e->proc, e->tid, e->start, e->end, e->id, SIZE_MAX };
	}
	sort_n(g_op, g_nop, sizeof(*g_op), cmp_oprng);
	for (i = 0; i < g_nop; i++) {
		if (i == 0 || g_op[i].proc != g_op[i - 1].proc || g_op[i].tid != g_op[i - 1].tid)
			top = 0;
		while (top && g_op[stack[top - 1]].end <= g_op[i].end)
			top--;
		g_op[i].up = top ? stack[top - 1] : SIZE_MAX;
		stack[top++] = i;
	}
	free(stack);
	return 0;
}

/* the latest-starting ended op range of (proc, tid) with start <= t <= end (ties: the larger id) */
int cprof_tsrc_innermost_op(const struct cprof_trace_src *s, int64_t proc, int64_t tid, int64_t t, int64_t *op)
{
	size_t lo = 0, hi = g_nop, i;

	(void)s;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct oprng *r = &g_op[mid];

		if (r->proc < proc || (r->proc == proc && (r->tid < tid || (r->tid == tid && r->start <= t))))
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return 0;
	for (i = lo - 1; i != SIZE_MAX && g_op[i].proc == proc && g_op[i].tid == tid; i = g_op[i].up)
		if (g_op[i].end >= t) {
			*op = g_op[i].id;
			return 1;
		}
	return 0;
}

/* ---- the joins, by block: each joined table is cut, during its key scan, into blocks of CPROF_TSRC_BLOCK rows
 * in rowid order, and each block keeps the key ranges of each process in it (a few bytes per thousand rows).
 * A lookup reads back, by rowid range, only the blocks whose ranges hold its key, and keeps a few of them
 * loaded: the collector writes in time order, so the rows a batch joins lie in a few neighbouring blocks and
 * the memory stays the same however long the profile (held whole, these joins took ~40 MiB per million
 * records). The first row of a key is the first in rowid order, as the in-memory index had it. ---- */
enum { J_HOOK, J_RT, J_DRV, J_EXTC, J_EXTE, J_KERNEL, J_MEMCPY, J_MEMSET, J__N };

#define CPROF_TSRC_BLOCK 2048
#define JCACHE 6 /* blocks of one index kept loaded between batches */

struct jrange {
	int64_t proc, min, max;
	int64_t pmax; /* the largest max of this range and every range before it of the same process */
	uint32_t blk;
	uint8_t alone; /* no other range of the process meets it: a key in it is in this block only */
};

#define JNONE UINT32_MAX

/* a loaded block: its rows in rowid order, and a hash of their keys (each key's first row; next: the key's
 * following row, in rowid order) */
struct jslot {
	char *rows;
	size_t n, cap;
	uint32_t *head, *tail, *next;
	size_t hcap;
	uint32_t blk;
	uint64_t used; /* the batch that last used it: a block of this batch is never evicted */
};

/* an external-correlation row by (proc, ext) */
struct extx {
	int64_t proc, ext, corr;
	uint32_t seq;
};

/* a GPU op's (proc, corr) */
struct gkey {
	int64_t proc, corr;
	uint32_t seq;
};

struct jindex {
	size_t size;
	void (*fill)(const struct cprof_trace_src *s, sqlite3_stmt *st, void *row, uint32_t seq);
	char sql[320];
	sqlite3_stmt *st;
	int64_t (*blocks)[2]; /* each block's first and last rowid */
	size_t nblocks, capblocks, inblock;
	struct cprof_tsrc_pair *keys; /* the key scan's current block: (proc, key) */
	size_t nkeys;
	struct jrange *ranges; /* by (proc, min, blk) once finished */
	size_t nranges, capranges;
	int32_t *slot_of;      /* by block: its slot, -1: not loaded */
	struct jslot *slots;
	size_t nslots, capslots;
	uint32_t *cand;        /* the blocks one lookup reads */
	size_t ncand, capcand;
	size_t last;           /* the range of the last lookup when it was alone (the next key is likely in it) */
};

struct cprof_tsrc_join {
	struct jindex ix[J__N];
	uint64_t epoch;
	int err; /* a block could not be read: the scan that asked fails with it */
	int64_t *corrs; /* one call's CUPTI ids */
	size_t ncorrs, capcorrs;
};

static void fill_hook(const struct cprof_trace_src *s, sqlite3_stmt *st, void *row, uint32_t seq)
{
	int64_t proc = I64(st, 0), tid = I64(st, 3), op;

	*(struct cprof_tsrc_hook *)row = (struct cprof_tsrc_hook){ .proc = proc, .ext = I64(st, 1), .name = I64(st, 2),
								    .tid = tid, .mintid = tid, .op = CPROF_NO_ID, .seq = seq };
	if (g_nop && cprof_tsrc_innermost_op(s, proc, tid, I64(st, 4), &op))
		((struct cprof_tsrc_hook *)row)->op = op;
}

static void fill_api(const struct cprof_trace_src *s, sqlite3_stmt *st, void *row, uint32_t seq)
{
	(void)s;
	*(struct cprof_tsrc_api *)row = (struct cprof_tsrc_api){ .proc = I64(st, 0), .corr = I64(st, 1),
								  .name = NUL(st, 2) ? CPROF_NO_ID : I64(st, 2),
								  .cbid = I64(st, 3), .seq = seq };
}

static void fill_extc(const struct cprof_trace_src *s, sqlite3_stmt *st, void *row, uint32_t seq)
{
	(void)s;
	*(struct cprof_ext *)row = (struct cprof_ext){ .proc = I64(st, 0), .corr = I64(st, 1), .ext = I64(st, 2), .seq = seq };
}

static void fill_exte(const struct cprof_trace_src *s, sqlite3_stmt *st, void *row, uint32_t seq)
{
	(void)s;
	*(struct extx *)row = (struct extx){ .proc = I64(st, 0), .ext = I64(st, 2), .corr = I64(st, 1), .seq = seq };
}

static void fill_gkey(const struct cprof_trace_src *s, sqlite3_stmt *st, void *row, uint32_t seq)
{
	(void)s;
	*(struct gkey *)row = (struct gkey){ .proc = I64(st, 0), .corr = I64(st, 1), .seq = seq };
}

static const char *const ext_table = "CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION";
static const char *const ext_where = "externalKind = 5 AND correlationId IS NOT NULL AND externalId IS NOT NULL";

static int join_init(struct cprof_trace_src *s)
{
	static const char *const gpu[] = { "CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY",
					   "CUPTI_ACTIVITY_KIND_MEMSET" };
	struct cprof_tsrc_join *j = calloc(1, sizeof(*j));
	int t;

	if (j == NULL)
		return -ENOMEM;
	s->join = j;
	/* the rows each in-memory index held: a hooked call or a CUPTI record needs its process and id */
	j->ix[J_HOOK] = (struct jindex){ .size = sizeof(struct cprof_tsrc_hook), .fill = fill_hook };
	snprintf(j->ix[J_HOOK].sql, sizeof(j->ix[J_HOOK].sql),
		 "SELECT processId, correlationId, nameId, tid, start FROM CPROF_API WHERE rowid BETWEEN ?1 AND ?2"
		 " AND processId IS NOT NULL AND correlationId IS NOT NULL ORDER BY rowid");
	for (t = 0; t < 2; t++) {
		struct jindex *x = &j->ix[J_RT + t];

		*x = (struct jindex){ .size = sizeof(struct cprof_tsrc_api), .fill = fill_api };
		snprintf(x->sql, sizeof(x->sql),
			 "SELECT processId, correlationId, nameId, cbid FROM %s WHERE rowid BETWEEN ?1 AND ?2"
			 " AND processId IS NOT NULL AND correlationId IS NOT NULL ORDER BY rowid",
			 t ? "CUPTI_ACTIVITY_KIND_DRIVER" : "CUPTI_ACTIVITY_KIND_RUNTIME");
	}
	/* as the model read them: a NULL process is process 0 */
	j->ix[J_EXTC] = (struct jindex){ .size = sizeof(struct cprof_ext), .fill = fill_extc };
	j->ix[J_EXTE] = (struct jindex){ .size = sizeof(struct extx), .fill = fill_exte };
	for (t = J_EXTC; t <= J_EXTE; t++)
		snprintf(j->ix[t].sql, sizeof(j->ix[t].sql),
			 "SELECT processId, correlationId, externalId FROM %s WHERE rowid BETWEEN ?1 AND ?2 AND %s ORDER BY rowid",
			 ext_table, ext_where);
	for (t = 0; t < 3; t++) {
		struct jindex *x = &j->ix[J_KERNEL + t];

		*x = (struct jindex){ .size = sizeof(struct gkey), .fill = fill_gkey };
		snprintf(x->sql, sizeof(x->sql),
			 "SELECT processId, correlationId FROM %s WHERE rowid BETWEEN ?1 AND ?2"
			 " AND processId IS NOT NULL AND correlationId IS NOT NULL ORDER BY rowid",
			 gpu[t]);
	}
	return 0;
}

static void join_free(struct cprof_trace_src *s)
{
	struct cprof_tsrc_join *j = s->join;
	size_t t, i;

	if (j == NULL)
		return;
	for (t = 0; t < J__N; t++) {
		struct jindex *x = &j->ix[t];

		sqlite3_finalize(x->st);
		free(x->blocks);
		free(x->keys);
		free(x->ranges);
		free(x->slot_of);
		for (i = 0; i < x->nslots; i++) {
			free(x->slots[i].rows);
			free(x->slots[i].head);
			free(x->slots[i].tail);
			free(x->slots[i].next);
		}
		free(x->slots);
		free(x->cand);
	}
	free(j->corrs);
	free(j);
	s->join = NULL;
}

/* the key ranges of the block being scanned: per process, the runs of its sorted keys split where they jump
 * by more than JGAP (our ids carry the thread in their high bits: one run per thread), at most JRUNS (the
 * threshold doubles until they are few; a range may hold keys the block lacks, never the reverse) */
#define JGAP 64
#define JRUNS 32
static int jix_close_block(struct jindex *x)
{
	struct cprof_tsrc_pair *k = x->keys;
	size_t i, j, n = x->nkeys;

	sort_n(k, n, sizeof(*k), cmp_pair);
	for (i = 0; i < n; i = j) {
		uint64_t gap = JGAP;
		size_t runs, r;

		for (j = i; j < n && k[j].a == k[i].a; j++)
			;
		for (;;) {
			for (runs = 1, r = i + 1; r < j; r++)
				runs += (uint64_t)k[r].b - (uint64_t)k[r - 1].b > gap;
			if (runs <= JRUNS)
				break;
			gap = gap * 2 + 1;
		}
		for (r = i; r < j; r++) {
			if (r == i || (uint64_t)k[r].b - (uint64_t)k[r - 1].b > gap) {
				if (cprof_grow(&x->ranges, &x->capranges, x->nranges, sizeof(*x->ranges)) < 0)
					return -ENOMEM;
				x->ranges[x->nranges++] = (struct jrange){ k[r].a, k[r].b, k[r].b, k[r].b, (uint32_t)(x->nblocks - 1), 0 };
			}
			x->ranges[x->nranges - 1].max = k[r].b;
		}
	}
	x->nkeys = 0;
	return 0;
}

/* one row of the key scan, in rowid order; has_key: it can be joined by (proc, key) */
static int jix_add(struct jindex *x, int64_t rowid, int has_key, int64_t proc, int64_t key)
{
	if (x->nblocks == 0 || x->inblock == CPROF_TSRC_BLOCK) {
		if ((x->nblocks && jix_close_block(x) < 0) || cprof_grow(&x->blocks, &x->capblocks, x->nblocks, sizeof(*x->blocks)) < 0)
			return -ENOMEM;
		if (x->keys == NULL && (x->keys = malloc(CPROF_TSRC_BLOCK * sizeof(*x->keys))) == NULL)
			return -ENOMEM;
		x->blocks[x->nblocks][0] = rowid;
		x->nblocks++;
		x->inblock = 0;
	}
	x->blocks[x->nblocks - 1][1] = rowid;
	x->inblock++;
	if (has_key)
		x->keys[x->nkeys++] = (struct cprof_tsrc_pair){ proc, key };
	return 0;
}

static int cmp_jrange(const void *x, const void *y)
{
	const struct jrange *a = x, *b = y;

	if (a->proc != b->proc)
		return a->proc < b->proc ? -1 : 1;
	if (a->min != b->min)
		return a->min < b->min ? -1 : 1;
	return a->blk < b->blk ? -1 : a->blk > b->blk;
}

/* the key scan is over: the ranges by (proc, min), no block loaded */
static int jix_finish(struct jindex *x)
{
	size_t i;

	if (x->nblocks && jix_close_block(x) < 0)
		return -ENOMEM;
	free(x->keys);
	x->keys = NULL;
	sort_n(x->ranges, x->nranges, sizeof(*x->ranges), cmp_jrange);
	for (i = 0; i < x->nranges; i++)
		if (i > 0 && x->ranges[i - 1].proc == x->ranges[i].proc && x->ranges[i - 1].pmax > x->ranges[i].max)
			x->ranges[i].pmax = x->ranges[i - 1].pmax;
		else
			x->ranges[i].pmax = x->ranges[i].max;
	for (i = 0; i < x->nranges; i++) {
		const struct jrange *r = &x->ranges[i];

		x->ranges[i].alone = !(i > 0 && r[-1].proc == r->proc && r[-1].pmax >= r->min) &&
				     !(i + 1 < x->nranges && r[1].proc == r->proc && r[1].min <= r->max);
	}
	x->last = SIZE_MAX;
	x->slot_of = malloc((x->nblocks ? x->nblocks : 1) * sizeof(*x->slot_of));
	if (x->slot_of == NULL)
		return -ENOMEM;
	for (i = 0; i < x->nblocks; i++)
		x->slot_of[i] = -1;
	return 0;
}

static int cmp_u32(const void *x, const void *y)
{
	uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;

	return a < b ? -1 : a > b;
}

/* x->cand: the blocks whose range of proc holds key, in rowid order */
static int jix_cands(struct jindex *x, int64_t proc, int64_t key)
{
	size_t lo = 0, hi = x->nranges, i, hit = SIZE_MAX;

	x->ncand = 0;
	if (x->capcand == 0 && cprof_grow(&x->cand, &x->capcand, 0, sizeof(*x->cand)) < 0)
		return -ENOMEM;
	if (x->last < x->nranges) {
		const struct jrange *r = &x->ranges[x->last];

		if (r->proc == proc && r->min <= key && key <= r->max) {
			x->cand[x->ncand++] = r->blk;
			return 0;
		}
	}
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct jrange *r = &x->ranges[mid];

		if (r->proc < proc || (r->proc == proc && r->min <= key))
			lo = mid + 1;
		else
			hi = mid;
	}
	/* every range before lo of this process starts at or below key; pmax says when none further back reaches it */
	for (i = lo; i-- > 0 && x->ranges[i].proc == proc && x->ranges[i].pmax >= key;)
		if (x->ranges[i].max >= key) {
			if (cprof_grow(&x->cand, &x->capcand, x->ncand, sizeof(*x->cand)) < 0)
				return -ENOMEM;
			x->cand[x->ncand++] = x->ranges[i].blk;
			hit = i;
		}
	sort_n(x->cand, x->ncand, sizeof(*x->cand), cmp_u32);
	if (x->ncand == 1 && x->ranges[hit].alone)
		x->last = hit;
	return 0;
}

static const int64_t *jrow_key(const struct jindex *x, const struct jslot *sl, uint32_t i)
{
	return (const int64_t *)(sl->rows + (size_t)i * x->size);
}

static int jslot_hash(const struct jindex *x, struct jslot *sl)
{
	size_t need = 16, i, h;

	while (need < 2 * sl->n)
		need *= 2;
	if (sl->hcap < need) {
		uint32_t *head = realloc(sl->head, need * sizeof(*head)), *tail;

		if (head == NULL)
			return -ENOMEM;
		sl->head = head;
		if ((tail = realloc(sl->tail, need * sizeof(*tail))) == NULL)
			return -ENOMEM;
		sl->tail = tail;
		sl->hcap = need;
	}
	memset(sl->head, 0xff, sl->hcap * sizeof(*sl->head));
	for (i = 0; i < sl->n; i++) {
		const int64_t *k = jrow_key(x, sl, (uint32_t)i);

		for (h = pair_hash(k[0], k[1], sl->hcap); sl->head[h] != JNONE; h = (h + 1) & (sl->hcap - 1)) {
			const int64_t *o = jrow_key(x, sl, sl->head[h]);

			if (o[0] == k[0] && o[1] == k[1])
				break;
		}
		if (sl->head[h] == JNONE)
			sl->head[h] = (uint32_t)i;
		else
			sl->next[sl->tail[h]] = (uint32_t)i;
		sl->tail[h] = (uint32_t)i;
		sl->next[i] = JNONE;
	}
	return 0;
}

/* the first row of (proc, key) in a loaded block, JNONE: none */
static uint32_t jslot_find(const struct jindex *x, const struct jslot *sl, int64_t proc, int64_t key)
{
	size_t h;

	for (h = pair_hash(proc, key, sl->hcap); sl->head[h] != JNONE; h = (h + 1) & (sl->hcap - 1)) {
		const int64_t *o = jrow_key(x, sl, sl->head[h]);

		if (o[0] == proc && o[1] == key)
			return sl->head[h];
	}
	return JNONE;
}

/* block blk loaded (read and hashed when it is not); NULL: it could not be read (j->err) */
static const struct jslot *jix_block(const struct cprof_trace_src *s, struct jindex *x, uint32_t blk)
{
	struct cprof_tsrc_join *j = s->join;
	struct jslot *sl;
	size_t i, pick = SIZE_MAX;
	uint32_t seq = 0;
	int rc;

	if (x->slot_of[blk] >= 0) {
		sl = &x->slots[x->slot_of[blk]];
		sl->used = j->epoch;
		return sl;
	}
	/* a new slot while there are few, else the least recently used one of an earlier batch */
	if (x->nslots >= JCACHE)
		for (i = 0; i < x->nslots; i++)
			if (x->slots[i].used < j->epoch && (pick == SIZE_MAX || x->slots[i].used < x->slots[pick].used))
				pick = i;
	if (pick == SIZE_MAX) {
		if (cprof_grow(&x->slots, &x->capslots, x->nslots, sizeof(*x->slots)) < 0)
			goto nomem;
		pick = x->nslots++;
		memset(&x->slots[pick], 0, sizeof(x->slots[pick]));
	} else {
		x->slot_of[x->slots[pick].blk] = -1;
	}
	sl = &x->slots[pick];
	sl->n = 0;
	if (x->st == NULL && sqlite3_prepare_v2(s->db, x->sql, -1, &x->st, NULL) != SQLITE_OK)
		goto ioerr;
	sqlite3_reset(x->st);
	sqlite3_bind_int64(x->st, 1, x->blocks[blk][0]);
	sqlite3_bind_int64(x->st, 2, x->blocks[blk][1]);
	while ((rc = sqlite3_step(x->st)) == SQLITE_ROW) {
		if (sl->n == sl->cap) {
			size_t cap = sl->cap ? sl->cap * 2 : CPROF_TSRC_BLOCK;
			char *rows = realloc(sl->rows, cap * x->size);
			uint32_t *next;

			if (rows == NULL)
				goto nomem;
			sl->rows = rows;
			if ((next = realloc(sl->next, cap * sizeof(*next))) == NULL)
				goto nomem;
			sl->next = next;
			sl->cap = cap;
		}
		x->fill(s, x->st, sl->rows + sl->n++ * x->size, seq++);
	}
	if (rc != SQLITE_DONE)
		goto ioerr;
	if (jslot_hash(x, sl) < 0)
		goto nomem;
	sl->blk = blk;
	sl->used = j->epoch;
	x->slot_of[blk] = (int32_t)pick;
	return sl;
nomem:
	if (!j->err)
		j->err = -ENOMEM;
	return NULL;
ioerr:
	if (!j->err) {
		pr_err("reading the profile failed: %s", cprof_model_errmsg(s->db));
		j->err = -EIO;
	}
	return NULL;
}

/* the rows of (proc, key) of an index, in rowid order: it = { proc, key }, then jit_next until NULL */
struct jiter {
	int64_t proc, key;
	size_t c;
	const struct jslot *sl;
	uint32_t i;
	int started;
};

static const void *jit_next(const struct cprof_trace_src *s, struct jindex *x, struct jiter *it)
{
	for (;;) {
		if (it->sl != NULL && it->i != JNONE) {
			uint32_t i = it->i;

			it->i = it->sl->next[i];
			return it->sl->rows + (size_t)i * x->size;
		}
		if (!it->started) {
			it->started = 1;
			if (jix_cands(x, it->proc, it->key) < 0) {
				if (!s->join->err)
					s->join->err = -ENOMEM;
				return NULL;
			}
			it->c = 0;
		} else {
			it->c++;
		}
		/* x->cand holds until the next lookup in this index: nothing below looks up in it again */
		if (it->c >= x->ncand)
			return NULL;
		/* it->sl holds while no other lookup in this index runs (the slot array may grow) */
		if ((it->sl = jix_block(s, x, x->cand[it->c])) == NULL)
			return NULL;
		it->i = jslot_find(x, it->sl, it->proc, it->key);
	}
}

static const void *jfirst(const struct cprof_trace_src *s, int ix, int64_t proc, int64_t key)
{
	struct jiter it = { .proc = proc, .key = key };

	return jit_next(s, &s->join->ix[ix], &it);
}

/* a new batch: the blocks the last one read may be evicted */
static void jnext(const struct cprof_trace_src *s)
{
	s->join->epoch++;
}

/* the batch callback's result, or the error a lookup in it met */
static int jresult(const struct cprof_trace_src *s, int ret)
{
	return ret < 0 ? ret : s->join->err;
}

_Static_assert(offsetof(struct cprof_tsrc_api, corr) == 8 && offsetof(struct cprof_tsrc_hook, ext) == 8 &&
		       offsetof(struct cprof_tsrc_gop, corr) == 8 && offsetof(struct cprof_ext, corr) == 8 &&
		       offsetof(struct extx, ext) == 8 && offsetof(struct gkey, corr) == 8,
	       "lower_pair reads (proc, key) at the front");

/* a GPU op carries CUPTI's (proc, corr) */
static int gpu_has(const struct cprof_trace_src *s, int64_t proc, int64_t corr)
{
	int t;

	for (t = J_KERNEL; t <= J_MEMSET; t++)
		if (jfirst(s, t, proc, corr) != NULL)
			return 1;
	return 0;
}

int cprof_tsrc_corr_gpu(const struct cprof_trace_src *s, int64_t proc, int64_t corr)
{
	return kept(s, proc) && gpu_has(s, proc, corr);
}

const struct cprof_tsrc_api *cprof_tsrc_api_find(const struct cprof_trace_src *s, int64_t proc, int64_t corr)
{
	struct cprof_tsrc_api *x;

	if (!kept(s, proc))
		return NULL;
	/* the runtime record, else the driver's */
	if ((x = (struct cprof_tsrc_api *)jfirst(s, J_RT, proc, corr)) == NULL &&
	    (x = (struct cprof_tsrc_api *)jfirst(s, J_DRV, proc, corr)) == NULL)
		return NULL;
	return x;
}

const struct cprof_tsrc_hook *cprof_tsrc_hook_find(const struct cprof_trace_src *s, int64_t proc, int64_t ext)
{
	struct jiter it = { .proc = proc, .key = ext };
	struct jindex *x = &s->join->ix[J_HOOK];
	struct cprof_tsrc_hook *h, *r;

	if (!kept(s, proc) || (h = (struct cprof_tsrc_hook *)jit_next(s, x, &it)) == NULL)
		return NULL;
	/* the first row stands for the id; the thread map's join sees every row's tid */
	while ((r = (struct cprof_tsrc_hook *)jit_next(s, x, &it)) != NULL)
		if (r->tid < h->mintid)
			h->mintid = r->tid;
	return h;
}

int cprof_tsrc_ext_of(const struct cprof_trace_src *s, int64_t proc, int64_t corr, int64_t *ext)
{
	const struct cprof_ext *e = jfirst(s, J_EXTC, proc, corr);

	if (e == NULL)
		return 0;
	*ext = e->ext;
	return 1;
}

static int cmp_i64(const void *x, const void *y)
{
	int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;

	return a < b ? -1 : a > b;
}

/* s->join->corrs: the CUPTI ids of the call, ascending, each one whose first external-correlation row is this
 * call's (CUPTI's join keeps one) */
static void call_corr_list(const struct cprof_trace_src *s, int64_t proc, int64_t ext)
{
	struct cprof_tsrc_join *j = s->join;
	struct jiter it = { .proc = proc, .key = ext };
	const struct extx *e;
	size_t i, k = 0;

	j->ncorrs = 0;
	while ((e = jit_next(s, &j->ix[J_EXTE], &it)) != NULL) {
		if (cprof_grow(&j->corrs, &j->capcorrs, j->ncorrs, sizeof(*j->corrs)) < 0) {
			if (!j->err)
				j->err = -ENOMEM;
			j->ncorrs = 0;
			return;
		}
		j->corrs[j->ncorrs++] = e->corr;
	}
	sort_n(j->corrs, j->ncorrs, sizeof(*j->corrs), cmp_i64);
	for (i = 0; i < j->ncorrs; i++) {
		int64_t first;

		if ((k && j->corrs[k - 1] == j->corrs[i]) || !cprof_tsrc_ext_of(s, proc, j->corrs[i], &first) || first != ext)
			continue;
		j->corrs[k++] = j->corrs[i];
	}
	j->ncorrs = k;
}

int cprof_tsrc_call_corrs(const struct cprof_trace_src *s, int64_t proc, int64_t ext, int64_t *gcorr, int64_t *anycorr,
			  int64_t *ngpu)
{
	struct cprof_tsrc_join *j = s->join;
	size_t i;

	*gcorr = *anycorr = CPROF_NO_ID;
	*ngpu = 0;
	call_corr_list(s, proc, ext);
	for (i = 0; i < j->ncorrs; i++) {
		if (*anycorr == CPROF_NO_ID)
			*anycorr = j->corrs[i];
		if (kept(s, proc) && gpu_has(s, proc, j->corrs[i])) {
			if (*gcorr == CPROF_NO_ID)
				*gcorr = j->corrs[i];
			(*ngpu)++;
		}
	}
	return *anycorr != CPROF_NO_ID;
}

void cprof_tsrc_call_gpu_corrs(const struct cprof_trace_src *s, int64_t proc, int64_t ext,
			       void (*fn)(void *ctx, int64_t corr), void *ctx)
{
	struct cprof_tsrc_join *j = s->join;
	size_t i;

	call_corr_list(s, proc, ext);
	for (i = 0; i < j->ncorrs; i++)
		if (kept(s, proc) && gpu_has(s, proc, j->corrs[i]))
			fn(ctx, j->corrs[i]);
}

/* ---- loading ---- */
static int prep(sqlite3 *db, const char *sql, sqlite3_stmt **st)
{
	if (sqlite3_prepare_v2(db, sql, -1, st, NULL) != SQLITE_OK) {
		pr_err("query failed: %s", sqlite3_errmsg(db));
		return -EIO;
	}
	return 0;
}

static int step_done(sqlite3 *db, int rc)
{
	if (rc == SQLITE_DONE)
		return 0;
	pr_err("reading the profile failed: %s", cprof_model_errmsg(db));
	return -EIO;
}

/* the first process's rank and world size, each process's end (PROCESSES.endNs), the header's META facts */
static int load_facts(struct cprof_trace_src *s, int64_t *end_ns)
{
	sqlite3_stmt *st;
	char command[4096];
	int rc, ret, have_rank = 0, have_world = 0;

	if ((ret = prep(s->db, "SELECT id, rank, worldSize, endNs FROM PROCESSES ORDER BY id", &st)) < 0)
		return ret;
	s->first_rank = 0;
	s->first_world = 1;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		size_t i = proc_index(s, I64(st, 0));

		if (i == SIZE_MAX)
			continue;
		if (!have_rank && !NUL(st, 1)) {
			s->first_rank = I64(st, 1);
			have_rank = 1;
		}
		if (!have_world && !NUL(st, 2)) {
			s->first_world = I64(st, 2);
			have_world = 1;
		}
		end_ns[i] = NUL(st, 3) ? 0 : I64(st, 3);
	}
	sqlite3_finalize(st);
	if ((ret = step_done(s->db, rc)) < 0)
		return ret;
	/* no count (the collector's final state did not fit), or a process that could not count what it had not sent */
	s->lost_events = cprof_meta_int(s->db, "lost_events", -1);
	s->lost_lower_bound = s->lost_events < 0 || cprof_killed_processes(s->db) > 0;
	s->lost_events = s->lost_events < 0 ? 0 : s->lost_events;
	s->complete = cprof_meta_int(s->db, "complete", 0) == 1;
	s->simulated = cprof_meta_int(s->db, "simulated_gpu", 0) == 1;
	s->command = strdup(cprof_meta(s->db, "command", command, sizeof(command), ""));
	return s->command ? 0 : -ENOMEM;
}

/* --per-rank: the model keeps this rank's processes only */
static void filter_rank(struct cprof_trace_src *s)
{
	size_t i, k = 0;

	if (s->rank < 0)
		return;
	for (i = 0; i < s->m.nprocs; i++) {
		struct cprof_proc *p = &s->m.procs[i];

		if (p->rank == s->rank) {
			s->m.procs[k++] = *p;
			continue;
		}
		free(p->exe);
		free(p->argv);
		free(p->host);
		free(p->bye);
		cprof_end_free(p->end);
	}
	s->m.nprocs = k;
}

static int nvtx_type(const char *t)
{
	if (t == NULL)
		return CPROF_NVTX_OTHER;
	if (!strcmp(t, "mark"))
		return CPROF_NVTX_MARK;
	if (!strcmp(t, "range"))
		return CPROF_NVTX_RANGE;
	if (!strcmp(t, "startend"))
		return CPROF_NVTX_STARTEND;
	return CPROF_NVTX_OTHER;
}

static int load_nvtx(struct cprof_trace_src *s, int64_t *nvtx_end, int *have, int64_t *min)
{
	sqlite3_stmt *st;
	size_t cap = 0;
	int rc, ret;

	if (!cprof_has_table(s->db, "NVTX_EVENTS"))
		return 0;
	if ((ret = prep(s->db, "SELECT id, processId, tid, start, end, eventType, textId, domainId, categoryId, color,"
			       " depth, endTid FROM NVTX_EVENTS ORDER BY rowid", &st)) < 0)
		return ret;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct cprof_tsrc_nvtx *e;
		size_t p;

		if (!kept(s, I64(st, 1)))
			continue;
		note_start(s, st, 3, have, min);
		if ((p = proc_index(s, I64(st, 1))) != SIZE_MAX && I64(st, NUL(st, 4) ? 3 : 4) > nvtx_end[p])
			nvtx_end[p] = I64(st, NUL(st, 4) ? 3 : 4);
		if (cprof_grow(&s->ev, &cap, s->nev, sizeof(*s->ev)) < 0) {
			sqlite3_finalize(st);
			return -ENOMEM;
		}
		e = &s->ev[s->nev++];
		e->id = I64(st, 0);
		e->proc = I64(st, 1);
		e->tid = I64(st, 2);
		e->start = I64(st, 3);
		e->open = NUL(st, 4);
		e->end = e->open ? 0 : I64(st, 4);
		e->type = (uint8_t)nvtx_type((const char *)sqlite3_column_text(st, 5));
		e->text = NUL(st, 6) ? CPROF_NO_ID : I64(st, 6);
		e->domain = NUL(st, 7) ? CPROF_NO_ID : I64(st, 7);
		e->category = NUL(st, 8) ? CPROF_NO_ID : I64(st, 8);
		e->color = NUL(st, 9) ? CPROF_NO_ID : I64(st, 9);
		e->depth = NUL(st, 10) ? 0 : I64(st, 10);
		e->end_tid = NUL(st, 11) ? CPROF_NO_ID : I64(st, 11);
		e->torch_op = e->type == CPROF_NVTX_RANGE && e->category == (int64_t)CPROF_NVTX_CATEGORY_TORCH_OP;
		/* the range's end as the trace shows it; an open one is stretched in cprof_tsrc_index_finish */
		if (e->type == CPROF_NVTX_RANGE || e->type == CPROF_NVTX_STARTEND)
			e->end = e->open ? e->start : e->end > e->start ? e->end : e->start;
		else
			e->end = e->start;
	}
	sqlite3_finalize(st);
	return step_done(s->db, rc);
}

/* threads that only annotated, and the names given with NVTX (a few rows: read whole) */
struct stream_key {
	int64_t proc, key;
	int64_t lane;  /* resolved: device << 32 | stream; CPROF_NO_ID not yet */
};
struct name_row {
	int64_t proc, key;
	const char *name;
	size_t seq;
	int stream;
	size_t skey; /* streams: index into the stream keys */
};

static int load_threads_table(struct cprof_trace_src *s, struct pairmap *cpu)
{
	sqlite3_stmt *st;
	int rc, ret, added;
	size_t i;

	if (cprof_has_table(s->db, "THREADS")) {
		if ((ret = prep(s->db, "SELECT processId, tid FROM THREADS ORDER BY rowid", &st)) < 0)
			return ret;
		while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
			size_t p = proc_index(s, I64(st, 0));

			if (p != SIZE_MAX && pairmap_get(cpu, s->m.procs[p].pid, I64(st, 1), 0, &added) == NULL) {
				sqlite3_finalize(st);
				return -ENOMEM;
			}
		}
		sqlite3_finalize(st);
		if ((ret = step_done(s->db, rc)) < 0)
			return ret;
	}
	for (i = 0; i < s->nev; i++) {
		size_t p = proc_index(s, s->ev[i].proc);

		if (p != SIZE_MAX && pairmap_get(cpu, s->m.procs[p].pid, s->ev[i].tid, 0, &added) == NULL)
			return -ENOMEM;
	}
	return 0;
}

static int cmp_name_row(const void *x, const void *y)
{
	const struct name_row *a = x, *b = y;

	if (a->stream != b->stream)
		return a->stream - b->stream;
	if (a->proc != b->proc)
		return a->proc < b->proc ? -1 : 1;
	if (a->key != b->key)
		return a->key < b->key ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

static int cmp_skey(const void *x, const void *y)
{
	const struct stream_key *a = x, *b = y;

	if (a->proc != b->proc)
		return a->proc < b->proc ? -1 : 1;
	return a->key < b->key ? -1 : a->key > b->key;
}

struct names_work {
	struct name_row *rows;
	size_t nrows;
	struct stream_key *keys; /* distinct (proc, handle) of the stream names, sorted */
	size_t nkeys;
	/* calls on a named stream, in rowid order: (key index, our correlation id) */
	struct {
		size_t key;
		int64_t ext;
	} *cand;
	size_t ncand, capcand;
};

static int load_names(struct cprof_trace_src *s, struct names_work *w)
{
	sqlite3_stmt *st;
	size_t cap = 0, i;
	int rc, ret;

	if (!cprof_has_table(s->db, "CPROF_NAMES"))
		return 0;
	if ((ret = prep(s->db, "SELECT processId, kind, key, nameId FROM CPROF_NAMES ORDER BY rowid", &st)) < 0)
		return ret;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *kind = (const char *)sqlite3_column_text(st, 1);
		const char *name = cprof_model_string(&s->m, I64(st, 3));
		int stream;

		if (!kept(s, I64(st, 0)))
			continue;
		s->nvtx = 1;
		if (kind == NULL || NUL(st, 3) || name == NULL || (strcmp(kind, "thread") && strcmp(kind, "stream")))
			continue;
		stream = !strcmp(kind, "stream");
		if (!stream && proc_index(s, I64(st, 0)) == SIZE_MAX)
			continue; /* a thread's name needs its process's pid */
		if (cprof_grow(&w->rows, &cap, w->nrows, sizeof(*w->rows)) < 0) {
			sqlite3_finalize(st);
			return -ENOMEM;
		}
		w->rows[w->nrows] = (struct name_row){ .proc = I64(st, 0), .key = I64(st, 2), .name = name, .seq = w->nrows,
						       .stream = stream };
		w->nrows++;
	}
	sqlite3_finalize(st);
	if ((ret = step_done(s->db, rc)) < 0)
		return ret;
	sort_n(w->rows, w->nrows, sizeof(*w->rows), cmp_name_row);
	w->keys = malloc((w->nrows ? w->nrows : 1) * sizeof(*w->keys));
	if (w->keys == NULL)
		return -ENOMEM;
	for (i = 0; i < w->nrows; i++) {
		if (!w->rows[i].stream)
			continue;
		if (w->nkeys == 0 || w->keys[w->nkeys - 1].proc != w->rows[i].proc || w->keys[w->nkeys - 1].key != w->rows[i].key)
			w->keys[w->nkeys++] = (struct stream_key){ w->rows[i].proc, w->rows[i].key, CPROF_NO_ID };
		w->rows[i].skey = w->nkeys - 1;
	}
	return 0;
}

static size_t skey_find(const struct names_work *w, int64_t proc, int64_t key)
{
	struct stream_key k = { proc, key, 0 };
	const struct stream_key *f = bsearch(&k, w->keys, w->nkeys, sizeof(*w->keys), cmp_skey);

	return f ? (size_t)(f - w->keys) : SIZE_MAX;
}

struct lcalls {
	struct cprof_tsrc_lcall *v;
	size_t n, cap;
	struct cprof_tsrc_pair *threads; /* (proc, tid) of the ranges a call can fall in, sorted */
	size_t nthreads;
};

/* CPROF_API's key columns: the hooked calls' blocks, the latest end of each process, what NVTX needs */
static int scan_call_keys(struct cprof_trace_src *s, int64_t *api_end, struct lcalls *lc, struct names_work *w, int *have,
			  int64_t *min)
{
	struct jindex *x = &s->join->ix[J_HOOK];
	sqlite3_stmt *st;
	size_t k;
	int rc, ret;

	if ((ret = prep(s->db, "SELECT processId, tid, start, end, correlationId, nameId, stream, rowid FROM CPROF_API ORDER BY rowid",
			&st)) < 0)
		return ret;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t proc = I64(st, 0), tid = I64(st, 1), start = I64(st, 2);
		size_t p;

		if (!kept(s, proc))
			continue;
		note_start(s, st, 2, have, min);
		if ((p = proc_index(s, proc)) != SIZE_MAX && !NUL(st, 3) && I64(st, 3) > api_end[p])
			api_end[p] = I64(st, 3);
		if (jix_add(x, I64(st, 7), !NUL(st, 4) && !NUL(st, 0), proc, I64(st, 4)) < 0)
			goto nomem;
		if (NUL(st, 4) || NUL(st, 0))
			continue;
		if (lc->nthreads) {
			struct cprof_tsrc_pair key = { proc, tid };

			if (bsearch(&key, lc->threads, lc->nthreads, sizeof(key), cmp_pair)) {
				if (cprof_grow(&lc->v, &lc->cap, lc->n, sizeof(*lc->v)) < 0)
					goto nomem;
				lc->v[lc->n++] = (struct cprof_tsrc_lcall){ proc, tid, start, I64(st, 4) };
			}
		}
		if (w->nkeys && !NUL(st, 6) && (k = skey_find(w, proc, I64(st, 6))) != SIZE_MAX) {
			if (cprof_grow(&w->cand, &w->capcand, w->ncand, sizeof(*w->cand)) < 0)
				goto nomem;
			w->cand[w->ncand].key = k;
			w->cand[w->ncand++].ext = I64(st, 4);
		}
	}
	sqlite3_finalize(st);
	if ((ret = step_done(s->db, rc)) < 0)
		return ret;
	return jix_finish(x);
nomem:
	sqlite3_finalize(st);
	return -ENOMEM;
}

/* CUPTI's runtime then driver records: their blocks, the CUPTI threads, the thread map */
static int scan_api_keys(struct cprof_trace_src *s, struct pairmap *threads, struct pairmap *tmap, int *have,
			 int64_t *min)
{
	static const char *const tables[] = { "CUPTI_ACTIVITY_KIND_RUNTIME", "CUPTI_ACTIVITY_KIND_DRIVER" };
	size_t nrow = 0;
	int t, rc, ret, added;

	for (t = 0; t < 2; t++) {
		struct jindex *x = &s->join->ix[J_RT + t];
		sqlite3_stmt *st;
		char sql[160];

		if (!cprof_has_table(s->db, tables[t])) {
			if ((ret = jix_finish(x)) < 0)
				return ret;
			continue;
		}
		snprintf(sql, sizeof(sql), "SELECT processId, correlationId, nameId, cbid, threadId, start, rowid FROM %s ORDER BY rowid",
			 tables[t]);
		if ((ret = prep(s->db, sql, &st)) < 0)
			return ret;
		while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
			int64_t proc = I64(st, 0), corr = I64(st, 1), handle = I64(st, 4);
			struct jiter it = { .proc = proc, .key = corr };
			const struct cprof_ext *e;

			if (!kept(s, proc))
				continue;
			note_start(s, st, 5, have, min);
			if (jix_add(x, I64(st, 6), !NUL(st, 0) && !NUL(st, 1), proc, corr) < 0 ||
			    pairmap_get(threads, proc, handle, 0, &added) == NULL)
				goto nomem;
			if (NUL(st, 1))
				continue;
			if (++nrow % CPROF_TSRC_BATCH == 0)
				jnext(s);
			/* the thread map: the smallest tid of a hooked call whose CUPTI side this is */
			while ((e = jit_next(s, &s->join->ix[J_EXTC], &it)) != NULL) {
				const struct cprof_tsrc_hook *h = cprof_tsrc_hook_find(s, proc, e->ext);
				int64_t *v;

				if (h == NULL)
					continue;
				if ((v = pairmap_get(tmap, proc, handle, h->mintid, &added)) == NULL)
					goto nomem;
				if (h->mintid < *v)
					*v = h->mintid;
			}
			if (s->join->err) {
				sqlite3_finalize(st);
				return s->join->err;
			}
			continue;
nomem:
			sqlite3_finalize(st);
			return -ENOMEM;
		}
		sqlite3_finalize(st);
		if ((ret = step_done(s->db, rc)) < 0 || (ret = jix_finish(x)) < 0)
			return ret;
	}
	return 0;
}

static int cmp_gop(const void *x, const void *y)
{
	const struct cprof_tsrc_gop *a = x, *b = y;

	if (a->proc != b->proc)
		return a->proc < b->proc ? -1 : 1;
	if (a->corr != b->corr)
		return a->corr < b->corr ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/* the GPU ops' key columns: which CUPTI ids reached the GPU, the lanes, and (for NVTX) each op's lane and span */
static int scan_gpu_keys(struct cprof_trace_src *s, struct pairmap *lanes, int keep_ops, int *have, int64_t *min)
{
	static const char *const tables[] = { "CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY",
					      "CUPTI_ACTIVITY_KIND_MEMSET" };
	size_t cap = 0;
	uint32_t seq = 0;
	int t, rc, ret, added;

	for (t = 0; t < 3; t++) {
		sqlite3_stmt *st;
		char sql[160];

		if (!cprof_has_table(s->db, tables[t]))
			continue;
		snprintf(sql, sizeof(sql), "SELECT processId, correlationId, deviceId, streamId, start, end, rowid FROM %s ORDER BY rowid",
			 tables[t]);
		if ((ret = prep(s->db, sql, &st)) < 0)
			return ret;
		while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
			int64_t proc = I64(st, 0), corr = I64(st, 1);

			if (!kept(s, proc))
				continue;
			note_start(s, st, 4, have, min);
			if (pairmap_get(lanes, I64(st, 2), I64(st, 3), 0, &added) == NULL ||
			    jix_add(&s->join->ix[J_KERNEL + t], I64(st, 6), !NUL(st, 0) && !NUL(st, 1), proc, corr) < 0)
				goto nomem;
			if (NUL(st, 0) || NUL(st, 1))
				continue;
			if (keep_ops) {
				if (cprof_grow(&s->gops, &cap, s->ngops, sizeof(*s->gops)) < 0)
					goto nomem;
				s->gops[s->ngops++] = (struct cprof_tsrc_gop){ proc, corr, I64(st, 2), I64(st, 3), I64(st, 4),
									      I64(st, 5), seq++ };
			}
			continue;
nomem:
			sqlite3_finalize(st);
			return -ENOMEM;
		}
		sqlite3_finalize(st);
		if ((ret = step_done(s->db, rc)) < 0)
			return ret;
	}
	for (t = 0; t < 3; t++)
		if ((ret = jix_finish(&s->join->ix[J_KERNEL + t])) < 0)
			return ret;
	if (s->ngops)
		sort_n(s->gops, s->ngops, sizeof(*s->gops), cmp_gop);
	return 0;
}

/* the external correlations' blocks, by CUPTI id and by our id (the rows the model's join reads) */
static int scan_ext_keys(struct cprof_trace_src *s)
{
	struct jindex *c = &s->join->ix[J_EXTC], *e = &s->join->ix[J_EXTE];
	char sql[256];
	sqlite3_stmt *st;
	int rc, ret;

	if (cprof_has_table(s->db, ext_table)) {
		snprintf(sql, sizeof(sql), "SELECT rowid, processId, correlationId, externalId FROM %s WHERE %s ORDER BY rowid",
			 ext_table, ext_where);
		if ((ret = prep(s->db, sql, &st)) < 0)
			return ret;
		while ((rc = sqlite3_step(st)) == SQLITE_ROW)
			if (jix_add(c, I64(st, 0), 1, I64(st, 1), I64(st, 2)) < 0 || jix_add(e, I64(st, 0), 1, I64(st, 1), I64(st, 3)) < 0) {
				sqlite3_finalize(st);
				return -ENOMEM;
			}
		sqlite3_finalize(st);
		if ((ret = step_done(s->db, rc)) < 0)
			return ret;
	}
	if ((ret = jix_finish(c)) < 0)
		return ret;
	return jix_finish(e);
}

static int cmp_lcall(const void *x, const void *y)
{
	const struct cprof_tsrc_lcall *a = x, *b = y;

	if (a->proc != b->proc)
		return a->proc < b->proc ? -1 : 1;
	if (a->tid != b->tid)
		return a->tid < b->tid ? -1 : 1;
	return a->start < b->start ? -1 : a->start > b->start;
}

static int cmp_proj(const void *x, const void *y)
{
	const struct cprof_tsrc_proj *a = x, *b = y;

	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	if (a->end != b->end)
		return a->end > b->end ? -1 : 1;
	if (a->depth != b->depth)
		return a->depth < b->depth ? -1 : 1;
	if (a->id != b->id)
		return a->id < b->id ? -1 : 1;
	if (a->dev != b->dev)
		return a->dev < b->dev ? -1 : 1;
	return a->stream < b->stream ? -1 : a->stream > b->stream;
}

int cprof_tsrc_project(struct cprof_trace_src *s, struct cprof_tsrc_lcall *calls, size_t ncalls)
{
	size_t r, cap = 0, nlook = 0;

	sort_n(calls, ncalls, sizeof(*calls), cmp_lcall);
	for (r = 0; r < s->nev; r++) {
		const struct cprof_tsrc_nvtx *e = &s->ev[r];
		struct cprof_tsrc_lcall key = { e->proc, e->tid, e->start, 0 };
		size_t lo = 0, hi = ncalls, first = s->nproj, c;

		if ((e->type != CPROF_NVTX_RANGE && e->type != CPROF_NVTX_STARTEND) || e->torch_op)
			continue;
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;

			if (cmp_lcall(&calls[mid], &key) < 0)
				lo = mid + 1;
			else
				hi = mid;
		}
		for (c = lo; c < ncalls && calls[c].proc == e->proc && calls[c].tid == e->tid && calls[c].start <= e->end; c++) {
			size_t x;

			if (++nlook % CPROF_TSRC_BATCH == 0)
				jnext(s);
			call_corr_list(s, e->proc, calls[c].ext);
			for (x = 0; x < s->join->ncorrs; x++) {
				int64_t corr = s->join->corrs[x];
				size_t g;

				for (g = lower_pair(s->gops, s->ngops, sizeof(*s->gops), e->proc, corr);
				     g < s->ngops && s->gops[g].proc == e->proc && s->gops[g].corr == corr; g++) {
					const struct cprof_tsrc_gop *o = &s->gops[g];
					size_t k;

					for (k = first; k < s->nproj; k++)
						if (s->proj[k].dev == o->dev && s->proj[k].stream == o->stream)
							break;
					if (k == s->nproj) {
						if (cprof_grow(&s->proj, &cap, s->nproj, sizeof(*s->proj)) < 0)
							return -ENOMEM;
						s->proj[s->nproj++] = (struct cprof_tsrc_proj){ e->id, o->dev, o->stream, o->start,
												o->end, e->depth, e->text };
						continue;
					}
					if (o->start < s->proj[k].start)
						s->proj[k].start = o->start;
					if (o->end > s->proj[k].end)
						s->proj[k].end = o->end;
				}
			}
		}
	}
	sort_n(s->proj, s->nproj, sizeof(*s->proj), cmp_proj);
	return s->join->err;
}

static int cmp_ev(const void *x, const void *y)
{
	const struct cprof_tsrc_nvtx *a = x, *b = y;

	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	if (a->depth != b->depth)
		return a->depth < b->depth ? -1 : 1;
	return a->id < b->id ? -1 : a->id > b->id;
}

int cprof_tsrc_index_finish(struct cprof_trace_src *s)
{
	sort_n(s->ev, s->nev, sizeof(*s->ev), cmp_ev);
	return 0;
}

struct stream_name {
	int64_t proc, lane;
	size_t seq;
	const char *name;
};

static int cmp_stream_name(const void *x, const void *y)
{
	const struct stream_name *a = x, *b = y;

	if (a->proc != b->proc)
		return a->proc < b->proc ? -1 : 1;
	if (a->lane != b->lane)
		return a->lane < b->lane ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/* each name given to a stream: the lane of the first GPU op of the first call on that handle that reached the
 * GPU (its CUPTI ids in order; kernels, copies, memsets); threads by (process, tid), then streams by (process,
 * lane), names of one lane in table order */
static int resolve_names(struct cprof_trace_src *s, struct names_work *w)
{
	struct stream_name *sn;
	size_t i, k = 0, nsn = 0;

	for (i = 0; i < w->ncand; i++) {
		struct stream_key *key = &w->keys[w->cand[i].key];
		size_t x;

		if ((i + 1) % CPROF_TSRC_BATCH == 0)
			jnext(s);
		if (key->lane != CPROF_NO_ID)
			continue;
		call_corr_list(s, key->proc, w->cand[i].ext);
		for (x = 0; x < s->join->ncorrs && key->lane == CPROF_NO_ID; x++) {
			int64_t corr = s->join->corrs[x];
			size_t g;

			g = lower_pair(s->gops, s->ngops, sizeof(*s->gops), key->proc, corr);
			if (g < s->ngops && s->gops[g].proc == key->proc && s->gops[g].corr == corr)
				key->lane = (int64_t)((uint64_t)s->gops[g].dev * 4294967296u + (uint64_t)s->gops[g].stream);
		}
	}
	if (s->join->err)
		return s->join->err;
	s->names = malloc((w->nrows ? w->nrows : 1) * sizeof(*s->names));
	sn = malloc((w->nrows ? w->nrows : 1) * sizeof(*sn));
	if (s->names == NULL || sn == NULL) {
		free(sn);
		return -ENOMEM;
	}
	for (i = 0; i < w->nrows; i++) {
		const struct name_row *r = &w->rows[i];

		if (!r->stream)
			s->names[k++] = (struct cprof_tsrc_name){ 0, s->m.procs[proc_index(s, r->proc)].pid, r->key, r->name };
		else if (w->keys[r->skey].lane != CPROF_NO_ID)
			sn[nsn++] = (struct stream_name){ r->proc, w->keys[r->skey].lane, r->seq, r->name };
	}
	sort_n(sn, nsn, sizeof(*sn), cmp_stream_name);
	/* as SQL splits device * 2^32 + stream */
	for (i = 0; i < nsn; i++)
		s->names[k++] = (struct cprof_tsrc_name){ 1, sn[i].lane >> 32, sn[i].lane & 4294967295, sn[i].name };
	s->nnames = k;
	free(sn);
	return 0;
}

static void free_names_work(struct names_work *w)
{
	free(w->rows);
	free(w->keys);
	free(w->cand);
}

/* a range never ended runs to the last time its process is known alive: its exit, its last call, its last
 * annotation (a range of no known process: to its start) */
static void nvtx_stretch(struct cprof_trace_src *s, const int64_t *end_ns, const int64_t *api_end, const int64_t *nvtx_end)
{
	size_t i;

	for (i = 0; i < s->nev; i++) {
		struct cprof_tsrc_nvtx *e = &s->ev[i];
		size_t p = proc_index(s, e->proc);
		int64_t pe;

		if (!e->open || (e->type != CPROF_NVTX_RANGE && e->type != CPROF_NVTX_STARTEND) || p == SIZE_MAX)
			continue;
		pe = end_ns[p] > api_end[p] ? end_ns[p] : api_end[p];
		if (nvtx_end[p] > pe)
			pe = nvtx_end[p];
		e->end = pe > e->start ? pe : e->start;
	}
}

static int cmp_thread(const void *x, const void *y)
{
	const struct cprof_thread *a = x, *b = y;

	if (a->proc != b->proc)
		return a->proc < b->proc ? -1 : 1;
	return a->handle < b->handle ? -1 : a->handle > b->handle;
}

int cprof_trace_src_load(sqlite3 *db, int64_t rank, struct cprof_trace_src *s)
{
	struct pairmap cpu = { 0 }, cupti = { 0 }, lanes = { 0 }, tmap = { 0 };
	struct names_work w = { 0 };
	struct lcalls lc = { 0 };
	int64_t *end_ns = NULL, *api_end = NULL, *nvtx_end = NULL, min = 0;
	int have = 0, ret;
	size_t i;

	memset(s, 0, sizeof(*s));
	s->db = db;
	s->rank = rank;
	s->first_start = -1;
	if ((ret = cprof_model_load(db, CPROF_MODEL_TRACE, &s->m)) < 0) {
		pr_err("reading the profile failed: %s", cprof_model_errmsg(db));
		goto out;
	}
	filter_rank(s);
	end_ns = calloc(s->m.nprocs + 1, sizeof(*end_ns));
	api_end = calloc(s->m.nprocs + 1, sizeof(*api_end));
	nvtx_end = calloc(s->m.nprocs + 1, sizeof(*nvtx_end));
	ret = -ENOMEM;
	if (end_ns == NULL || api_end == NULL || nvtx_end == NULL)
		goto out;
	if ((ret = load_facts(s, end_ns)) < 0)
		goto out;
	if ((ret = cprof_stacks_load(db, &s->stacks)) < 0) {
		pr_err("cannot read the call stacks: %s", sqlite3_errmsg(db));
		goto out;
	}
	if ((ret = load_nvtx(s, nvtx_end, &have, &min)) < 0 || (ret = load_names(s, &w)) < 0 || (ret = oprng_build(s)) < 0 ||
	    (ret = load_threads_table(s, &cpu)) < 0 || (ret = join_init(s)) < 0 || (ret = scan_ext_keys(s)) < 0)
		goto out;
	s->nvtx = s->nvtx || s->nev;
	/* the threads whose calls a range that is not an ATen op can project onto the GPU */
	{
		struct pairmap rt = { 0 };
		int added;

		for (i = 0; i < s->nev; i++)
			if ((s->ev[i].type == CPROF_NVTX_RANGE || s->ev[i].type == CPROF_NVTX_STARTEND) && !s->ev[i].torch_op &&
			    pairmap_get(&rt, s->ev[i].proc, s->ev[i].tid, 0, &added) == NULL) {
				pairmap_free(&rt);
				ret = -ENOMEM;
				goto out;
			}
		if ((ret = pairmap_sorted(&rt, &lc.threads, &lc.nthreads)) < 0)
			goto out;
	}
	if ((ret = scan_call_keys(s, api_end, &lc, &w, &have, &min)) < 0 || (ret = scan_api_keys(s, &cupti, &tmap, &have, &min)) < 0 ||
	    (ret = scan_gpu_keys(s, &lanes, lc.n > 0 || w.nkeys > 0, &have, &min)) < 0)
		goto out;
	if (cprof_has_table(db, "CUPTI_ACTIVITY_KIND_OVERHEAD")) {
		sqlite3_stmt *st;
		int rc;

		if ((ret = prep(db, "SELECT processId, start FROM CUPTI_ACTIVITY_KIND_OVERHEAD ORDER BY rowid", &st)) < 0)
			goto out;
		while ((rc = sqlite3_step(st)) == SQLITE_ROW)
			if (kept(s, I64(st, 0))) {
				note_start(s, st, 1, &have, &min);
				s->novh++;
			}
		sqlite3_finalize(st);
		if ((ret = step_done(db, rc)) < 0)
			goto out;
	}
	s->first_start = have ? min : -1;
	nvtx_stretch(s, end_ns, api_end, nvtx_end);
	/* the calls that reached the GPU, and the projections through them */
	{
		size_t k = 0;

		for (i = 0; i < lc.n; i++) {
			int64_t g, a, n;

			if ((i + 1) % CPROF_TSRC_BATCH == 0)
				jnext(s);
			cprof_tsrc_call_corrs(s, lc.v[i].proc, lc.v[i].ext, &g, &a, &n);
			if (n > 0)
				lc.v[k++] = lc.v[i];
		}
		if ((ret = cprof_tsrc_project(s, lc.v, k)) < 0)
			goto out;
	}
	if ((ret = resolve_names(s, &w)) < 0 || (ret = cprof_tsrc_index_finish(s)) < 0)
		goto out;
	if ((ret = pairmap_sorted(&cpu, &s->cpu_threads, &s->ncpu_threads)) < 0 ||
	    (ret = pairmap_sorted(&cupti, &s->cupti_threads, &s->ncupti_threads)) < 0 ||
	    (ret = pairmap_sorted(&lanes, &s->gpu_lanes, &s->ngpu_lanes)) < 0)
		goto out;
	/* the thread map of the model */
	s->m.threads = malloc((tmap.n ? tmap.n : 1) * sizeof(*s->m.threads));
	if (s->m.threads == NULL) {
		ret = -ENOMEM;
		goto out;
	}
	for (i = 0; i < tmap.cap; i++)
		if (tmap.used[i])
			s->m.threads[s->m.nthreads++] = (struct cprof_thread){ tmap.k[i].a, tmap.k[i].b, tmap.v[i] };
	sort_n(s->m.threads, s->m.nthreads, sizeof(*s->m.threads), cmp_thread);
	ret = 0;
out:
	pairmap_free(&cpu);
	pairmap_free(&cupti);
	pairmap_free(&lanes);
	pairmap_free(&tmap);
	free_names_work(&w);
	free(lc.v);
	free(lc.threads);
	free(end_ns);
	free(api_end);
	free(nvtx_end);
	if (ret < 0)
		cprof_trace_src_free(s);
	return ret;
}

void cprof_trace_src_free(struct cprof_trace_src *s)
{
	cprof_model_free(&s->m);
	cprof_stacks_free(&s->stacks);
	free(s->command);
	join_free(s);
	free(s->gops);
	free(s->cpu_threads);
	free(s->cupti_threads);
	free(s->gpu_lanes);
	free(s->ev);
	free(s->proj);
	free(s->names);
	free(g_op);
	g_op = NULL;
	g_nop = 0;
	memset(s, 0, sizeof(*s));
}

/* ---- the streams: one scan in rowid order, a batch of columns at a time ---- */

/* the scan's end: 0 at the table's end, -ERANGE after a row out of range (said), -EIO else */
static int scan_end(sqlite3_stmt *st, int rc, int bad)
{
	sqlite3_finalize(st);
	if (bad)
		return -ERANGE;
	return rc == SQLITE_DONE ? 0 : -EIO;
}

int cprof_tsrc_scan_calls(struct cprof_trace_src *s, int (*fn)(void *ctx, const struct cprof_tsrc_calls *b), void *ctx)
{
	struct cprof_tsrc_calls *b = malloc(sizeof(*b));
	char sql[320];
	sqlite3_stmt *st;
	int rc, ret = 0, bad = 0;

	if (b == NULL)
		return -ENOMEM;
	/* a profile from before stacks has no stackId column */
	snprintf(sql, sizeof(sql),
		 "SELECT processId, pid, tid, start, end, correlationId, nameId, class, returnValue, nested, kernelNameId,"
		 " stream, bytes, a0, a1, a2, a3, a4, a5, a6, %s FROM CPROF_API ORDER BY rowid",
		 s->stacks.n ? "stackId" : "NULL");
	if ((ret = prep(s->db, sql, &st)) < 0) {
		free(b);
		return ret;
	}
	b->n = 0;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		size_t i = b->n;
		int k;

		if (!kept(s, I64(st, 0)))
			continue;
		/* a call whose name is not in StringIds is not written (the old join dropped it) */
		if (cprof_model_string(&s->m, I64(st, 6)) == NULL || NUL(st, 6))
			continue;
		if (!cprof_row_times_ok(st, 3, 4, 0)) {
			cprof_bad_time("CPROF_API", st, 3, 4);
			bad = 1;
			break;
		}
		b->proc[i] = I64(st, 0);
		b->pid[i] = I64(st, 1);
		b->tid[i] = I64(st, 2);
		b->start[i] = I64(st, 3);
		b->end[i] = I64(st, 4);
		b->has_ext[i] = !NUL(st, 5);
		b->ext[i] = I64(st, 5);
		b->name[i] = I64(st, 6);
		b->cls[i] = cprof_call_class_of((const char *)sqlite3_column_text(st, 7));
		b->ret[i] = I64(st, 8);
		b->nested[i] = I64(st, 9) != 0;
		b->kname[i] = I64(st, 10);
		b->has_stream[i] = !NUL(st, 11);
		b->stream[i] = I64(st, 11);
		b->has_bytes[i] = !NUL(st, 12);
		b->bytes[i] = I64(st, 12);
		for (k = 0; k < 7; k++)
			b->a[k][i] = I64(st, 13 + k);
		b->has_stack[i] = !NUL(st, 20);
		b->stack[i] = I64(st, 20);
		if (++b->n == CPROF_TSRC_BATCH) {
			jnext(s);
			if ((ret = jresult(s, fn(ctx, b))) < 0)
				break;
			b->n = 0;
		}
	}
	if (ret == 0 && b->n && (rc == SQLITE_DONE || bad)) {
		jnext(s);
		ret = jresult(s, fn(ctx, b));
	}
	free(b);
	if (ret < 0) {
		sqlite3_finalize(st);
		return ret;
	}
	return scan_end(st, rc, bad);
}

int cprof_tsrc_scan_apis(struct cprof_trace_src *s, enum cprof_tsrc_api_table table,
			 int (*fn)(void *ctx, const struct cprof_tsrc_apis *b), void *ctx)
{
	const char *name = table == CPROF_TSRC_RUNTIME ? "CUPTI_ACTIVITY_KIND_RUNTIME" : "CUPTI_ACTIVITY_KIND_DRIVER";
	struct cprof_tsrc_apis *b;
	char sql[200];
	sqlite3_stmt *st;
	int rc, ret = 0, bad = 0;

	if (!cprof_has_table(s->db, name))
		return 0; /* an older profile */
	if ((b = malloc(sizeof(*b))) == NULL)
		return -ENOMEM;
	snprintf(sql, sizeof(sql), "SELECT processId, start, end, correlationId, nameId, cbid, threadId FROM %s ORDER BY rowid",
		 name);
	if ((ret = prep(s->db, sql, &st)) < 0) {
		free(b);
		return ret;
	}
	b->n = 0;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		size_t i = b->n;

		if (!kept(s, I64(st, 0)))
			continue;
		if (!cprof_row_times_ok(st, 1, 2, 0)) {
			cprof_bad_time(name, st, 1, 2);
			bad = 1;
			break;
		}
		b->proc[i] = I64(st, 0);
		b->start[i] = I64(st, 1);
		b->end[i] = I64(st, 2);
		b->has_corr[i] = !NUL(st, 3) && !NUL(st, 0);
		b->corr[i] = I64(st, 3);
		b->name[i] = NUL(st, 4) ? CPROF_NO_ID : I64(st, 4);
		b->cbid[i] = I64(st, 5);
		b->thread[i] = I64(st, 6);
		if (++b->n == CPROF_TSRC_BATCH) {
			jnext(s);
			if ((ret = jresult(s, fn(ctx, b))) < 0)
				break;
			b->n = 0;
		}
	}
	if (ret == 0 && b->n && (rc == SQLITE_DONE || bad)) {
		jnext(s);
		ret = jresult(s, fn(ctx, b));
	}
	free(b);
	if (ret < 0) {
		sqlite3_finalize(st);
		return ret;
	}
	return scan_end(st, rc, bad);
}

int cprof_tsrc_scan_ops(struct cprof_trace_src *s, enum cprof_op_kind kind,
			int (*fn)(void *ctx, const struct cprof_tsrc_ops *b), void *ctx)
{
	static const char *const sql[] = {
		[CPROF_OP_KERNEL] = "SELECT processId, start, end, deviceId, contextId, streamId, correlationId, nameId, gridX,"
				    " gridY, gridZ, blockX, blockY, blockZ, registersPerThread,"
				    " staticSharedMemory + dynamicSharedMemory FROM CUPTI_ACTIVITY_KIND_KERNEL ORDER BY rowid",
		[CPROF_OP_MEMCPY] = "SELECT processId, start, end, deviceId, contextId, streamId, correlationId, bytes, copyKind,"
				    " srcKind, dstKind FROM CUPTI_ACTIVITY_KIND_MEMCPY ORDER BY rowid",
		[CPROF_OP_MEMSET] = "SELECT processId, start, end, deviceId, contextId, streamId, correlationId, bytes, memKind"
				    " FROM CUPTI_ACTIVITY_KIND_MEMSET ORDER BY rowid",
	};
	static const char *const tables[] = { "CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY",
					      "CUPTI_ACTIVITY_KIND_MEMSET" };
	struct cprof_tsrc_ops *b;
	sqlite3_stmt *st;
	int rc, ret = 0, bad = 0;

	if (!cprof_has_table(s->db, tables[kind]))
		return 0;
	if ((b = malloc(sizeof(*b))) == NULL)
		return -ENOMEM;
	if ((ret = prep(s->db, sql[kind], &st)) < 0) {
		free(b);
		return ret;
	}
	b->n = 0;
	b->kind = kind;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		size_t i = b->n;
		int k;

		if (!kept(s, I64(st, 0)))
			continue;
		if (!cprof_row_times_ok(st, 1, 2, 0)) {
			cprof_bad_time("CUPTI_ACTIVITY_KIND_KERNEL/MEMCPY/MEMSET", st, 1, 2);
			bad = 1;
			break;
		}
		b->proc[i] = I64(st, 0);
		b->start[i] = I64(st, 1);
		b->end[i] = I64(st, 2);
		b->dev[i] = I64(st, 3);
		b->ctx[i] = I64(st, 4);
		b->stream[i] = I64(st, 5);
		b->has_corr[i] = !NUL(st, 6) && !NUL(st, 0);
		b->corr[i] = I64(st, 6);
		if (kind == CPROF_OP_KERNEL) {
			b->name[i] = I64(st, 7);
			for (k = 0; k < 3; k++) {
				b->grid[k][i] = I64(st, 8 + k);
				b->block[k][i] = I64(st, 11 + k);
			}
			b->regs[i] = I64(st, 14);
			b->shmem[i] = I64(st, 15);
		} else if (kind == CPROF_OP_MEMCPY) {
			b->bytes[i] = I64(st, 7);
			b->copy[i] = I64(st, 8);
			b->src[i] = I64(st, 9);
			b->dst[i] = I64(st, 10);
		} else {
			b->bytes[i] = I64(st, 7);
			b->mem[i] = I64(st, 8);
		}
		if (++b->n == CPROF_TSRC_BATCH) {
			jnext(s);
			if ((ret = jresult(s, fn(ctx, b))) < 0)
				break;
			b->n = 0;
		}
	}
	if (ret == 0 && b->n && (rc == SQLITE_DONE || bad)) {
		jnext(s);
		ret = jresult(s, fn(ctx, b));
	}
	free(b);
	if (ret < 0) {
		sqlite3_finalize(st);
		return ret;
	}
	return scan_end(st, rc, bad);
}

int cprof_tsrc_scan_overhead(struct cprof_trace_src *s, int (*fn)(void *ctx, const struct cprof_tsrc_ovhs *b), void *ctx)
{
	struct cprof_tsrc_ovhs *b;
	sqlite3_stmt *st;
	int rc, ret = 0, bad = 0;

	if (!cprof_has_table(s->db, "CUPTI_ACTIVITY_KIND_OVERHEAD"))
		return 0;
	if ((b = malloc(sizeof(*b))) == NULL)
		return -ENOMEM;
	if ((ret = prep(s->db, "SELECT processId, start, end, overheadKind FROM CUPTI_ACTIVITY_KIND_OVERHEAD ORDER BY rowid",
			&st)) < 0) {
		free(b);
		return ret;
	}
	b->n = 0;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (!kept(s, I64(st, 0)))
			continue;
		if (!cprof_row_times_ok(st, 1, 2, 0)) {
			cprof_bad_time("CUPTI_ACTIVITY_KIND_OVERHEAD", st, 1, 2);
			bad = 1;
			break;
		}
		b->start[b->n] = I64(st, 1);
		b->end[b->n] = I64(st, 2);
		b->kind[b->n] = I64(st, 3);
		if (++b->n == CPROF_TSRC_BATCH) {
			jnext(s);
			if ((ret = jresult(s, fn(ctx, b))) < 0)
				break;
			b->n = 0;
		}
	}
	if (ret == 0 && b->n && (rc == SQLITE_DONE || bad)) {
		jnext(s);
		ret = jresult(s, fn(ctx, b));
	}
	free(b);
	if (ret < 0) {
		sqlite3_finalize(st);
		return ret;
	}
	return scan_end(st, rc, bad);
}

int cprof_trace_src_open(const char *path, int64_t rank, struct cprof_trace_src *s)
{
	sqlite3 *db = cprof_profile_open(path);
	int ret;

	memset(s, 0, sizeof(*s));
	if (db == NULL)
		return -EINVAL; /* cprof_profile_open said why */
	if ((ret = cprof_trace_src_load(db, rank, s)) < 0) {
		sqlite3_close(db);
		return ret;
	}
	return 0;
}

void cprof_trace_src_close(struct cprof_trace_src *s)
{
	sqlite3 *db = s->db;

	cprof_trace_src_free(s);
	sqlite3_close(db);
}

int cprof_trace_src_ranks(const char *path, int64_t **ranks, size_t *n, int64_t *world)
{
	sqlite3 *db = cprof_profile_open(path);
	sqlite3_stmt *st = NULL;
	size_t cap = 0;
	int rc, ret = -EIO;

	*ranks = NULL;
	*n = 0;
	*world = 0;
	if (db == NULL)
		return -EINVAL;
	if (sqlite3_prepare_v2(db, "SELECT DISTINCT rank FROM PROCESSES WHERE rank IS NOT NULL ORDER BY rank", -1, &st,
			       NULL) != SQLITE_OK) {
		pr_err("%s: cannot read its processes: %s", path, sqlite3_errmsg(db));
		goto out;
	}
	/* every rank: it stopped at 4096 without a word (issue 21, item 11) */
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (cprof_grow(ranks, &cap, *n, sizeof(**ranks)) < 0) {
			pr_err("out of memory");
			ret = -ENOMEM;
			goto out;
		}
		(*ranks)[(*n)++] = sqlite3_column_int64(st, 0);
	}
	if (rc != SQLITE_DONE) {
		pr_err("%s: cannot read its processes: %s", path, sqlite3_errmsg(db));
		goto out;
	}
	sqlite3_finalize(st);
	st = NULL;
	/* the world is what the launcher said */
	if (sqlite3_prepare_v2(db, "SELECT max(worldSize) FROM PROCESSES", -1, &st, NULL) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW)
		*world = sqlite3_column_int64(st, 0);
	ret = 0;
out:
	sqlite3_finalize(st);
	sqlite3_close(db);
	return ret;
}

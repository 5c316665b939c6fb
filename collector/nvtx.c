/* NVTX pairing and storage: a range is one NVTX_EVENTS row, written when it ends (or, still open, when its process does). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#define PR_FMT "cprofd: nvtx"
#include "common/api.h"
#include "common/log.h"
#include "collector/ingest.h"
#include "collector/nvtx.h"
#include "collector/store.h"

#define MAX_DEPTH     4096      /* levels kept per thread and domain; deeper pushes are counted, not stored */
#define MAX_STACKS    65536     /* (thread, domain) pairs, all processes together */
#define MAX_OPEN      (1u << 20) /* start/end ranges waiting for their other half, all processes */
#define MAX_STRING_ID (1u << 24) /* as ingest.c: no process has this many strings */
#define STACK_BUCKETS 256

/* what a range carries from its beginning to its row */
struct attrs {
	int64_t text;   /* StringIds ids, 0 = none */
	int64_t domain;
	uint32_t category;
	uint32_t color;
};

struct pushed {
	int64_t id;
	uint64_t start;
	int level; /* the preload's level, -2 where it keeps none */
	struct attrs a;
};

struct stack {
	uint32_t tid;
	uint32_t domain;   /* the process's string id of the domain name, 0 = default domain */
	int64_t domain_gid;
	uint32_t n, cap;
	uint32_t skipped;  /* pushes not stored (too deep, no memory): the pops that match them are skipped too */
	struct pushed *r;
	struct stack *next;
};

/* Start and end may come from two threads whose rings the preload drains in either order: whichever half
 * arrives first waits here for the other. */
struct half {
	uint64_t rid;
	int has_start, has_end;
	int64_t id, parent;
	uint64_t start, end;
	uint32_t tid, end_tid;
	struct attrs a;
	struct half *next;
};

struct nproc {
	int64_t proc_id;
	uint32_t pid;
	struct stack *stk[STACK_BUCKETS];
	struct stack *last;
	struct half **halves;
	size_t nbuckets, nhalves;
	uint64_t bad_pops, bad_ends, dropped;
	struct nproc *next;
};

struct cprof_nvtx {
	sqlite3_stmt *ins, *name;
	int64_t next_id;
	struct nproc *procs, *last;
	size_t nstacks, nhalves;
	int warned_nomem;
};

/* an NVTX_EVENTS row; 0 stands for NULL in the optional columns */
struct row {
	int64_t id;
	uint32_t tid, end_tid;
	uint64_t start, end;
	int has_end;
	const char *type;
	struct attrs a;
	int depth; /* -1: none */
	int64_t parent;
};

static int db_err(struct cprof_ingest *in, const char *what)
{
	pr_err("%s: %s", what, sqlite3_errmsg(cprof_store_db(in->store)));
	return -EIO;
}

static void nomem(struct cprof_nvtx *nv, struct nproc *np)
{
	if (np)
		np->dropped++;
	if (!nv->warned_nomem++)
		pr_warn("out of memory: some NVTX annotations are not stored");
}

static int setup(struct cprof_ingest *in)
{
	static const char ins[] = "INSERT INTO NVTX_EVENTS(id, processId, pid, tid, start, end, eventType, textId,"
				  " domainId, categoryId, color, depth, parentId, endTid) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?)";
	static const char name[] = "INSERT OR REPLACE INTO CPROF_NAMES(processId, kind, key, nameId) VALUES(?,?,?,?)";
	sqlite3 *db = cprof_store_db(in->store);
	struct cprof_nvtx *nv;
	sqlite3_stmt *max = NULL;
	int ret = 0;

	nv = calloc(1, sizeof(*nv));
	if (nv == NULL)
		return -ENOMEM;
	if (sqlite3_prepare_v2(db, ins, -1, &nv->ins, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db, name, -1, &nv->name, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db, "SELECT coalesce(max(id), 0) FROM NVTX_EVENTS", -1, &max, NULL) != SQLITE_OK) {
		ret = db_err(in, "prepare");
		goto out;
	}
	/* ids are ours: a range's id is handed to its children (parentId) before its row is written */
	if (sqlite3_step(max) != SQLITE_ROW) {
		ret = db_err(in, "max id");
		goto out;
	}
	nv->next_id = sqlite3_column_int64(max, 0) + 1;
	in->nvtx = nv;
	nv = NULL;
out:
	sqlite3_finalize(max);
	if (nv) {
		sqlite3_finalize(nv->ins);
		sqlite3_finalize(nv->name);
		free(nv);
	}
	return ret;
}

static void bind_opt(sqlite3_stmt *st, int col, int64_t v)
{
	if (v)
		sqlite3_bind_int64(st, col, v);
	else
		sqlite3_bind_null(st, col);
}

static int insert(struct cprof_ingest *in, struct nproc *np, const struct row *r)
{
	sqlite3_stmt *st = in->nvtx->ins;
	int ret = 0;

	if (cprof_store_begin(in->store, 1) < 0)
		return -EIO;
	sqlite3_bind_int64(st, 1, r->id);
	sqlite3_bind_int64(st, 2, np->proc_id);
	sqlite3_bind_int64(st, 3, np->pid);
	sqlite3_bind_int64(st, 4, r->tid);
	sqlite3_bind_int64(st, 5, (int64_t)r->start);
	if (r->has_end)
		sqlite3_bind_int64(st, 6, (int64_t)(r->end < r->start ? r->start : r->end)); /* the clock stepped back */
	else
		sqlite3_bind_null(st, 6);
	sqlite3_bind_text(st, 7, r->type, -1, SQLITE_STATIC);
	bind_opt(st, 8, r->a.text);
	bind_opt(st, 9, r->a.domain);
	bind_opt(st, 10, r->a.category);
	bind_opt(st, 11, r->a.color);
	if (r->depth >= 0)
		sqlite3_bind_int(st, 12, r->depth);
	else
		sqlite3_bind_null(st, 12);
	bind_opt(st, 13, r->parent);
	bind_opt(st, 14, r->end_tid);
	if (sqlite3_step(st) != SQLITE_DONE)
		ret = db_err(in, "insert NVTX event");
	sqlite3_reset(st);
	return ret;
}

static int insert_name(struct cprof_ingest *in, struct nproc *np, const char *kind, int64_t key, int64_t name)
{
	sqlite3_stmt *st = in->nvtx->name;
	int ret = 0;

	if (cprof_store_begin(in->store, 1) < 0)
		return -EIO;
	sqlite3_bind_int64(st, 1, np->proc_id);
	sqlite3_bind_text(st, 2, kind, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 3, key);
	sqlite3_bind_int64(st, 4, name);
	if (sqlite3_step(st) != SQLITE_DONE)
		ret = db_err(in, "insert name");
	sqlite3_reset(st);
	return ret;
}

static struct nproc *proc_find(struct cprof_nvtx *nv, int64_t proc_id, struct nproc ***link)
{
	struct nproc **pp;

	if (nv->last && nv->last->proc_id == proc_id && link == NULL)
		return nv->last;
	for (pp = &nv->procs; *pp; pp = &(*pp)->next)
		if ((*pp)->proc_id == proc_id)
			break;
	if (link)
		*link = pp;
	return *pp;
}

static struct nproc *proc_get(struct cprof_nvtx *nv, const struct cprof_producer *p)
{
	struct nproc *np = proc_find(nv, p->proc_id, NULL);

	if (np == NULL) {
		np = calloc(1, sizeof(*np));
		if (np == NULL)
			return NULL;
		np->proc_id = p->proc_id;
		np->pid = p->pid;
		np->next = nv->procs;
		nv->procs = np;
	}
	nv->last = np;
	return np;
}

static inline unsigned stack_bucket(uint32_t tid, uint32_t domain)
{
	return ((tid * 0x9e3779b1u) ^ (domain * 0x85ebca6bu)) >> 24 & (STACK_BUCKETS - 1);
}

static struct stack *stack_find(struct nproc *np, uint32_t tid, uint32_t domain)
{
	struct stack *s;

	if (np->last && np->last->tid == tid && np->last->domain == domain)
		return np->last;
	for (s = np->stk[stack_bucket(tid, domain)]; s; s = s->next)
		if (s->tid == tid && s->domain == domain)
			break;
	if (s)
		np->last = s;
	return s;
}

static struct stack *stack_get(struct cprof_nvtx *nv, struct nproc *np, uint32_t tid, uint32_t domain,
			       int64_t domain_gid)
{
	struct stack *s = stack_find(np, tid, domain);
	unsigned b;

	if (s || nv->nstacks >= MAX_STACKS)
		return s;
	s = calloc(1, sizeof(*s));
	if (s == NULL)
		return NULL;
	b = stack_bucket(tid, domain);
	s->tid = tid;
	s->domain = domain;
	s->domain_gid = domain_gid;
	s->next = np->stk[b];
	np->stk[b] = s;
	np->last = s;
	nv->nstacks++;
	return s;
}

static inline size_t half_bucket(const struct nproc *np, uint64_t rid)
{
	return (size_t)((rid * 0x9e3779b97f4a7c15ull) >> 32) & (np->nbuckets - 1);
}

static struct half **half_find(struct nproc *np, uint64_t rid)
{
	struct half **hp;

	if (np->nbuckets == 0)
		return NULL;
	for (hp = &np->halves[half_bucket(np, rid)]; *hp; hp = &(*hp)->next)
		if ((*hp)->rid == rid)
			return hp;
	return NULL;
}

static int half_add(struct cprof_nvtx *nv, struct nproc *np, struct half *h)
{
	size_t i;

	if (nv->nhalves >= MAX_OPEN)
		return -ENOSPC;
	if (np->nhalves >= np->nbuckets) {
		size_t n = np->nbuckets ? np->nbuckets * 2 : 64;
		struct half **b = calloc(n, sizeof(*b));

		if (b == NULL)
			return -ENOMEM;
		for (i = 0; i < np->nbuckets; i++) {
			struct half *e = np->halves[i], *next;

			for (; e; e = next) {
				next = e->next;
				e->next = b[(size_t)((e->rid * 0x9e3779b97f4a7c15ull) >> 32) & (n - 1)];
				b[(size_t)((e->rid * 0x9e3779b97f4a7c15ull) >> 32) & (n - 1)] = e;
			}
		}
		free(np->halves);
		np->halves = b;
		np->nbuckets = n;
	}
	i = half_bucket(np, h->rid);
	h->next = np->halves[i];
	np->halves[i] = h;
	np->nhalves++;
	nv->nhalves++;
	return 0;
}

static void half_del(struct cprof_nvtx *nv, struct nproc *np, struct half **hp)
{
	struct half *h = *hp;

	*hp = h->next;
	free(h);
	np->nhalves--;
	nv->nhalves--;
}

/* Maps a process's string id to StringIds; -1 when the id is not one a process can have. */
static int64_t gid(const struct cprof_producer *p, uint32_t id)
{
	if (id >= MAX_STRING_ID)
		return -1;
	return cprof_strmap_get(p, id);
}

static int64_t parent_of(struct nproc *np, uint32_t tid, uint32_t domain)
{
	struct stack *s = stack_find(np, tid, domain);

	return s && s->n ? s->r[s->n - 1].id : 0;
}

/* A range whose pop never came (its thread ended, or the event was lost) is stored open: end NULL. */
static int store_open(struct cprof_ingest *in, struct nproc *np, const struct stack *s, uint32_t k)
{
	struct row r = { 0 };

	r.id = s->r[k].id;
	r.tid = s->tid;
	r.start = s->r[k].start;
	r.type = "range";
	r.a = s->r[k].a;
	r.a.domain = s->domain_gid;
	r.depth = (int)k;
	r.parent = k ? s->r[k - 1].id : 0;
	return insert(in, np, &r);
}

/* Levels from the preload resynchronise the stack when events were lost: entries at or above a new push's
 * level, or above a pop's, never got their pop. */
static int close_above(struct cprof_ingest *in, struct nproc *np, struct stack *s, int level)
{
	int ret = 0;

	while (ret == 0 && s->n && s->r[s->n - 1].level >= 0 && s->r[s->n - 1].level > level) {
		ret = store_open(in, np, s, s->n - 1);
		s->n--;
	}
	return ret;
}

static int on_push(struct cprof_ingest *in, struct nproc *np, const struct cprof_wire_api *ev, const struct attrs *a)
{
	struct cprof_nvtx *nv = in->nvtx;
	struct stack *s = stack_get(nv, np, ev->tid, ev->arg[CPROF_ARG_NVTX_DOMAIN], a->domain);
	int level = ev->ret >= 0 ? ev->ret : -2, base, ret;

	if (s == NULL) {
		nomem(nv, np);
		return 0;
	}
	if (level >= 0) {
		if ((ret = close_above(in, np, s, level - 1)) < 0)
			return ret;
		/* skipped ranges sit at the levels above the top's: those at this level and above have ended */
		base = s->n ? s->r[s->n - 1].level : -1;
		if (base >= -1 && s->skipped > (uint32_t)(level - base - 1))
			s->skipped = (uint32_t)(level - base - 1);
	}
	if (s->n >= MAX_DEPTH || s->skipped) {
		s->skipped++;
		np->dropped++;
		return 0;
	}
	if (s->n == s->cap) {
		uint32_t cap = s->cap ? s->cap * 2 : 8;
		struct pushed *r = realloc(s->r, cap * sizeof(*r));

		if (r == NULL) {
			s->skipped++;
			nomem(nv, np);
			return 0;
		}
		s->r = r;
		s->cap = cap;
	}
	s->r[s->n].id = nv->next_id++;
	s->r[s->n].start = ev->start_ns;
	s->r[s->n].level = level;
	s->r[s->n].a = *a;
	s->n++;
	return 0;
}

static int on_pop(struct cprof_ingest *in, struct nproc *np, const struct cprof_wire_api *ev)
{
	struct stack *s = stack_find(np, ev->tid, ev->arg[CPROF_ARG_NVTX_DOMAIN]);
	int level = ev->ret, base, ret;
	struct row r = { 0 };
	struct pushed *top;

	/* -1: the program popped more than it pushed, the preload saw it */
	if (level == -1 || s == NULL) {
		np->bad_pops++;
		return 0;
	}
	if (level >= 0) {
		if ((ret = close_above(in, np, s, level)) < 0)
			return ret;
		base = s->n ? s->r[s->n - 1].level : -1;
		if (base >= -1 && level != base) {
			/* above the top: a skipped range's pop, or one whose push was lost */
			if (s->skipped >= (uint32_t)(level - base))
				s->skipped = (uint32_t)(level - base - 1);
			else
				np->bad_pops++;
			return 0;
		}
		if (base >= 0)
			s->skipped = 0;
	}
	if (s->skipped && (level < 0 || s->n == 0)) {
		s->skipped--;
		return 0;
	}
	if (s->n == 0) {
		np->bad_pops++;
		return 0;
	}
	top = &s->r[--s->n];
	r.id = top->id;
	r.tid = r.end_tid = ev->tid;
	r.start = top->start;
	r.end = ev->start_ns;
	r.has_end = 1;
	r.type = "range";
	r.a = top->a;
	r.a.domain = s->domain_gid;
	r.depth = (int)s->n;
	r.parent = s->n ? s->r[s->n - 1].id : 0;
	return insert(in, np, &r);
}

static int on_start(struct cprof_ingest *in, struct nproc *np, const struct cprof_wire_api *ev, const struct attrs *a)
{
	struct cprof_nvtx *nv = in->nvtx;
	struct half **hp = half_find(np, ev->ptr), *h;
	struct row r = { 0 };
	int ret;

	if (ev->ptr == 0)
		return -EBADMSG;
	r.id = nv->next_id++;
	r.parent = parent_of(np, ev->tid, ev->arg[CPROF_ARG_NVTX_DOMAIN]);
	if (hp) {
		h = *hp;
		if (h->has_start)
			return -EBADMSG; /* the preload never hands out an id twice */
		/* its end came first, from another thread's ring */
		r.tid = ev->tid;
		r.end_tid = h->end_tid;
		r.start = ev->start_ns;
		r.end = h->end;
		r.has_end = 1;
		r.type = "startend";
		r.a = *a;
		r.depth = -1;
		half_del(nv, np, hp);
		return insert(in, np, &r);
	}
	h = calloc(1, sizeof(*h));
	if (h == NULL) {
		nomem(nv, np);
		return 0;
	}
	h->rid = ev->ptr;
	h->has_start = 1;
	h->id = r.id;
	h->parent = r.parent;
	h->start = ev->start_ns;
	h->tid = ev->tid;
	h->a = *a;
	ret = half_add(nv, np, h);
	if (ret < 0) {
		free(h);
		if (ret == -ENOMEM)
			nomem(nv, np);
		else
			np->dropped++;
	}
	return 0;
}

static int on_end(struct cprof_ingest *in, struct nproc *np, const struct cprof_wire_api *ev)
{
	struct cprof_nvtx *nv = in->nvtx;
	struct half **hp, *h;
	struct row r = { 0 };
	int ret;

	if (ev->ptr == 0) {
		np->bad_ends++; /* nvtxRangeEnd(0): an id no start returned */
		return 0;
	}
	hp = half_find(np, ev->ptr);
	if (hp && (*hp)->has_start) {
		h = *hp;
		r.id = h->id;
		r.tid = h->tid;
		r.end_tid = ev->tid;
		r.start = h->start;
		r.end = ev->start_ns;
		r.has_end = 1;
		r.type = "startend";
		r.a = h->a;
		r.depth = -1;
		r.parent = h->parent;
		half_del(nv, np, hp);
		return insert(in, np, &r);
	}
	if (hp) {
		np->bad_ends++; /* ended twice before its start arrived */
		return 0;
	}
	h = calloc(1, sizeof(*h));
	if (h == NULL) {
		nomem(nv, np);
		return 0;
	}
	h->rid = ev->ptr;
	h->has_end = 1;
	h->end = ev->start_ns;
	h->end_tid = ev->tid;
	ret = half_add(nv, np, h);
	if (ret < 0) {
		free(h);
		np->bad_ends++;
	}
	return 0;
}

static int on_mark(struct cprof_ingest *in, struct nproc *np, const struct cprof_wire_api *ev, const struct attrs *a)
{
	struct row r = { 0 };

	r.id = in->nvtx->next_id++;
	r.tid = ev->tid;
	r.start = r.end = ev->start_ns;
	r.has_end = 1;
	r.type = "mark";
	r.a = *a;
	r.depth = -1;
	r.parent = parent_of(np, ev->tid, ev->arg[CPROF_ARG_NVTX_DOMAIN]);
	return insert(in, np, &r);
}

int cprof_nvtx_event(struct cprof_ingest *in, struct cprof_producer *p, const struct cprof_wire_api *ev)
{
	struct nproc *np;
	struct attrs a = { 0 };
	int ret;

	if (ev->tid == 0 || (a.text = gid(p, ev->name)) < 0 || (a.domain = gid(p, ev->arg[CPROF_ARG_NVTX_DOMAIN])) < 0)
		return -EBADMSG;
	a.category = ev->arg[CPROF_ARG_NVTX_CATEGORY];
	a.color = ev->arg[CPROF_ARG_NVTX_COLOR];
	if (in->nvtx == NULL) {
		ret = setup(in);
		if (ret == -ENOMEM) {
			pr_warn("out of memory: NVTX annotations are not stored");
			return 0;
		}
		if (ret < 0)
			return ret;
	}
	np = proc_get(in->nvtx, p);
	if (np == NULL) {
		nomem(in->nvtx, NULL);
		return 0;
	}
	switch (ev->api) {
	case CPROF_API_nvtxRangePush:
		return on_push(in, np, ev, &a);
	case CPROF_API_nvtxRangePop:
		return on_pop(in, np, ev);
	case CPROF_API_nvtxRangeStart:
		return on_start(in, np, ev, &a);
	case CPROF_API_nvtxRangeEnd:
		return on_end(in, np, ev);
	case CPROF_API_nvtxMark:
		return on_mark(in, np, ev, &a);
	case CPROF_API_nvtxNameOsThread:
		if (ev->ptr > UINT32_MAX)
			return -EBADMSG;
		return a.text ? insert_name(in, np, "thread", (int64_t)ev->ptr, a.text) : 0;
	case CPROF_API_nvtxNameCudaStream:
		return a.text ? insert_name(in, np, "stream", (int64_t)ev->stream, a.text) : 0;
	case CPROF_API_nvtxNameCudaDevice:
		if (ev->ptr > INT32_MAX)
			return -EBADMSG;
		return a.text ? insert_name(in, np, "device", (int64_t)ev->ptr, a.text) : 0;
	}
	return 0; /* nvtxDomainCreate: its name comes with the events that use it */
}

static void free_proc(struct cprof_nvtx *nv, struct nproc *np)
{
	size_t i;

	for (i = 0; i < STACK_BUCKETS; i++) {
		struct stack *s, *next;

		for (s = np->stk[i]; s; s = next) {
			next = s->next;
			free(s->r);
			free(s);
			nv->nstacks--;
		}
	}
	for (i = 0; i < np->nbuckets; i++) {
		struct half *h, *next;

		for (h = np->halves[i]; h; h = next) {
			next = h->next;
			free(h);
			nv->nhalves--;
		}
	}
	free(np->halves);
	free(np);
}

/* Writes what is still open; the counts of what did not pair go to one DIAGNOSTICS row. */
static int flush_proc(struct cprof_ingest *in, struct nproc *np)
{
	struct row r = { 0 };
	char msg[512];
	size_t i;
	uint32_t k;
	int ret = 0;

	for (i = 0; i < STACK_BUCKETS && ret == 0; i++) {
		struct stack *s;

		for (s = np->stk[i]; s && ret == 0; s = s->next)
			for (k = 0; k < s->n && ret == 0; k++)
				ret = store_open(in, np, s, k);
	}
	for (i = 0; i < np->nbuckets && ret == 0; i++) {
		struct half *h;

		for (h = np->halves[i]; h && ret == 0; h = h->next) {
			if (!h->has_start) {
				np->bad_ends++;
				continue;
			}
			memset(&r, 0, sizeof(r));
			r.id = h->id;
			r.tid = h->tid;
			r.start = h->start;
			r.type = "startend";
			r.a = h->a;
			r.depth = -1;
			r.parent = h->parent;
			ret = insert(in, np, &r);
		}
	}
	if (ret == 0 && (np->bad_pops || np->bad_ends || np->dropped)) {
		int n = snprintf(msg, sizeof(msg), "NVTX annotations that did not pair:");

		if (np->bad_pops)
			n += snprintf(msg + n, sizeof(msg) - n, " %" PRIu64 " nvtxRangePop without a push;", np->bad_pops);
		if (np->bad_ends)
			n += snprintf(msg + n, sizeof(msg) - n, " %" PRIu64 " nvtxRangeEnd of no started range;",
				      np->bad_ends);
		if (np->dropped)
			n += snprintf(msg + n, sizeof(msg) - n, " %" PRIu64 " not stored (nested deeper than %d,"
				      " too many open ranges, or out of memory);", np->dropped, MAX_DEPTH);
		snprintf(msg + n, sizeof(msg) - n, " unbalanced annotations, or ranges opened before profiling began");
		pr_warn("pid %u: %s", np->pid, msg);
		ret = cprof_store_diag(in->store, np->pid, msg);
	}
	return ret;
}

int cprof_nvtx_process_end(struct cprof_ingest *in, struct cprof_producer *p)
{
	struct cprof_nvtx *nv = in->nvtx;
	struct nproc *np, **link;
	int ret;

	if (nv == NULL || (np = proc_find(nv, p->proc_id, &link)) == NULL)
		return 0;
	ret = flush_proc(in, np);
	*link = np->next;
	if (nv->last == np)
		nv->last = NULL;
	free_proc(nv, np);
	return ret;
}

void cprof_nvtx_free(struct cprof_ingest *in)
{
	struct cprof_nvtx *nv = in->nvtx;
	struct nproc *np, *next;

	if (nv == NULL)
		return;
	for (np = nv->procs; np; np = next) {
		next = np->next;
		free_proc(nv, np);
	}
	sqlite3_finalize(nv->ins);
	sqlite3_finalize(nv->name);
	free(nv);
	in->nvtx = NULL;
}

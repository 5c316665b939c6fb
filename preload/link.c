/* Which hooked call each CUPTI API record was made in, told by its thread and times instead of an external id (flusher only). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "preload/cprof.h"

/*
 * A hook used to push its id onto CUPTI's external-id stack around every call, so that CUPTI tagged the
 * call's API records (and through their correlation id the GPU work) with it. Each tag is one more record
 * that CUPTI writes on the program's thread: 3 of an eager PyTorch step's 8 (docs/bench.md). The hook's
 * times already say the same thing: every API record the call made lies inside [start, end] of the hook,
 * on the same thread, on the same clock (preload/tick.c maps the TSC to CLOCK_REALTIME, CUPTI's clock;
 * t-tick-clock checks the containment). So the flusher keeps each thread's recent hooked calls (spans,
 * in the order the calls ended, as the ring holds them) and gives each API record the innermost span
 * that contains it: what the innermost pushed id gave.
 *
 * Every call pushes its id until CPROF_LINK_PROOF of the records come back tagged with the call the times
 * find too; then one call in CPROF_LINK_CHECK does. Each tag is checked against the call the times find.
 * Should the times not line up on some machine (a CUPTI with another clock), the proof never comes, or
 * later checks disagree, and every call pushes its id from then on (cprof_link_push), as before.
 *
 * API records of one thread come in the order their calls ended, so a span that ended before a record
 * started (less the slack) can hold no later record of that thread: it is dropped. A record found in no
 * call while no call of its thread that ended after it has been drained may be inside a call still
 * running (a cuBLAS call whose launch waits for a CUPTI buffer): the caller holds it and asks again.
 */

/* the clocks' disagreement allowed: t-tick-clock sees the mapped hook times within tens of ns of CUPTI's */
#define SLACK_NS 200
/* spans looked at past the first that ends late enough: the calls nested around a record */
#define SCAN 8
#define SPANS_MAX (1u << 20) /* per thread, 24 MiB: the oldest go (lost links) beyond it */
#define THREADS_MAX 4096

/* every call pushes its id until the first records have proved the times (cprof_link_update) */
CPROF_HIDDEN _Atomic int cprof_link_push = 1;
static int pinned; /* the push stays: CPROF_LINK=push, or the times failed */

/* Recent CUPTI correlation ids whose external id is settled, so that none is sent twice: CUPTI may complete
 * an API record's buffer before the one with its pushed id, which then comes after the record was tagged
 * by its times (dropped), or goes alone before the record comes (the record is not tagged again). */
#define RECENT 1024
enum { RECENT_ALONE = 1, RECENT_TIMED = 2 };
static struct {
	uint32_t corr, how;
	uint64_t ext;
} recent[RECENT];

struct span {
	uint64_t start, end, corr;
};

struct lthread {
	uint32_t tid, ptid;
	struct span *v; /* a circular buffer of cap (a power of two) spans */
	size_t head, n, cap;
	uint64_t last_end; /* the latest end of a call drained: a record after it may be inside a call not yet */
};

static struct {
	struct lthread *t;
	size_t n, cap;
	size_t last; /* the thread looked up last: records come in runs of one thread */
	struct cprof_link_stats st;
} lk;

static struct lthread *thread_of(uint32_t id, int by_tid)
{
	if (lk.last < lk.n && (by_tid ? lk.t[lk.last].tid : lk.t[lk.last].ptid) == id)
		return &lk.t[lk.last];
	for (size_t i = 0; i < lk.n; i++) {
		if ((by_tid ? lk.t[i].tid : lk.t[i].ptid) == id) {
			lk.last = i;
			return &lk.t[i];
		}
	}
	return NULL;
}

/* a record's thread: CUPTI's thread id is pthread_self() by default, the kernel's id where the program asked */
static struct lthread *thread_of_record(uint32_t id)
{
	struct lthread *t = thread_of(id, 0);

	return t ? t : thread_of(id, 1);
}

static struct span *span_at(struct lthread *t, size_t i)
{
	return &t->v[(t->head + i) & (t->cap - 1)];
}

static int grow(struct lthread *t)
{
	size_t cap = t->cap ? t->cap * 2 : 1024;
	struct span *v;

	if (cap > SPANS_MAX || (v = malloc(cap * sizeof(*v))) == NULL)
		return -ENOMEM;
	for (size_t i = 0; i < t->n; i++)
		v[i] = *span_at(t, i);
	free(t->v);
	t->v = v;
	t->head = 0;
	t->cap = cap;
	return 0;
}

void cprof_link_span(uint32_t tid, uint32_t ptid, uint64_t start_ns, uint64_t end_ns, uint64_t corr)
{
	struct lthread *t = thread_of(tid, 1);

	if (t != NULL && t->ptid != ptid) {
		t->n = 0; /* the id went to a new thread: the old one's calls are over */
		t->ptid = ptid;
	}
	if (t == NULL) {
		if (lk.n == lk.cap) {
			size_t cap = lk.cap ? lk.cap * 2 : 16;
			struct lthread *p;

			if (cap > THREADS_MAX || (p = realloc(lk.t, cap * sizeof(*p))) == NULL) {
				lk.st.dropped++;
				return;
			}
			lk.t = p;
			lk.cap = cap;
		}
		t = &lk.t[lk.n++];
		memset(t, 0, sizeof(*t));
		t->tid = tid;
		t->ptid = ptid;
	}
	if (t->n == t->cap && grow(t) < 0) {
		t->head = (t->head + 1) & (t->cap - 1); /* full: the oldest call's records go untagged */
		t->n--;
		lk.st.dropped++;
	}
	*span_at(t, t->n++) = (struct span){ .start = start_ns, .end = end_ns, .corr = corr };
	if (end_ns > t->last_end)
		t->last_end = end_ns;
}

int cprof_link_record(struct cprof_wire_gpu *g, uint64_t hold_from_ns)
{
	uint64_t s = g->start_ns, e = g->end_ns, pushed = 0;
	const struct span *exact = NULL, *loose = NULL, *found;
	struct lthread *t;
	int tagged, agree = 0, push = atomic_load_explicit(&cprof_link_push, memory_order_relaxed);

	if (g->kind != CPROF_GPU_RUNTIME && g->kind != CPROF_GPU_DRIVER)
		return 0;
	tagged = g->u32[4] == CPROF_LINK_EXT_KIND;
	if (tagged)
		pushed = g->u64[0];
	if ((t = thread_of_record(g->u32[2])) != NULL) {
		size_t i = 0;

		while (t->n > 0 && span_at(t, 0)->end + SLACK_NS < s) {
			t->head = (t->head + 1) & (t->cap - 1);
			t->n--;
		}
		while (i < t->n && span_at(t, i)->end + SLACK_NS < e)
			i++;
		/* the innermost call around the record ended first. One that holds it only within the slack
		 * (the call before, ended just as this one began) serves only when none holds it exactly. */
		for (size_t k = i; k < t->n && k < i + SCAN; k++) {
			const struct span *sp = span_at(t, k);

			if (sp->start > s + SLACK_NS)
				continue; /* a later call, not around the record */
			if (sp->start <= s && sp->end >= e) {
				if (exact == NULL)
					exact = sp;
			} else if (loose == NULL && s < sp->end && e > sp->start) {
				loose = sp; /* it overlaps the call: an unhooked call just before or after does not */
			} else {
				continue;
			}
			agree |= tagged && sp->corr == pushed;
		}
	}
	found = exact ? exact : loose;
	if (tagged) {
		/* a pushed id is one of the calls around the record; the innermost one is kept */
		lk.st.checked++;
		if (!agree) {
			lk.st.disagreed++;
			return 0;
		}
		if (!push)
			g->u64[0] = found->corr;
		return 0;
	}
	/* every call pushes its id: the times are not trusted (or not wanted); an untagged record's id, if it
	 * has one, went alone (CUPTI completed its buffer out of order) */
	if (push)
		found = NULL;
	if (found != NULL && recent[g->corr % RECENT].corr == g->corr && recent[g->corr % RECENT].how == RECENT_ALONE)
		return 0; /* its pushed id went alone already */
	if (found != NULL) {
		g->u32[4] = CPROF_LINK_EXT_KIND;
		g->u64[0] = found->corr;
		recent[g->corr % RECENT].corr = g->corr;
		recent[g->corr % RECENT].how = RECENT_TIMED;
		recent[g->corr % RECENT].ext = found->corr;
		lk.st.linked++;
		lk.st.loose += found == loose;
		return 0;
	}
	/* no call of its thread has been drained that ended after it: it may be inside one still running */
	if (hold_from_ns != 0 && !push && e >= hold_from_ns && (t == NULL || t->last_end < e))
		return 1;
	lk.st.unlinked++;
	return 0;
}

int cprof_link_late_id(uint32_t corr, uint64_t ext)
{
	return recent[corr % RECENT].corr == corr && recent[corr % RECENT].how == RECENT_TIMED &&
	       recent[corr % RECENT].ext == ext;
}

void cprof_link_alone(uint32_t corr, uint64_t ext)
{
	recent[corr % RECENT].corr = corr;
	recent[corr % RECENT].how = RECENT_ALONE;
	recent[corr % RECENT].ext = ext;
}

int cprof_link_trusted(void)
{
	/* a few disagreements among many checks are records whose call was cut short (a ring full, a fork) */
	return lk.st.disagreed < 4 || lk.st.disagreed * 8 < lk.st.checked;
}

int cprof_link_update(void)
{
	if (pinned)
		return 0;
	if (!cprof_link_trusted() || (lk.st.checked >= CPROF_LINK_PROOF && lk.st.disagreed * 8 >= lk.st.checked)) {
		pinned = 1;
		atomic_store(&cprof_link_push, 1);
		return -1;
	}
	if (lk.st.checked >= CPROF_LINK_PROOF && atomic_load(&cprof_link_push))
		atomic_store(&cprof_link_push, 0);
	return 0;
}

void cprof_link_pin(void)
{
	pinned = 1;
	atomic_store(&cprof_link_push, 1);
}

void cprof_link_stats(struct cprof_link_stats *out)
{
	*out = lk.st;
}

void cprof_link_reset(void)
{
	for (size_t i = 0; i < lk.n; i++)
		free(lk.t[i].v);
	free(lk.t);
	memset(&lk, 0, sizeof(lk));
	memset(recent, 0, sizeof(recent));
	pinned = 0;
	atomic_store(&cprof_link_push, 1);
}

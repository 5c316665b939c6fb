/* cprof html: the timeline (host-thread and GPU-stream lanes, GPU utilisation, phases) as inline SVG. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define PR_FMT "cprof html"
#include "common/log.h"
#include "report/render/html.h"

/* A lane with more events than this is drawn as density buckets instead of one rectangle per event. */
#define DETAIL_LIMIT 20000
/* All lanes together: past this many rectangles the busiest lanes are bucketed too, so a profile with many
 * threads or streams still gives a file of a few MB. */
#define DETAIL_BUDGET 150000
#define AGG_BUCKETS   4000
#define UTIL_BUCKETS  1000
#define SVG_WIDTH     1000000

enum name_kind { NK_KERNEL, NK_API, NK_CUPTI, NK__STRINGS, NK_MEMCPY = NK__STRINGS, NK_MEMSET };

struct name {
	enum name_kind kind;
	int64_t sid;
	char *label;
	const char *colour;
	double total;
};

struct ev {
	uint64_t s, e;
	int32_t name;
};

struct track {
	struct ev *ev;
	size_t n, cap;
	int agg;
	double *busy, *dom_len;
	uint32_t *cnt;
	int32_t *dom;
	uint64_t events;
	double busy_ns;
};

struct lane {
	int gpu;      /* 1: a GPU stream; 0: a host thread; -1: a host thread's NVTX ranges (drawn first) */
	int64_t proc; /* PROCESSES.id: stream ids are per context, so per process */
	int64_t a, b; /* host: processId, tid (or -handle - 1); GPU: device, stream */
	int64_t pid;
	struct track main, sub; /* sub: API calls only CUPTI saw */
};

struct device_util {
	int64_t dev;
	uint64_t cur_s, cur_e;
	int have;
	double busy[UTIL_BUCKETS];
};

struct tl {
	struct html *h;
	uint64_t t0, t1;
	double bw;    /* aggregation bucket width, ns */
	double scale; /* SVG units per ns */
	struct name *names;
	size_t nnames, capnames;
	int32_t *by_sid[NK__STRINGS]; /* StringIds id -> name index */
	int64_t max_sid;
	int32_t memcpy_name[11], memset_name;
	struct lane *lanes;
	size_t nlanes, caplanes;
	size_t last_lane;
	struct device_util *dev;
	size_t ndev, capdev;
};

#define CUPTI_COLOUR        "#9aa0a6"

static const char *api_colour(const char *cls)
{
	static const char *const map[][2] = {
		{ "launch", "#4a8af4" }, { "gemm", "#7b61ff" },  { "memcpy", "#f29900" }, { "memset", "#fbbc04" },
		{ "sync", "#d93025" },   { "memory", "#12a4af" }, { "module", "#80868b" },
		{ "nvtx", "#34a853" },
	};
	size_t i;

	for (i = 0; cls && i < sizeof(map) / sizeof(map[0]); i++)
		if (!strcmp(cls, map[i][0]))
			return map[i][1];
	return "#b0b4b9";
}

static const char *const memcpy_short[11] = { "Unknown", "HtoD", "DtoH", "HtoA", "AtoH", "AtoA",
					      "AtoD",    "DtoA", "DtoD", "HtoH", "PtoP" };

static const char *memcpy_colour(int k)
{
	return k == 1 ? "#c5221f" : k == 2 ? "#a142f4" : k == 8 ? "#795548" : "#e52592";
}

/* ---- names: one CSS class per distinct name, so a rectangle carries only its index ---- */

static int32_t name_add(struct tl *t, enum name_kind kind, int64_t sid, const char *label, const char *colour)
{
	struct name *n;

	if (cprof_grow(&t->names, &t->capnames, t->nnames, sizeof(*t->names)) < 0)
		return -1;
	n = &t->names[t->nnames];
	memset(n, 0, sizeof(*n));
	n->kind = kind;
	n->sid = sid;
	n->label = strdup(label ? label : "?");
	n->colour = colour;
	if (n->label == NULL)
		return -1;
	return (int32_t)t->nnames++;
}

/* CUPTI's API names carry the API version ("cudaGetDeviceCount_v3020"); people know them without it. */
static void strip_version(const char *in, char *out, size_t size)
{
	const char *p = strrchr(in, '_');

	snprintf(out, size, "%s", in);
	if (p && p[1] == 'v' && p[2] && strspn(p + 2, "0123456789") == strlen(p + 2) && (size_t)(p - in) < size)
		out[p - in] = '\0';
}

static int32_t name_for(struct tl *t, enum name_kind kind, int64_t sid, const char *cls)
{
	const char *v;
	char label[512];
	int32_t idx;
	char *dm;

	if (sid < 0 || sid > t->max_sid)
		sid = 0;
	idx = t->by_sid[kind][sid];
	if (idx >= 0)
		return idx;
	v = cprof_model_string(&t->h->model, sid);
	snprintf(label, sizeof(label), "%s", v ? v : "");
	if (kind == NK_KERNEL) {
		dm = cprof_demangle(label[0] ? label : "?");
		idx = name_add(t, kind, sid, dm ? dm : label, HTML_OTHER_KERNEL_COLOUR);
		free(dm);
	} else if (kind == NK_CUPTI) {
		char plain[512];

		strip_version(label, plain, sizeof(plain));
		idx = name_add(t, kind, sid, plain, CUPTI_COLOUR);
	} else {
		idx = name_add(t, kind, sid, label, api_colour(cls));
	}
	if (idx >= 0)
		t->by_sid[kind][sid] = idx;
	return idx < 0 ? 0 : idx;
}

/* ---- tracks: every event while few, density buckets once many ---- */

static int track_buckets(struct track *k)
{
	k->busy = calloc(AGG_BUCKETS, sizeof(*k->busy));
	k->dom_len = calloc(AGG_BUCKETS, sizeof(*k->dom_len));
	k->cnt = calloc(AGG_BUCKETS, sizeof(*k->cnt));
	k->dom = malloc(AGG_BUCKETS * sizeof(*k->dom));
	if (!k->busy || !k->dom_len || !k->cnt || !k->dom)
		return -ENOMEM;
	memset(k->dom, 0xff, AGG_BUCKETS * sizeof(*k->dom));
	k->agg = 1;
	return 0;
}

static void bucket_add(struct tl *t, struct track *k, uint64_t s, uint64_t e, int32_t name)
{
	size_t b0 = (size_t)((double)(s - t->t0) / t->bw), b1 = (size_t)((double)(e - t->t0) / t->bw), b;

	if (b0 >= AGG_BUCKETS)
		b0 = AGG_BUCKETS - 1;
	if (b1 >= AGG_BUCKETS)
		b1 = AGG_BUCKETS - 1;
	k->cnt[b0]++;
	for (b = b0; b <= b1; b++) {
		double lo = t->t0 + b * t->bw, hi = lo + t->bw;
		double a = (double)s > lo ? (double)s : lo, z = (double)e < hi ? (double)e : hi;
		double ov = z > a ? z - a : 0;

		k->busy[b] += ov;
		/* the bucket takes the colour of its longest event */
		if (ov > k->dom_len[b] || k->dom[b] < 0) {
			k->dom_len[b] = ov;
			k->dom[b] = name;
		}
	}
}

static int track_aggregate(struct tl *t, struct track *k)
{
	size_t i;
	int ret;

	if (k->agg)
		return 0;
	if ((ret = track_buckets(k)) < 0)
		return ret;
	for (i = 0; i < k->n; i++)
		bucket_add(t, k, k->ev[i].s, k->ev[i].e, k->ev[i].name);
	free(k->ev);
	k->ev = NULL;
	k->n = k->cap = 0;
	return 0;
}

static int track_add(struct tl *t, struct track *k, uint64_t s, uint64_t e, int32_t name)
{
	if (s < t->t0)
		s = t->t0;
	if (e > t->t1)
		e = t->t1;
	if (e < s)
		e = s;
	k->events++;
	k->busy_ns += (double)(e - s);
	if (k->agg) {
		bucket_add(t, k, s, e, name);
		return 0;
	}
	if (k->n >= DETAIL_LIMIT)
		return track_aggregate(t, k) < 0 ? -ENOMEM : (bucket_add(t, k, s, e, name), 0);
	if (cprof_grow(&k->ev, &k->cap, k->n, sizeof(*k->ev)) < 0)
		return -ENOMEM;
	k->ev[k->n].s = s;
	k->ev[k->n].e = e;
	k->ev[k->n].name = name;
	k->n++;
	return 0;
}

static void track_free(struct track *k)
{
	free(k->ev);
	free(k->busy);
	free(k->dom_len);
	free(k->cnt);
	free(k->dom);
}

/* ---- lanes ---- */

static int64_t proc_pid(struct tl *t, int64_t proc)
{
	size_t i;

	for (i = 0; i < t->h->nprocs; i++)
		if (t->h->procs[i].id == proc)
			return t->h->procs[i].pid;
	return 0;
}

static struct lane *lane_get(struct tl *t, int gpu, int64_t proc, int64_t a, int64_t b)
{
	struct lane *l;
	size_t i;

	if (t->last_lane < t->nlanes) {
		l = &t->lanes[t->last_lane];
		if (l->gpu == gpu && l->proc == proc && l->a == a && l->b == b)
			return l;
	}
	for (i = 0; i < t->nlanes; i++) {
		l = &t->lanes[i];
		if (l->gpu == gpu && l->proc == proc && l->a == a && l->b == b) {
			t->last_lane = i;
			return l;
		}
	}
	if (cprof_grow(&t->lanes, &t->caplanes, t->nlanes, sizeof(*t->lanes)) < 0)
		return NULL;
	l = &t->lanes[t->nlanes];
	memset(l, 0, sizeof(*l));
	l->gpu = gpu;
	l->proc = proc;
	l->a = a;
	l->b = b;
	l->pid = proc_pid(t, proc);
	t->last_lane = t->nlanes++;
	return l;
}

static int lane_cmp(const void *x, const void *y)
{
	const struct lane *a = x, *b = y;

	if (a->gpu != b->gpu)
		return a->gpu - b->gpu;
	if (a->gpu > 0 && a->a != b->a)
		return a->a < b->a ? -1 : 1; /* GPU lanes by device first */
	if (a->proc != b->proc)
		return a->proc < b->proc ? -1 : 1;
	if (a->a != b->a)
		return a->a < b->a ? -1 : 1;
	/* a thread known only by its CUPTI handle (negative) after the hooked ones */
	if ((a->b < 0) != (b->b < 0))
		return a->b < 0 ? 1 : -1;
	return a->b < b->b ? -1 : a->b > b->b;
}

/* CUPTI names threads by pthread handle; the hooks by kernel tid: the model's map, the same as the trace's;
 * a handle that made no hooked call gets a lane of its own. */
static int64_t handle_lane(struct tl *t, int64_t proc, int64_t handle)
{
	int64_t tid;

	if (cprof_model_tid(&t->h->model, proc, handle, &tid) && tid)
		return tid;
	return -(handle < 0 ? -handle : handle) - 1;
}

/* ---- the passes ---- */

/* Calls only CUPTI saw (runtime ones, then driver ones no runtime record covers) into the thin bar. */
static int cupti_pass(struct tl *t, const struct cprof_rt *r, size_t n, int runtime)
{
	size_t i;
	int ret;

	for (i = 0; i < n; i++) {
		struct lane *l;

		if (runtime && r[i].ext != CPROF_NO_ID)
			continue; /* a hook pushed our id around it: drawn as the hooked call */
		if ((l = lane_get(t, 0, r[i].proc, r[i].proc, handle_lane(t, r[i].proc, r[i].tid))) == NULL)
			return -ENOMEM;
		if ((ret = track_add(t, &l->sub, r[i].start, r[i].end,
				     name_for(t, NK_CUPTI, r[i].name == CPROF_NO_ID ? 0 : r[i].name, NULL))) < 0)
			return ret;
	}
	return 0;
}

static int host_pass(struct tl *t)
{
	const struct cprof_model *m = &t->h->model;
	size_t i;
	int ret;

	/* names are numbered in the order the profile's tables first give them, whatever the time order */
	for (i = 0; i < m->nfirst_calls; i++)
		name_for(t, NK_API, m->first_calls[i].name, cprof_call_class_name[m->first_calls[i].cls]);
	for (i = 0; i < m->nfirst_rt; i++)
		name_for(t, NK_CUPTI, m->first_rt[i].name, NULL);
	for (i = 0; i < m->nfirst_drv; i++)
		name_for(t, NK_CUPTI, m->first_drv[i].name, NULL);
	for (i = 0; i < m->ncalls; i++) {
		const struct cprof_call *c = &m->calls[i];
		struct lane *l;

		if (c->cls == CPROF_CALL_LAUNCH) {
			t->h->hist_launch[html_hist_bin((double)(c->end - c->start))]++;
			t->h->n_launch++;
		}
		if (c->nested)
			continue; /* inside another hooked call: its time is its caller's */
		if ((l = lane_get(t, 0, c->proc, c->proc, c->tid)) == NULL)
			return -ENOMEM;
		if ((ret = track_add(t, &l->main, c->start, c->end,
				     name_for(t, NK_API, c->name, cprof_call_class_name[c->cls]))) < 0)
			return ret;
	}
	if ((ret = cupti_pass(t, m->rt, m->nrt, 1)) < 0)
		return ret;
	return cupti_pass(t, m->drv, m->ndrv, 0);
}

static struct device_util *device_get(struct tl *t, int64_t dev)
{
	size_t i;

	for (i = 0; i < t->ndev; i++)
		if (t->dev[i].dev == dev)
			return &t->dev[i];
	if (cprof_grow(&t->dev, &t->capdev, t->ndev, sizeof(*t->dev)) < 0)
		return NULL;
	memset(&t->dev[t->ndev], 0, sizeof(t->dev[0]));
	t->dev[t->ndev].dev = dev;
	return &t->dev[t->ndev++];
}

/* One busy stretch of a device into the utilisation buckets. */
static void util_commit(struct tl *t, struct device_util *d, uint64_t s, uint64_t e)
{
	double w = (double)(t->t1 - t->t0) / UTIL_BUCKETS;
	size_t b0, b1, b;

	if (e <= s)
		return;
	b0 = (size_t)((double)(s - t->t0) / w);
	b1 = (size_t)((double)(e - t->t0) / w);
	if (b0 >= UTIL_BUCKETS)
		b0 = UTIL_BUCKETS - 1;
	if (b1 >= UTIL_BUCKETS)
		b1 = UTIL_BUCKETS - 1;
	for (b = b0; b <= b1; b++) {
		double lo = t->t0 + b * w, hi = lo + w;
		double a = (double)s > lo ? (double)s : lo, z = (double)e < hi ? (double)e : hi;

		if (z > a)
			d->busy[b] += z - a;
	}
}

/* NVTX ranges: a lane above each annotating thread; the outermost ranges full height, nested ones thin. */
static int nvtx_pass(struct tl *t)
{
	const struct cprof_model *m = &t->h->model;
	size_t i;
	int ret;

	for (i = 0; i < m->nnvtx; i++) {
		const struct cprof_nvtx_range *r = &m->nvtx[i];
		/* ranges never ended are drawn to the end of the page */
		uint64_t s = r->start, e = r->open ? t->t1 : r->end;
		struct lane *l = lane_get(t, -1, r->proc, r->proc, r->tid);

		if (l == NULL)
			return -ENOMEM;
		if (s < t->t0)
			s = t->t0;
		if (e > t->t1)
			e = t->t1;
		if (e < s)
			continue;
		if ((ret = track_add(t, r->depth > 0 ? &l->sub : &l->main, s, e, name_for(t, NK_API, r->text, "nvtx"))) < 0)
			return ret;
	}
	return 0;
}

/* GPU ops in start order: the per-stream lanes, and the union per device for the utilisation strip (ops of
 * concurrent streams overlap and count once, as in the verdict). */
static int gpu_pass(struct tl *t)
{
	const struct cprof_model *m = &t->h->model;
	size_t i;
	int ret;

	for (i = 0; i < m->nops; i++) {
		const struct cprof_op *o = &m->ops[i];
		uint64_t s = o->start, e = o->end;
		struct lane *l = lane_get(t, 1, o->proc, o->dev, o->stream);
		struct device_util *d = device_get(t, o->dev);
		int32_t name;

		if (l == NULL || d == NULL)
			return -ENOMEM;
		if (o->kind == CPROF_OP_KERNEL) {
			name = name_for(t, NK_KERNEL, o->name == CPROF_NO_ID ? 0 : o->name, NULL);
			t->names[name].total += (double)(e - s);
			t->h->hist_kernel[html_hist_bin((double)(e - s))]++;
			t->h->n_kernel++;
		} else if (o->kind == CPROF_OP_MEMCPY) {
			int k = o->copy;

			if (t->memcpy_name[k] < 0) {
				char label[64];

				snprintf(label, sizeof(label), "Memcpy %s", memcpy_short[k]);
				t->memcpy_name[k] = name_add(t, NK_MEMCPY, k, label, memcpy_colour(k));
			}
			name = t->memcpy_name[k] < 0 ? 0 : t->memcpy_name[k];
		} else {
			if (t->memset_name < 0)
				t->memset_name = name_add(t, NK_MEMSET, 0, "Memset", "#00897b");
			name = t->memset_name < 0 ? 0 : t->memset_name;
		}
		if ((ret = track_add(t, &l->main, s, e, name)) < 0)
			return ret;
		if (s < t->t0)
			s = t->t0;
		if (e > t->t1)
			e = t->t1;
		if (!d->have || s > d->cur_e) {
			if (d->have)
				util_commit(t, d, d->cur_s, d->cur_e);
			d->cur_s = s;
			d->cur_e = e;
			d->have = 1;
		} else if (e > d->cur_e) {
			d->cur_e = e;
		}
	}
	for (i = 0; i < t->ndev; i++)
		if (t->dev[i].have)
			util_commit(t, &t->dev[i], t->dev[i].cur_s, t->dev[i].cur_e);
	return 0;
}

/* Past the budget, the lanes with the most rectangles are bucketed until the rest fits. */
static int enforce_budget(struct tl *t)
{
	for (;;) {
		size_t total = 0, i;
		struct track *big = NULL;

		for (i = 0; i < t->nlanes; i++) {
			struct track *k[2] = { &t->lanes[i].main, &t->lanes[i].sub };
			int j;

			for (j = 0; j < 2; j++) {
				total += k[j]->n;
				if (!k[j]->agg && (big == NULL || k[j]->n > big->n))
					big = k[j];
			}
		}
		if (total <= DETAIL_BUDGET || big == NULL || big->n == 0)
			return 0;
		if (track_aggregate(t, big) < 0)
			return -ENOMEM;
	}
}

/* ---- output ---- */

static int by_total(const void *x, const void *y)
{
	const struct name *const *a = x, *const *b = y;

	return (*a)->total < (*b)->total ? 1 : (*a)->total > (*b)->total ? -1 : 0;
}

/* The kernels with the most GPU time get their own colours; the rest share one. */
static int colour_kernels(struct tl *t)
{
	struct name **k = NULL;
	size_t n = 0, i;

	k = malloc((t->nnames ? t->nnames : 1) * sizeof(*k));
	if (k == NULL)
		return -ENOMEM;
	for (i = 0; i < t->nnames; i++)
		if (t->names[i].kind == NK_KERNEL)
			k[n++] = &t->names[i];
	qsort(k, n, sizeof(*k), by_total);
	for (i = 0; i < n && i < HTML_TOP_COLOURS; i++)
		k[i]->colour = html_kernel_palette[i];
	free(k);
	return 0;
}

/* The SVG's x unit: the run is SVG_WIDTH long, whatever it lasts. Chromium stops drawing rectangles near
 * 2^25 user units (a 58 s run in microseconds was cut at 35 s), and float32 coordinates keep the same
 * relative precision at any scale. */
static double ux(const struct tl *t, double ns)
{
	return (ns - (double)t->t0) * t->scale;
}

static void write_track(struct tl *t, const struct track *k, const char *cls)
{
	FILE *f = t->h->f;
	size_t i, b;

	if (k->events == 0)
		return;
	fprintf(f, "<g class=\"%s\">", cls);
	if (!k->agg) {
		for (i = 0; i < k->n; i++)
			fprintf(f, "<rect x=\"%.3f\" width=\"%.3f\" class=\"n%d\"/>", ux(t, (double)k->ev[i].s),
				(double)(k->ev[i].e - k->ev[i].s) * t->scale, k->ev[i].name);
	} else {
		for (b = 0; b < AGG_BUCKETS; b++) {
			size_t e = b + 1;
			double frac, busy = k->busy[b];
			uint64_t cnt = k->cnt[b];

			if (cnt == 0 && busy <= 0)
				continue;
			frac = busy / t->bw;
			/* runs of full buckets of one colour are one rectangle */
			if (frac >= 0.98)
				while (e < AGG_BUCKETS && k->busy[e] / t->bw >= 0.98 && k->dom[e] == k->dom[b]) {
					busy += k->busy[e];
					cnt += k->cnt[e];
					e++;
				}
			frac = busy / (t->bw * (double)(e - b));
			if (frac > 1)
				frac = 1;
			fprintf(f, "<rect x=\"%.3f\" width=\"%.3f\" class=\"n%d\" fill-opacity=\"%.2f\" data-c=\"%llu\" data-b=\"%.0f\"/>",
				t->bw * (double)b * t->scale, t->bw * (double)(e - b) * t->scale, k->dom[b] < 0 ? 0 : k->dom[b],
				0.35 + 0.65 * frac, (unsigned long long)cnt, 100.0 * frac);
			b = e - 1;
		}
	}
	fputs("</g>", f);
}

static void lane_open(struct tl *t, const char *cls, const char *label, const char *title)
{
	FILE *f = t->h->f;

	fprintf(f, "<div class=\"lane %s\"><div class=\"ll\" title=\"", cls);
	html_text(f, title);
	fputs("\">", f);
	html_text(f, label);
	fprintf(f, "</div><svg class=\"z\" viewBox=\"0 0 %d 20\" preserveAspectRatio=\"none\">", SVG_WIDTH);
}

static void write_lane(struct tl *t, const struct lane *l)
{
	char label[160], title[700], busy[32];
	const char *argv = "";
	size_t i;

	for (i = 0; i < t->h->nprocs; i++)
		if (t->h->procs[i].id == l->proc)
			argv = t->h->procs[i].argv;
	cprof_fmt_dur(busy, sizeof(busy), l->main.busy_ns + l->sub.busy_ns);
	if (l->gpu < 0) {
		snprintf(label, sizeof(label), "pid %lld \xc2\xb7 thread %lld \xc2\xb7 NVTX", (long long)l->pid, (long long)l->b);
		snprintf(title, sizeof(title), "NVTX ranges of thread %lld: %llu outermost (full bars), %llu nested (thin bars)",
			 (long long)l->b, (unsigned long long)l->main.events, (unsigned long long)l->sub.events);
	} else if (l->gpu) {
		snprintf(label, sizeof(label), "GPU %lld \xc2\xb7 stream %lld", (long long)l->a, (long long)l->b);
		if (t->h->nprocs > 1)
			snprintf(label + strlen(label), sizeof(label) - strlen(label), " \xc2\xb7 pid %lld", (long long)l->pid);
		snprintf(title, sizeof(title), "GPU %lld%s, stream %lld: %llu ops, %s busy%s", (long long)l->a,
			 t->h->simulated ? " (simulated)" : "", (long long)l->b, (unsigned long long)l->main.events, busy,
			 l->main.agg ? "; drawn as density buckets (too many ops for one rectangle each)" : "");
	} else {
		if (l->b >= 0)
			snprintf(label, sizeof(label), "pid %lld \xc2\xb7 thread %lld%s", (long long)l->pid, (long long)l->b,
				 l->b == l->pid ? " (main)" : "");
		else
			snprintf(label, sizeof(label), "pid %lld \xc2\xb7 CUPTI thread %llx", (long long)l->pid,
				 (unsigned long long)(-l->b - 1));
		snprintf(title, sizeof(title), "%.300s: %llu CUDA calls (%s inside them)%s%s", argv,
			 (unsigned long long)(l->main.events + l->sub.events), busy,
			 l->sub.events ? "; thin bar: calls only CUPTI saw (inside libraries, or not hooked)" : "",
			 l->main.agg || l->sub.agg ? "; drawn as density buckets (too many calls for one rectangle each)" : "");
	}
	lane_open(t, l->gpu > 0 ? "gpu" : l->gpu < 0 ? "host nvtx" : "host", label, title);
	write_track(t, &l->main, "m");
	write_track(t, &l->sub, "s");
	fputs("</svg></div>\n", t->h->f);
}

static void write_util(struct tl *t, const struct device_util *d)
{
	FILE *f = t->h->f;
	double w = (double)(t->t1 - t->t0) / UTIL_BUCKETS;
	char label[96];
	size_t b, e;

	snprintf(label, sizeof(label), "GPU %lld utilisation", (long long)d->dev);
	lane_open(t, "util", label,
		  "share of each slice of the run in which the GPU ran at least one kernel, copy or memset (union over streams)");
	for (b = 0; b < UTIL_BUCKETS; b = e) {
		double u = d->busy[b] / w;
		int pct = (int)(u * 100 + 0.5);

		for (e = b + 1; e < UTIL_BUCKETS && (int)(d->busy[e] / w * 100 + 0.5) == pct; e++)
			;
		if (pct <= 0)
			continue;
		if (pct > 100)
			pct = 100;
		fprintf(f, "<rect class=\"u\" x=\"%.3f\" width=\"%.3f\" y=\"%.2f\" height=\"%.2f\" data-u=\"%d\"/>",
			w * (double)b * t->scale, w * (double)(e - b) * t->scale, 20 - 19.0 * pct / 100, 19.0 * pct / 100, pct);
	}
	fputs("</svg></div>\n", f);
}

static const char *verdict_class(const char *v)
{
	return !strcmp(v, "overhead-bound") ? "ob" : !strcmp(v, "compute-bound") ? "cb" : !strcmp(v, "mixed") ? "mx" : "ng";
}

/* Phases and the excluded start-up as bands over every lane, labelled in a strip of their own. */
static void write_phases(struct tl *t)
{
	const struct html *h = t->h;
	FILE *f = h->f;
	uint64_t excl_end = h->nph > 0 ? h->ph[0].v.start : h->v.start;
	int i;

	if (excl_end <= t->t0 && h->nph == 0 && cprof_verdict_no_gpu(&h->v))
		return; /* nothing to mark */
	fputs("<div class=\"lane phs\"><div class=\"ll\" title=\"phases: the run cut at synchronising calls (or at its NVTX steps), each with its"
	      " verdict; grey: start-up and warm-up, excluded from the verdict\">Phases</div><div class=\"marks\">", f);
	if (excl_end > t->t0)
		fprintf(f, "<span class=\"pm ex\" data-t0=\"0\" data-t1=\"%.3f\" title=\"start-up and warm-up: excluded from"
			   " the verdict (--include-startup counts them)\">start-up</span>",
			ux(t, (double)excl_end));
	for (i = 0; i < h->nph; i++) {
		char line[1024];

		cprof_verdict_line(&h->ph[i].v, line, sizeof(line));
		fprintf(f, "<span class=\"pm %s\" data-t0=\"%.3f\" data-t1=\"%.3f\" title=\"phase %d: ",
			verdict_class(h->ph[i].v.verdict),
			ux(t, (double)h->ph[i].start), ux(t, (double)h->ph[i].end), i + 1);
		html_text(f, line);
		fprintf(f, "\">%d %s</span>", i + 1, h->ph[i].v.verdict);
	}
	if (h->nph == 0 && !cprof_verdict_no_gpu(&h->v)) {
		fprintf(f, "<span class=\"pm %s\" data-t0=\"%.3f\" data-t1=\"%.3f\" title=\"the window of the verdict\">%s</span>",
			verdict_class(h->v.verdict), ux(t, (double)h->v.start), ux(t, (double)h->v.end), h->v.verdict);
	}
	fputs("</div></div>\n", f);
	/* the same bands, faint, behind the lanes */
	fprintf(f, "<svg id=\"bands\" class=\"z\" viewBox=\"0 0 %d 100\" preserveAspectRatio=\"none\">", SVG_WIDTH);
	if (excl_end > t->t0)
		fprintf(f, "<rect class=\"b-ex\" x=\"0\" width=\"%.3f\" height=\"100\"/>", ux(t, (double)excl_end));
	for (i = 0; i < h->nph; i++)
		fprintf(f, "<rect class=\"b-%s\" x=\"%.3f\" width=\"%.3f\" height=\"100\"/>", verdict_class(h->ph[i].v.verdict),
			ux(t, (double)h->ph[i].start), (double)(h->ph[i].end - h->ph[i].start) * t->scale);
	fputs("</svg>\n", f);
}

static void write_names(struct tl *t)
{
	FILE *f = t->h->f;
	size_t i;

	fputs("<style>", f);
	for (i = 0; i < t->nnames; i++)
		fprintf(f, ".n%zu{fill:%s;stroke:%s}", i, t->names[i].colour, t->names[i].colour);
	fputs("</style>\n<script>var CPROF_NAMES=[", f);
	for (i = 0; i < t->nnames; i++) {
		if (i)
			fputc(',', f);
		html_js_str(f, t->names[i].label);
	}
	fputs("];</script>\n", f);
}

static void write_legend(struct tl *t)
{
	static const char *const classes[] = { "launch", "gemm", "memcpy", "memset", "sync", "memory" };
	FILE *f = t->h->f;
	struct name **k;
	size_t n = 0, i;

	fputs("<div class=\"legend\">", f);
	k = malloc((t->nnames ? t->nnames : 1) * sizeof(*k));
	if (k) {
		for (i = 0; i < t->nnames; i++)
			if (t->names[i].kind == NK_KERNEL)
				k[n++] = &t->names[i];
		qsort(k, n, sizeof(*k), by_total);
		for (i = 0; i < n && i < HTML_TOP_COLOURS; i++) {
			char sh[96];

			cprof_shorten(k[i]->label, sh, sizeof(sh));
			fprintf(f, "<span><i style=\"background:%s\"></i>", k[i]->colour);
			html_text(f, sh);
			fputs("</span>", f);
		}
		if (n > HTML_TOP_COLOURS)
			fprintf(f, "<span><i style=\"background:%s\"></i>other kernels</span>", HTML_OTHER_KERNEL_COLOUR);
		free(k);
	}
	for (i = 0; i < t->nnames; i++)
		if (t->names[i].kind == NK_MEMCPY || t->names[i].kind == NK_MEMSET) {
			fprintf(f, "<span><i style=\"background:%s\"></i>", t->names[i].colour);
			html_text(f, t->names[i].label);
			fputs("</span>", f);
		}
	fputs("<br>", f);
	for (i = 0; i < sizeof(classes) / sizeof(classes[0]); i++)
		fprintf(f, "<span><i style=\"background:%s\"></i>%s call</span>", api_colour(classes[i]), classes[i]);
	fprintf(f, "<span><i style=\"background:%s\"></i>other call</span>", api_colour(NULL));
	fprintf(f, "<span><i style=\"background:%s\"></i>call only CUPTI saw</span>", CUPTI_COLOUR);
	for (i = 0; i < t->nlanes; i++)
		if (t->lanes[i].gpu < 0) {
			fprintf(f, "<span><i style=\"background:%s\"></i>NVTX range (thin: nested)</span>", api_colour("nvtx"));
			break;
		}
	fputs("<span><i class=\"b-ex\"></i>start-up / warm-up (excluded)</span></div>\n", f);
}

static void tl_free(struct tl *t)
{
	size_t i;
	int k;

	for (i = 0; i < t->nnames; i++)
		free(t->names[i].label);
	free(t->names);
	for (k = 0; k < NK__STRINGS; k++)
		free(t->by_sid[k]);
	for (i = 0; i < t->nlanes; i++) {
		track_free(&t->lanes[i].main);
		track_free(&t->lanes[i].sub);
	}
	free(t->lanes);
	free(t->dev);
}

int html_timeline(struct html *h)
{
	struct tl t;
	FILE *f = h->f;
	size_t i;
	int k, ret;
	double vw0, vw1;

	memset(&t, 0, sizeof(t));
	t.h = h;
	t.t0 = h->t0;
	t.t1 = h->t1;
	fputs("<section id=\"timeline\"><h2>Timeline</h2>\n", f);
	if (t.t1 <= t.t0) {
		fputs("<p>Nothing to draw: no CUDA call or GPU operation was recorded.</p></section>\n", f);
		return 0;
	}
	t.bw = (double)(t.t1 - t.t0) / AGG_BUCKETS;
	t.scale = (double)SVG_WIDTH / (double)(t.t1 - t.t0);
	t.max_sid = h->model.nstrings ? h->model.strings[h->model.nstrings - 1].id : 0;
	if (t.max_sid < 0)
		t.max_sid = 0;
	for (k = 0; k < NK__STRINGS; k++) {
		t.by_sid[k] = malloc((size_t)(t.max_sid + 1) * sizeof(int32_t));
		if (t.by_sid[k] == NULL) {
			ret = -ENOMEM;
			goto out;
		}
		memset(t.by_sid[k], 0xff, (size_t)(t.max_sid + 1) * sizeof(int32_t));
	}
	memset(t.memcpy_name, 0xff, sizeof(t.memcpy_name));
	t.memset_name = -1;
	if ((ret = host_pass(&t)) < 0 || (ret = nvtx_pass(&t)) < 0 ||
	    (ret = gpu_pass(&t)) < 0 ||
	    (ret = enforce_budget(&t)) < 0 || (ret = colour_kernels(&t)) < 0)
		goto out;
	if (t.nlanes)
		qsort(t.lanes, t.nlanes, sizeof(*t.lanes), lane_cmp);

	/* it opens on the verdict's window (issue 29 item 4): start-up, often nearly all of a short run, is one
	 * click away ("whole run") */
	{
		uint64_t a = h->nph > 1 ? h->ph[0].v.start : h->v.start, b = h->nph > 1 ? h->ph[h->nph - 1].v.end : h->v.end;
		double span = t.t1 > t.t0 ? (double)(t.t1 - t.t0) : 1;

		a = a < t.t0 ? t.t0 : a > t.t1 ? t.t1 : a;
		b = b < a ? a : b > t.t1 ? t.t1 : b;
		vw0 = SVG_WIDTH * (double)(a - t.t0) / span;
		vw1 = SVG_WIDTH * (double)(b - t.t0) / span;
	}
	fputs("<p class=\"note\">It opens on the verdict's window. Wheel or the buttons to zoom, drag to pan, double-click "
	      "to see the whole run; hover a bar for what it is. Time 0 is the first CUDA activity.</p>\n<div class=\"tlbar\">"
	      "<button id=\"zin\">+</button><button id=\"zout\">&minus;</button><button id=\"zall\">whole run</button>"
	      "<button id=\"zverdict\">verdict window</button><span id=\"zinfo\"></span></div>\n",
	      f);
	write_names(&t);
	fprintf(f, "<div id=\"tl\" data-dur=\"%.3f\" data-w=\"%d\" data-v0=\"%.3f\" data-v1=\"%.3f\">\n"
		   "<div class=\"lane axis\"><div class=\"ll\"></div><div id=\"axis\"></div></div>\n",
		(double)(t.t1 - t.t0) / 1000.0, SVG_WIDTH, vw0, vw1);
	write_phases(&t);
	for (i = 0; i < t.ndev; i++)
		write_util(&t, &t.dev[i]);
	for (i = 0; i < t.nlanes; i++)
		write_lane(&t, &t.lanes[i]);
	fputs("<div id=\"tip\"></div></div>\n", f);
	write_legend(&t);
	fputs("</section>\n", f);
	ret = 0;
out:
	if (ret < 0)
		pr_err("drawing the timeline failed: %s", strerror(-ret));
	tl_free(&t);
	return ret;
}

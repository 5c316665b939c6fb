/* The trace's events: hooked calls (with their Python spans), CUPTI API records, GPU ops, profiler overhead. */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#define PR_FMT "cprof trace"
#include "common/log.h"
#include "report/render/trace.h"

/* ---- python_function spans: consecutive calls of a thread that share their outer Python frames share
 * those frames' spans (what a sampling profiler shows; the frames' exact entry and exit are not known) ---- */
struct pyframe_open {
	const char *name;
	int64_t start, end, id;
};
struct pyspan {
	int64_t pid, tid;
	struct pyframe_open f[64]; /* outermost first */
	int n;
};

static void py_close(struct trace *t, struct pyspan *ps, int keep)
{
	while (ps->n > keep) {
		struct pyframe_open *o = &ps->f[--ps->n];

		trace_span_begin(t, "python_function", o->name, ps->pid, ps->tid, o->start, o->end);
		trace_put(t, ", \"args\": {\"Python id\": ");
		trace_put_i(t, o->id);
		trace_put(t, ", \"Python parent id\": ");
		trace_put_i(t, ps->n ? ps->f[ps->n - 1].id : 0);
		trace_put(t, "}}");
	}
}

static int py_track(struct trace *t, int64_t pid, int64_t tid, int64_t start, int64_t end, const struct cprof_stack *s)
{
	struct pyspan *ps = NULL;
	size_t i;
	int k, n, same = 0;

	for (i = 0; i < t->npy; i++)
		if (t->py[i].pid == pid && t->py[i].tid == tid)
			ps = &t->py[i];
	if (ps == NULL) {
		if (cprof_grow(&t->py, &t->cappy, t->npy, sizeof(t->py[0])) < 0)
			return -ENOMEM;
		ps = &t->py[t->npy++];
		memset(ps, 0, sizeof(*ps));
		ps->pid = pid;
		ps->tid = tid;
	}
	n = (int)(s->npy < 64 ? s->npy : 64);
	/* s->py is innermost first; the open frames are outermost first */
	while (same < ps->n && same < n && !strcmp(ps->f[same].name, s->py[s->npy - 1 - same]))
		same++;
	py_close(t, ps, same);
	for (k = 0; k < same; k++)
		ps->f[k].end = end;
	for (k = same; k < n; k++)
		ps->f[ps->n++] = (struct pyframe_open){ .name = s->py[s->npy - 1 - k], .start = start, .end = end,
							 .id = ++t->py_ids };
	return 0;
}

static void py_close_all(struct trace *t)
{
	size_t i;

	for (i = 0; i < t->npy; i++)
		py_close(t, &t->py[i], 0);
}

/* What the hook recorded beyond Kineto's keys; never a key named "stream", which HTA takes for a GPU op. */
static void hooked_extras(struct trace *t, const struct cprof_tsrc_calls *b, size_t i)
{
	int cls = b->cls[i];
	const char *kname;

	if (cls == CPROF_CALL_LAUNCH) {
		kname = cprof_model_string(&t->src.m, b->kname[i]);
		trace_arg_s(t, "kernel", trace_kernel_name(t, b->kname[i], kname ? kname : ""));
		trace_arg_dim3(t, "grid", b->a[0][i], b->a[1][i], b->a[2][i]);
		trace_arg_dim3(t, "block", b->a[3][i], b->a[4][i], b->a[5][i]);
		trace_arg_i(t, "dynamic shared memory", b->a[6][i]);
	} else if (cls == CPROF_CALL_GEMM) {
		trace_arg_i(t, "m", b->a[0][i]);
		trace_arg_i(t, "n", b->a[1][i]);
		trace_arg_i(t, "k", b->a[2][i]);
		trace_arg_i(t, "batch", b->a[3][i]);
	} else if (cls == CPROF_CALL_MEMCPY) {
		trace_arg_i(t, "bytes", b->bytes[i]);
		trace_arg_i(t, "cudaMemcpyKind", b->a[0][i]);
	} else if (cls == CPROF_CALL_MEMSET) {
		trace_arg_i(t, "bytes", b->bytes[i]);
		trace_arg_i(t, "value", b->a[0][i]);
	} else if (cls == CPROF_CALL_MEMORY && b->has_bytes[i]) {
		trace_arg_i(t, "bytes", b->bytes[i]);
	}
	if (b->has_stream[i] && (cls == CPROF_CALL_LAUNCH || cls == CPROF_CALL_GEMM || cls == CPROF_CALL_MEMCPY ||
				 cls == CPROF_CALL_MEMSET || cls == CPROF_CALL_SYNC))
		trace_arg_i(t, "cuda stream", b->stream[i]);
	if (b->ret[i] != 0)
		trace_arg_i(t, "return value", b->ret[i]);
	if (b->nested[i])
		trace_arg_i(t, "nested", 1);
	if (b->has_stack[i]) {
		const struct cprof_stack *s = cprof_stacks_find(&t->src.stacks, b->proc[i], b->stack[i]);

		if (s && s->callsite)
			trace_arg_s(t, "call site", s->callsite);
		if (s && s->ops)
			trace_arg_s(t, "ops", s->ops);
	}
}

/* a flow from a hooked call to each GPU-bound CUPTI id it made */
struct flow_ctx {
	struct trace *t;
	int64_t proc, pid, tid, start;
};

static void flow_out(void *ctx, int64_t corr)
{
	struct flow_ctx *c = ctx;

	trace_flow(c->t, 's', trace_corr_id(c->t, c->proc, corr), c->pid, c->tid, c->start);
}

static int write_hooked_batch(void *ctx, const struct cprof_tsrc_calls *b)
{
	struct trace *t = ctx;
	size_t i;
	int ret;

	for (i = 0; i < b->n; i++) {
		int64_t proc = b->proc[i], pid = b->pid[i], tid = b->tid[i], start = b->start[i], ext = b->ext[i];
		int64_t gcorr = CPROF_NO_ID, anycorr = CPROF_NO_ID, ngpu = 0, corr;
		const char *name = cprof_model_string(&t->src.m, b->name[i]), *xname = NULL;
		const struct cprof_tsrc_hook *h = NULL;
		const struct cprof_tsrc_api *x = NULL;
		int same;

		if (b->has_ext[i]) {
			cprof_tsrc_call_corrs(&t->src, proc, ext, &gcorr, &anycorr, &ngpu);
			h = cprof_tsrc_hook_find(&t->src, proc, ext);
			if (anycorr != CPROF_NO_ID)
				x = cprof_tsrc_api_find(&t->src, proc, gcorr != CPROF_NO_ID ? gcorr : anycorr);
			if (x && x->name != CPROF_NO_ID)
				xname = cprof_model_string(&t->src.m, x->name);
		}
		same = xname && trace_same_api(name, xname);
		/* a CUPTI id that reached the GPU, else the CUPTI record of this very call, else our own id */
		if (gcorr != CPROF_NO_ID)
			corr = trace_corr_id(t, proc, gcorr);
		else if (same)
			corr = trace_corr_id(t, proc, anycorr);
		else
			corr = ext;
		trace_span_begin(t, "cuda_runtime", name, pid, tid, start, b->end[i]);
		trace_put(t, ", \"args\": {\"External id\": ");
		trace_put_i(t, h && h->op != CPROF_NO_ID ? h->op : ext);
		if (same)
			trace_arg_i(t, "cbid", x->cbid);
		trace_arg_i(t, "correlation", corr);
		hooked_extras(t, b, i);
		trace_put(t, "}}");
		if (b->has_stack[i]) {
			const struct cprof_stack *s = cprof_stacks_find(&t->src.stacks, proc, b->stack[i]);

			if (s && s->npy && (ret = py_track(t, pid, tid, start, b->end[i], s)) < 0)
				return ret;
		}
		if (ngpu == 1) {
			trace_flow(t, 's', corr, pid, tid, start);
		} else if (ngpu > 1) {
			/* a graph launch or a library call with several launches: one flow per GPU-bound CUPTI id */
			struct flow_ctx fc = { t, proc, pid, tid, start };

			cprof_tsrc_call_gpu_corrs(&t->src, proc, ext, flow_out, &fc);
		}
	}
	return 0;
}

int trace_scan_failed(struct trace *t, int ret)
{
	(void)t;
	if (ret == -ENOMEM)
		pr_err("out of memory");
	else
		pr_err("reading the profile failed: %s", cprof_model_errmsg(t->src.db));
	return ret;
}

/* Every hooked call (cudart and cuBLAS) as Kineto's cuda_runtime span; its correlation is CUPTI's id of the
 * launch it made, so the span, its flow and the GPU op agree, and HTA joins them. */
int trace_write_hooked(struct trace *t)
{
	int ret = cprof_tsrc_scan_calls(&t->src, write_hooked_batch, t);

	if (ret < 0)
		return trace_scan_failed(t, ret);
	py_close_all(t);
	return 0;
}

struct api_ctx {
	struct trace *t;
	const char *cat;
};

static int write_api_batch(void *ctx, const struct cprof_tsrc_apis *b)
{
	struct trace *t = ((struct api_ctx *)ctx)->t;
	const char *cat = ((struct api_ctx *)ctx)->cat;
	char name[256];
	size_t i;

	for (i = 0; i < b->n; i++) {
		int64_t proc = b->proc[i], start = b->start[i], pid = trace_proc_pid(t, proc), tid, ext = 0;
		int64_t corr = trace_corr_id(t, proc, b->corr[i]);
		const struct cprof_tsrc_hook *h = NULL;
		const char *rname = b->name[i] != CPROF_NO_ID ? cprof_model_string(&t->src.m, b->name[i]) : NULL;
		int has_ext = 0, to_gpu = 0;

		if (b->has_corr[i]) {
			has_ext = cprof_tsrc_ext_of(&t->src, proc, b->corr[i], &ext);
			if (has_ext)
				h = cprof_tsrc_hook_find(&t->src, proc, ext);
			/* this very record has the id: whether the id reached the GPU is all its join says */
			to_gpu = cprof_tsrc_corr_gpu(&t->src, proc, b->corr[i]);
		}
		if (rname == NULL)
			rname = "";
		if (h) {
			const char *hname = cprof_model_string(&t->src.m, h->name);

			if (to_gpu || trace_same_api(rname, hname ? hname : ""))
				continue;
		}
		tid = h ? h->tid : trace_cupti_tid(t, proc, b->thread[i]);
		trace_display_api_name(rname, name, sizeof(name));
		trace_span_begin(t, cat, name, pid, tid, start, b->end[i]);
		trace_put(t, ", \"args\": {");
		if (has_ext) {
			trace_put(t, "\"External id\": ");
			trace_put_i(t, h && h->op != CPROF_NO_ID ? h->op : ext);
			trace_put(t, ", ");
		}
		trace_put(t, "\"cbid\": ");
		trace_put_i(t, b->cbid[i]);
		trace_arg_i(t, "correlation", corr);
		trace_put(t, "}}");
		if (to_gpu)
			trace_flow(t, 's', corr, pid, tid, start);
	}
	return 0;
}

/* CUPTI's runtime/driver records. One that is the CUPTI side of a hooked call (joined through our external
 * id, and either the same API or the launch the hooked library call made) is already there as that call;
 * the rest (cuBLAS's internal occupancy queries, driver launches by Triton) are calls no hook saw. */
int trace_write_api_records(struct trace *t, enum cprof_tsrc_api_table table, const char *cat)
{
	struct api_ctx c = { t, cat };
	int ret = cprof_tsrc_scan_apis(&t->src, table, write_api_batch, &c);

	return ret < 0 ? trace_scan_failed(t, ret) : 0;
}

static const char *memcpy_kind(int64_t k)
{
	static const char *const names[] = { "<unknown>", "HtoD", "DtoH", "HtoA", "AtoH", "AtoA",
					     "AtoD",      "DtoA", "DtoD", "HtoH", "PtoP" };

	return k >= 0 && k < (int64_t)(sizeof(names) / sizeof(names[0])) ? names[k] : "<unknown>";
}

static const char *memory_kind(int64_t k)
{
	static const char *const names[] = { "Unknown", "Pageable", "Pinned", "Device", "Array", "Managed",
					     "Device Static", "Managed Static" };

	return k >= 0 && k < (int64_t)(sizeof(names) / sizeof(names[0])) ? names[k] : "Unrecognized";
}

void trace_bandwidth(struct trace *t, int64_t bytes, int64_t ns)
{
	trace_put(t, ", \"memory bandwidth (GB/s)\": ");
	if (ns <= 0)
		trace_put(t, "\"N/A\"");
	else
		trace_put_double(t, (double)bytes / (double)ns);
}

static int write_ops_batch(void *ctx, const struct cprof_tsrc_ops *b)
{
	static const char *const cats[] = { "kernel", "gpu_memcpy", "gpu_memset" };
	struct trace *t = ctx;
	char name[128];
	size_t i;

	for (i = 0; i < b->n; i++) {
		int64_t proc = b->proc[i], start = b->start[i], end = b->end[i], dev = b->dev[i], stream = b->stream[i];
		int64_t corr = trace_corr_id(t, proc, b->corr[i]), ext = 0;
		const struct cprof_tsrc_hook *h = NULL;
		const char *label = name;
		int has_ext = 0, launched = 0;

		if (b->has_corr[i]) {
			has_ext = cprof_tsrc_ext_of(&t->src, proc, b->corr[i], &ext);
			if (has_ext)
				h = cprof_tsrc_hook_find(&t->src, proc, ext);
			/* the launcher exists when a hooked call or an API record has the id */
			launched = h != NULL || cprof_tsrc_api_find(&t->src, proc, b->corr[i]) != NULL;
		}
		if (b->kind == CPROF_OP_KERNEL) {
			const char *k = cprof_model_string(&t->src.m, b->name[i]);

			label = trace_kernel_name(t, b->name[i], k ? k : "");
		} else if (b->kind == CPROF_OP_MEMCPY) {
			snprintf(name, sizeof(name), "Memcpy %s (%s -> %s)", memcpy_kind(b->copy[i]), memory_kind(b->src[i]),
				 memory_kind(b->dst[i]));
		} else {
			snprintf(name, sizeof(name), "Memset (%s)", memory_kind(b->mem[i]));
		}
		trace_span_begin(t, cats[b->kind], label, dev, stream, start, end);
		trace_put(t, ", \"args\": {");
		if (has_ext) {
			trace_put(t, "\"External id\": ");
			trace_put_i(t, h && h->op != CPROF_NO_ID ? h->op : ext);
			trace_put(t, ", ");
		}
		if (b->kind == CPROF_OP_KERNEL)
			trace_put(t, "\"queued\": 0, "); /* CUPTI's queued timestamp is not recorded; 0 is its "unknown" */
		trace_put(t, "\"device\": ");
		trace_put_i(t, dev);
		trace_arg_i(t, "context", b->ctx[i]);
		trace_arg_i(t, "stream", stream);
		trace_arg_i(t, "correlation", corr);
		if (b->kind == CPROF_OP_KERNEL) {
			trace_arg_i(t, "registers per thread", b->regs[i]);
			trace_arg_i(t, "shared memory", b->shmem[i]);
			trace_arg_dim3(t, "grid", b->grid[0][i], b->grid[1][i], b->grid[2][i]);
			trace_arg_dim3(t, "block", b->block[0][i], b->block[1][i], b->block[2][i]);
		} else {
			trace_arg_i(t, "bytes", b->bytes[i]);
			trace_bandwidth(t, b->bytes[i], end - start);
		}
		trace_put(t, "}}");
		if (launched)
			trace_flow(t, 'f', corr, dev, stream, start);
	}
	return 0;
}

int trace_write_gpu_ops(struct trace *t, enum gpu_kind kind)
{
	int ret = cprof_tsrc_scan_ops(&t->src, (enum cprof_op_kind)kind, write_ops_batch, t);

	return ret < 0 ? trace_scan_failed(t, ret) : 0;
}

static const char *overhead_kind(int64_t k)
{
	/* Kineto's strings for the kinds it knows; CUDA 12+ kinds it calls "Unrecognized" get their own names */
	switch (k) {
	case 0:
		return "Unknown";
	case 1:
		return "Driver Compiler";
	case 1 << 16:
		return "Buffer Flush";
	case 2 << 16:
		return "Instrumentation";
	case 3 << 16:
		return "Resource";
	case 4 << 16:
		return "Runtime Triggered Module Loading";
	case 5 << 16:
		return "Lazy Function Loading";
	case 6 << 16:
		return "Command Buffer Full";
	case 7 << 16:
		return "Activity Buffer Request";
	case 8 << 16:
		return "UVM Activity Init";
	default:
		return "Unrecognized";
	}
}

static int write_ovh_batch(void *ctx, const struct cprof_tsrc_ovhs *b)
{
	struct trace *t = ctx;
	size_t i;

	for (i = 0; i < b->n; i++) {
		trace_span_begin(t, "overhead", overhead_kind(b->kind[i]), -1, 0, b->start[i], b->end[i]);
		trace_put(t, "}");
	}
	return 0;
}

int trace_write_overhead(struct trace *t)
{
	int ret = cprof_tsrc_scan_overhead(&t->src, write_ovh_batch, t);

	return ret < 0 ? trace_scan_failed(t, ret) : 0;
}

/* NVTX in the trace: ranges as Kineto's user_annotation spans, projected onto the GPU lanes; named lanes. */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#define PR_FMT "cprof trace"
#include "common/log.h"
#include "common/wire.h"
#include "report/render/trace.h"

/* ---- NVTX: ranges as Kineto's user_annotation spans on their thread, projected onto the GPU lanes as
 * gpu_user_annotation spans; names given to threads and streams name their lanes (trace-src.c lays them out) ---- */

/* What NVTX said beyond the name; "External id" pairs a range with its GPU projection, as Kineto does. */
static void nvtx_args(struct trace *t, const struct cprof_tsrc_nvtx *e)
{
	const char *domain = e->domain != CPROF_NO_ID ? cprof_model_string(&t->src.m, e->domain) : NULL;

	trace_put(t, ", \"args\": {\"External id\": ");
	trace_put_i(t, e->id);
	if (domain)
		trace_arg_s(t, "domain", domain);
	if (e->category != CPROF_NO_ID)
		trace_arg_i(t, "category", e->category);
	if (e->color != CPROF_NO_ID)
		trace_arg_i(t, "color", e->color);
	if (e->open)
		trace_arg_i(t, "never ended", 1);
	else if (e->end_tid != CPROF_NO_ID && e->end_tid != e->tid)
		trace_arg_i(t, "ended on thread", e->end_tid);
	trace_put(t, "}}");
}

static const char *nvtx_text(const struct trace *t, int64_t id)
{
	const char *s = id != CPROF_NO_ID ? cprof_model_string(&t->src.m, id) : NULL;

	return s ? s : "(no message)";
}

int trace_write_nvtx(struct trace *t)
{
	const struct cprof_trace_src *s = &t->src;
	size_t i;

	if (!s->nvtx)
		return 0;
	/* outer ranges first: a viewer nests spans that start together in the order it reads them */
	for (i = 0; i < s->nev; i++) {
		const struct cprof_tsrc_nvtx *e = &s->ev[i];
		int64_t pid = trace_proc_pid(t, e->proc);

		if (e->type == CPROF_NVTX_MARK) {
			trace_ev_begin(t);
			trace_put(t, "\"ph\": \"i\", \"s\": \"t\", \"cat\": \"user_annotation\", \"name\": ");
			trace_put_str(t, nvtx_text(t, e->text));
			trace_put(t, ", \"pid\": ");
			trace_put_i(t, pid);
			trace_put(t, ", \"tid\": ");
			trace_put_i(t, e->tid);
			trace_put(t, ", \"ts\": ");
			trace_put_ts(t, e->start);
		} else {
			/* PyTorch's op ranges are Kineto's cpu_op spans */
			int op = e->category == (int64_t)CPROF_NVTX_CATEGORY_TORCH_OP;

			trace_span_begin(t, op ? "cpu_op" : "user_annotation", nvtx_text(t, e->text), pid, e->tid, e->start,
					 e->end);
		}
		nvtx_args(t, e);
	}
	/* per range and stream, from the first to the last GPU op launched by a call made inside the range on its
	 * thread (Kineto's gpu_user_annotation); the longer span first, so the outer range holds the inner one */
	for (i = 0; i < s->nproj; i++) {
		const struct cprof_tsrc_proj *p = &s->proj[i];

		trace_span_begin(t, "gpu_user_annotation", nvtx_text(t, p->text), p->dev, p->stream, p->start, p->end);
		trace_put(t, ", \"args\": {\"External id\": ");
		trace_put_i(t, p->id);
		trace_put(t, "}}");
	}
	return 0;
}

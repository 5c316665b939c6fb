/* The verdict: GPU-busy union, utilisation, HTA-style idle breakdown, phases and findings, computed from a profile. */
#ifndef CPROF_REPORT_ANALYSIS_H
#define CPROF_REPORT_ANALYSIS_H

#include <stdint.h>
#include <string.h>

#include <sqlite3.h>

struct cprof_model;

/* CUPTI overhead kinds that are the profiler's own cost (buffer flush, instrumentation, resources,
 * buffer requests); lazy loading and module loading are the program's cold start. */
#define CPROF_PROFILER_OVERHEAD_KINDS "(65536, 131072, 196608, 458752)"

struct cprof_thresholds {
	double compute_pct;       /* U >= this: compute-bound (80) */
	double overhead_pct;      /* no longer used by the verdict (docs/verdict.md): kept for --overhead-pct */
	double host_wait_share;   /* "most of the idle time" (50) */
	uint64_t kernel_wait_ns;  /* a gap shorter than this between GPU ops is kernel wait (as HTA) */
	int include_startup;      /* count the time before the first GPU op */
	const char *step_re;      /* NVTX ranges whose names match are the steps (NULL: the default pattern) */
};
void cprof_thresholds_default(struct cprof_thresholds *t);

/* What the host was doing while the GPU starved (docs/verdict.md, "The cause"), in the order a moment is
 * given to the first that covers it; the cause is the largest. */
enum cprof_idle_cause {
	CPROF_IDLE_COPY,    /* inside a copy call */
	CPROF_IDLE_API,     /* inside another CUDA call (launch cost) */
	CPROF_IDLE_COLL,    /* inside a collective (gloo, NCCL, c10d op ranges): waiting on other processes */
	CPROF_IDLE_DATA,    /* inside the DataLoader's next batch */
	CPROF_IDLE_ATEN,    /* inside an ATen op (aten::, prims::) outside CUDA calls: dispatch */
	CPROF_IDLE_DYNAMO,  /* inside torch.compile's regions (Dynamo's guards and wrappers, Python dispatch) */
	CPROF_IDLE_HOST,    /* none of these: the program's own host work (Python and other) */
	CPROF_IDLE__N
};
extern const char *const cprof_idle_cause_key[CPROF_IDLE__N]; /* JSON keys */
extern const char *const cprof_idle_cause_text[CPROF_IDLE__N]; /* the cause, in words */

/* CUPTI's time in one runtime call, and how it was had (cost.c, cprof_model_cupti_in_calls) */
struct cprof_in_call {
	uint64_t ns;          /* the figure used */
	uint64_t estimate_ns; /* the estimate: each call less its record, kept when the measurement replaced it */
	uint64_t passed;      /* passed-through launches a measurement was made against (0: none) */
	int measured;         /* the measurement replaced the estimate: more than twice its standard error above 0 */
	int64_t diff_ns;      /* the measurement (the difference of the means), whether used or not */
	uint64_t se_ns;       /* its standard error */
};

/* The program's pace with cprof recording and without (cost.c, cprof_model_pace): the wall time per kernel launch
 * inside the recording windows against that between them, where CPROF_COST counted the launches passed through.
 * One figure for the run; each process's difference weighed by its launches in the windows. */
struct cprof_pace {
	uint64_t launches_in, launches_out; /* kernel launches it was measured on, in the windows and between them */
	uint64_t windows;                   /* the windows it was measured on (each one sample) */
	uint64_t in_ns, out_ns;             /* wall ns per launch on each side */
	int64_t diff_ns;                    /* in less out: what recording added to each launch's share of the time */
	uint64_t se_ns;                     /* its standard error (each window and each gap one sample) */
	int measured;                       /* enough of both, and more than twice its standard error above 0 */
};
/* one process's own difference (cprof_model_pace), by which its launches are charged */
struct cprof_pace_proc {
	int64_t proc;
	double diff_ns;
};

/* What profiling cost the program in a window (cost.c): measured totals, spread over the window's calls. */
struct cprof_cost {
	int measured;              /* the profile has CPROF_COST rows (else only the CUPTI part is known) */
	uint64_t window_ns, calls;
	uint64_t hook_ns;          /* the hooks' own time on the program's threads (sampled_calls timed, scaled) */
	uint64_t sampled_calls;
	uint64_t stack_ns, stacks; /* stack captures */
	uint64_t counted_ns, counted_calls; /* the counted calls' hooks (one in CPROF_COST_SAMPLE timed, scaled) */
	uint64_t cupti_overhead_ns; /* CUPTI's overhead records (buffer requests and flushes) */
	uint64_t cupti_calls_ns, cupti_calls; /* CUPTI's time inside the runtime calls it measured (the mean x the window's runtime records) */
	struct cprof_in_call in_call; /* that mean, CUPTI's time in one call, and how it was had (one for the run) */
	uint64_t flusher_cpu_ns, collector_cpu_ns; /* cprof's own threads' CPU (an idle-priority writer left out) */
	uint64_t app_run_ns;       /* the program's threads' CPU */
	uint64_t app_wait_ns;      /* the program's threads runnable and not running */
	uint64_t wait_expected_ns; /* of that, what they wait anyway: their wait per ns run outside the windows x their
				    * run less cprof's part (0: no such baseline) */
	uint64_t wait_part_ns;     /* the wait the baseline expects of cprof's part of the run */
	int64_t wait_excess_ns;    /* app_wait - wait_expected, each process's divided by its threads runnable at a time
				    * (cost.c): signed, so that phases add up before it is bounded */
	uint64_t wait_attributed_ns; /* the excess, from 0 to cprof's own threads' CPU + the wait due to cprof's part of
				      * the run */
	uint64_t total_ns;         /* hook + stack + counted + wait_attributed + cupti_overhead + cupti_calls */
	struct cprof_pace pace;    /* the run's pace in and outside its windows (one for the run) */
	uint64_t pace_launches;    /* the window's kernel launches of the processes the pace was measured on */
	uint64_t paced_ns;         /* when pace.measured: each of those launches times its process's difference */
	uint64_t lost_ring_full, lost_cupti, lost_pipe, lost_nested; /* over the whole run */
};
void cprof_cost_window(const struct cprof_model *m, int64_t proc, uint64_t ws, uint64_t we, uint64_t cupti_ns,
		       struct cprof_cost *out);
void cprof_cost_add(struct cprof_cost *to, const struct cprof_cost *c);

struct cprof_verdict {
	char verdict[24];          /* overhead-bound | compute-bound | mixed | no-gpu-activity | cuda-unavailable */
	uint64_t run_start, run_end; /* first to last CUDA activity */
	uint64_t start, end;       /* the window the verdict uses */
	int host_off_cpu;          /* the host's time between launches was mostly off the CPU, neither run nor waited (set_cause) */
	uint64_t startup_ns;       /* before the first GPU op: excluded (unless include_startup) */
	uint64_t warmup_ns;        /* first instances of the repeating kernels: excluded too */
	uint64_t busy_ns;          /* union of kernel, memcpy, memset intervals */
	double busy_pct;
	uint64_t host_wait_ns, kernel_wait_ns, other_ns, overhead_ns;
	uint64_t gpu_span_start, gpu_span_end; /* first GPU op start .. last GPU op end */
	uint64_t self_cpu_ns;      /* time inside hooked CUDA calls (outermost only) in the window */
	uint64_t self_gpu_ns;      /* sum of GPU op durations in the window */
	uint64_t kernel_ns;        /* sum of kernel durations */
	uint64_t kernels, memcpys, memsets;
	uint64_t api_calls;
	double med_launch_ns;      /* median launch call */
	double med_kernel_ns;      /* median kernel */
	uint64_t api_in_host_wait_ns; /* part of host-wait gaps spent inside CUDA calls */
	/* who waits for whom (docs/verdict.md): a GPU op is in its stream's queue from the end of the call that
	 * launched it until it ends; depth = such ops of the process at a time */
	uint64_t starved_ns;       /* GPU idle, at most one op queued (the one being submitted): the GPU waits for the host */
	uint64_t stalled_ns;       /* GPU idle with two or more ops queued: waits on dependencies, not on the host */
	uint64_t backlog_ns;       /* two or more ops queued: the host is ahead of the GPU */
	uint64_t blocked_ns;       /* the host inside synchronising calls while work was queued: it waits for the GPU */
	uint64_t copy_ns;          /* GPU time of copies (host<->device) */
	uint64_t copy_call_ns;     /* host time in copy calls (outermost) */
	uint64_t launch_call_ns;   /* host time in launch calls (outermost) */
	uint64_t launch_calls_cupti; /* launches timed from CUPTI's records (the hooks did not see them) */
	uint64_t graph_replays;    /* cudaGraphLaunch calls (outermost) in the window */
	uint64_t graph_setup_ns;   /* a graph's warm-up, capture and instantiation at the window's start: excluded */
	uint64_t idle_by[CPROF_IDLE__N]; /* the starved time by what the host was doing (profiler overhead out) */
	uint64_t copies_pageable, copies_sync_calls, copies_on_kernel_streams, host_copies; /* what the copies already do */
	uint64_t graph_launches;   /* cudaGraphLaunch calls: the program replays CUDA graphs already */
	char cause[160];           /* what the host was doing while the GPU waited; cuda-unavailable: the first failure */
	const char *step_re;       /* the step pattern used (thresholds') */
	int steps;                 /* steps marked with NVTX ranges: they cut the phases (0: inferred) */
	int cold_step;             /* the first step was far slower than the median: excluded */
	char advice[320];
	struct cprof_cost cost;    /* what cprof itself cost the program in the window */
};

/* No GPU work in the verdict's window: no-gpu-activity or cuda-unavailable. */
static inline int cprof_verdict_no_gpu(const struct cprof_verdict *v)
{
	return !strcmp(v->verdict, "no-gpu-activity") || !strcmp(v->verdict, "cuda-unavailable");
}


/* Window [from, to) restricts the ops and calls considered; 0, UINT64_MAX for the whole run.
 * proc: PROCESSES.id, 0 = every process. */
int cprof_analyse(const struct cprof_model *m, int64_t proc, uint64_t from, uint64_t to, const struct cprof_thresholds *t,
		  struct cprof_verdict *v);
/* Only the first part of cprof_analyse: the run's bounds (run_start, run_end), the GPU op counts (kernels, memcpys,
 * memsets) and the window the verdict would use (start, end), as cprof_analyse gives them; no verdict is made (a
 * window with no GPU work is one whose three counts are 0). For a caller that needs no more of it. */
int cprof_analyse_window(const struct cprof_model *m, int64_t proc, uint64_t from, uint64_t to,
			 const struct cprof_thresholds *t, struct cprof_verdict *v);

struct cprof_phase {
	uint64_t start, end;
	struct cprof_verdict v;
};
/* The run's verdict: from its phases when it has them (setup between phases excluded), else from
 * the whole run. Phases: the run cut at synchronising calls, or at the program's NVTX steps. *phases gets the phases (caller frees); returns their number or -1. */
int cprof_headline(struct cprof_model *m, int64_t proc, const struct cprof_thresholds *t, struct cprof_verdict *v,
		   struct cprof_phase **phases);

struct cprof_finding {
	char id[32];
	char severity[8]; /* info | warn */
	char message[400];
	char evidence[400];
};
/* Every rule that fires for process proc (0 = all), given its verdict. Returns the count, *out malloc'd. */
int cprof_findings(struct cprof_model *m, int64_t proc, const struct cprof_verdict *v, struct cprof_finding **out);

/* torch.compile's host cost per call, from PyTorch's own ranges (cprof-run --torch-ops): medians over the calls
 * after each region's first (which compiles). The torch-compile findings and cprof diff read it. */
struct cprof_compile_cost {
	long long calls;     /* compiled-region calls, first ones included */
	size_t regions;      /* distinct compiled regions */
	size_t steady;       /* the calls the medians are over */
	double lookup_ns;    /* Dynamo's cache lookup before a call */
	double region_ns;    /* the compiled region on the host */
	double api_ns;       /* of it, in CUDA calls */
	double kernels;      /* kernels a call launched */
	double gpu_ns;       /* their GPU time */
	long long recompiles;
	char recompiled[200]; /* the regions compiled again, "0/1, 1/1" */
};
/* 0 (cc->calls 0: no compiled region), or -ENOMEM */
int cprof_compile_cost(struct cprof_model *m, int64_t proc, struct cprof_compile_cost *cc);

/* Idle share as Holistic Trace Analysis's temporal breakdown computes it from our trace: GPU ops of all
 * streams, rounded inward to whole microseconds, window first op start to last op end. -1: no ops. */
double cprof_hta_idle_pct(const struct cprof_model *m, int64_t proc);

/* Steps: NVTX ranges matching the pattern (cprof_step_re_default when re is NULL), the outermost ones on
 * the thread that has the most, in time order. Returns the count (0: none, or no NVTX in the profile). */
struct cprof_step {
	uint64_t start, end;
	int64_t proc, tid;
	char name[64];
};
extern const char cprof_step_re_default[];
int cprof_steps_of(const struct cprof_model *m, int64_t proc, const char *re, struct cprof_step **out);
int cprof_step_re_check(const char *re, char *err, size_t size);
uint64_t cprof_steps_median(const struct cprof_step *s, int n, int from);
/* 1 when the first of n steps took more than 1.5x the median of the others (n >= 3) */
int cprof_steps_cold(const struct cprof_step *s, int n);
/* The steps section of cprof report: the steps, which of them a table shows (json: the first top; text: the
 * first ones, then only those 1.5x the median or slower, at most top; top 0: no limit) and their verdicts. */
struct cprof_steps_view {
	const struct cprof_step *s; /* the model's */
	int n, cold, nshown;
	uint64_t med;               /* median step, the cold one left out */
	const char *re;             /* the pattern */
	uint8_t *shown, *has_v;     /* per step: shown; its verdict could be made */
	struct cprof_verdict *v;    /* per step (shown ones) */
};
int cprof_steps_view(struct cprof_model *m, int64_t proc, const struct cprof_thresholds *t, int json, size_t top,
		     struct cprof_steps_view *out);
void cprof_steps_view_free(struct cprof_steps_view *v);

/* One process on several GPUs: each device's verdict, from its own ops (the host's calls shared). Returns
 * the number of devices when there are two or more (*out malloc'd, by device), 0 with one, or < 0. */
struct cprof_device_verdict {
	int32_t device;
	struct cprof_verdict v;
};
int cprof_device_verdicts(const struct cprof_model *m, int64_t proc, const struct cprof_thresholds *t,
			  struct cprof_device_verdict **out);

/* One line a person can act on. */
void cprof_verdict_line(const struct cprof_verdict *v, char *buf, size_t size);

#endif

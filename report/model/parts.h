/* What report, html, stacks and info print besides the model's arrays (META's facts and counts, call stacks, NVTX ranges, ATen op ranges, the flame graph), read once in cprof_model_open. */
#ifndef CPROF_REPORT_MODEL_PARTS_H
#define CPROF_REPORT_MODEL_PARTS_H

#include <stddef.h>
#include <stdint.h>

#include "report/cprof.h"
#include "report/model/flame.h"
#include "report/model/model.h"
#include "report/model/ops-nvtx.h"
#include "report/model/ranges.h"
#include "report/model/stacks.h"

/* the parts cprof_model_open reads besides enum cprof_model_part's, which keep the bits below 256 */
#define CPROF_MODEL_OWN_PARTS 0xffu
enum cprof_model_extra_part {
	CPROF_MODEL_META = 1 << 8,       /* META's facts (always read: a handful of rows) */
	CPROF_MODEL_COUNTS = 1 << 9,     /* rows per table, as cprof info and report's JSON count them */
	CPROF_MODEL_FACTS = 1 << 10,     /* COUNTS' small tables only: killed, unaccounted, windows (cprof info) */
	CPROF_MODEL_STACKS = 1 << 11,    /* call stacks and the tables they attribute (by op, call site, chain) */
	CPROF_MODEL_RANGES = 1 << 12,    /* the NVTX range table */
	CPROF_MODEL_TORCH_OPS = 1 << 13, /* PyTorch's op ranges and their table */
	CPROF_MODEL_FLAME = 1 << 14,     /* the flame graph of the stacks */
	CPROF_MODEL_NO_ARRAYS = 1 << 15, /* not even the processes: the parts above alone (a CSV table of one of them) */
};

struct cprof_model_opts {
	unsigned parts;             /* enum cprof_model_part | enum cprof_model_extra_part */
	int ranges_by_name;         /* the NVTX table by name (nsys's nvtx_sum), else by path */
	enum cprof_flame_weight flame_weight;
};

/* META's facts, and (CPROF_MODEL_COUNTS) the tables' row counts; 0 or "" where the profile has none */
struct cprof_meta_facts {
	int complete, finalised, simulated;
	int64_t exit_status;        /* -1: not known */
	int64_t lost_events, nvtx_events, processes, events, lost_spool_full, lost_unstored;
	int lost_known;             /* cprofd wrote lost_events (not when the profile's final state did not fit) */
	int64_t max_size, max_size_cut_ns, max_size_unrecorded;
	char command[4096];         /* "?" when not recorded */
	char reason[256];           /* incomplete_reason */
	char gpu_note[256];         /* gpu_records_note */
	/* the report's call totals as cprofd counted them at the finish (issue 32); calls_stored 0: none */
	int calls_stored;
	int64_t calls_program, calls_in_libs, calls_cupti_only;
	/* COUNTS */
	int64_t kernels, memcpys, memsets;          /* CUPTI's records */
	int64_t api, launch_api, memcpy_api, memset_api; /* hooked calls, all and by class */
	int64_t proc_rows, nvtx_rows;               /* PROCESSES, NVTX_EVENTS (0 without the table) */
	int64_t killed;             /* processes killed from outside or without a goodbye */
	int64_t unaccounted;        /* emitted, neither recorded nor counted lost (PROCESSES' own counts) */
	struct cprof_cupti_shared cupti_shared; /* the program's own CUPTI client got copies (processes 0: none) */
	int has_windows;            /* the profile has CPROF_WINDOWS */
	int64_t windows;            /* its rows */
};

struct cprof_model_extra {
	unsigned parts;
	struct cprof_meta_facts meta;
	struct cprof_stacks stacks;
	struct cprof_attr_table ops, sites, chains;
	struct cprof_range_table ranges;
	struct cprof_op_ranges op_ranges;
	struct cprof_op_table torch_ops; /* the whole run's */
	struct cprof_flame flame;
	char err[384];              /* why the load failed: "cannot read the call stacks: ..." */
	char why[256];              /* SQLite's message (or the out-of-range time) when it failed: the profile is closed */
};

/* Opens the profile at path, reads what o->parts asks for, each once, and closes it; afterwards the commands
 * print from m and m->x (no database handle is left). Returns 0; -ENOENT when the profile could not be opened (said on stderr; m->x is NULL); another
 * negative errno when a part could not be read (m->x->err says why; m->x->meta is read whenever m->x is set). */
int cprof_model_open(const char *path, const struct cprof_model_opts *o, struct cprof_model *m);
/* Why reading the open profile failed last: an out-of-range time, else SQLite's message. */
const char *cprof_model_why(const struct cprof_model *m);
/* The command cut to size - 1 bytes (report and info show its first 1023) in buf. */
const char *cprof_meta_command(const struct cprof_meta_facts *f, char *buf, size_t size);
/* why the lost events are a lower bound, for the header's count (" (...)"), or "": no count written, or (killed) a
 * process killed from outside */
const char *cprof_lost_note(const struct cprof_meta_facts *f, int killed);
/* Frees the model and its parts. */
void cprof_model_close(struct cprof_model *m);

#endif

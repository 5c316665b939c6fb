/* What a step is: the NVTX range names the report and cprof-run --steps both take for training steps. */
#ifndef CPROF_COMMON_STEPS_H
#define CPROF_COMMON_STEPS_H

/* ProfilerStep#N (torch.profiler), "step", "step 3", "Step_12", ... (POSIX extended regex) */
#define CPROF_STEP_RE_DEFAULT "^(ProfilerStep#[0-9]+|[Ss]tep([ _#:-]?[0-9]+)?)$"

#endif

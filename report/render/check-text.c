/* cprof check as text: one FAIL line per failed condition, naming the profile, or one PASS line. */
#include <string.h>

#include "report/cprof.h"
#include "report/render/check.h"
#include "report/term.h"

/* colour only on standard output (a terminal), never into a file -o names */
#define HUE(h) (f == stdout ? cprof_hue(h) : "")
#define HUE_VERDICT(v) (f == stdout ? cprof_hue_verdict(v) : "")

static void write_text(FILE *f, const struct cprof_check_result *r)
{
	size_t i;

	if (r->incomplete) {
		/* an incomplete profile cannot vouch for anything: say so and stop */
		fprintf(f, "INCOMPLETE %s: %s\n", cprof_tx(r->profile), cprof_tx(r->now->reason));
		return;
	}
	for (i = 0; i < r->ngates; i++)
		if (r->gates[i].failed)
			fprintf(f, "%sFAIL%s %s: %s: %s\n", HUE(CPROF_HUE_BAD), HUE(CPROF_HUE_RESET),
				cprof_tx(r->profile), r->gates[i].what, r->gates[i].detail);
	if (r->failed == 0)
		fprintf(f, "%sPASS%s %s: %s, GPU busy %.1f%%%s\n", HUE(CPROF_HUE_GOOD), HUE(CPROF_HUE_RESET),
			cprof_tx(r->profile), r->now->v.verdict, r->now->v.busy_pct,
			r->old ? ", no regression against the baseline" : "");
}

const struct cprof_check_fmt cprof_check_text = { "text", write_text };

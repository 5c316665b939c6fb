/* cprof check as text: one FAIL line per failed condition, naming the profile, or one PASS line. */
#include <string.h>

#include "report/cprof.h"
#include "report/render/check.h"

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
			fprintf(f, "FAIL %s: %s: %s\n", cprof_tx(r->profile), r->gates[i].what, r->gates[i].detail);
	if (r->failed == 0)
		fprintf(f, "PASS %s: %s, GPU busy %.1f%%%s\n", cprof_tx(r->profile), r->now->v.verdict, r->now->v.busy_pct,
			r->old ? ", no regression against the baseline" : "");
}

const struct cprof_check_fmt cprof_check_text = { "text", write_text };

/* cprof check as JUnit XML (the layout Jenkins, GitLab and GitHub's test reporters read): one test case per condition. */
#include <string.h>

#include "report/cprof.h"
#include "report/render/check.h"

static void prop(FILE *f, const char *name, const char *value)
{
	fprintf(f, "      <property name=\"%s\" value=\"", name);
	cprof_xml_fput(f, value);
	fputs("\"/>\n", f);
}

static void write_junit(FILE *f, const struct cprof_check_result *r)
{
	size_t i;
	int tests = r->incomplete ? 1 : (int)r->ngates, errors = r->incomplete;
	char busy[32];

	/* a gate with no condition still says it ran: one test case for the verdict it read */
	if (!r->incomplete && r->ngates == 0)
		tests = 1;
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
	fprintf(f, "<testsuites name=\"cprof check\" tests=\"%d\" failures=\"%d\" errors=\"%d\" time=\"0\">\n", tests,
		r->failed, errors);
	fprintf(f, "  <testsuite name=\"cprof check ");
	cprof_xml_fput(f, r->profile);
	fprintf(f, "\" tests=\"%d\" failures=\"%d\" errors=\"%d\" skipped=\"0\" time=\"0\">\n", tests, r->failed, errors);
	fprintf(f, "    <properties>\n");
	prop(f, "profile", r->profile);
	if (r->baseline)
		prop(f, "baseline", r->baseline);
	prop(f, "verdict", r->now->v.verdict);
	snprintf(busy, sizeof(busy), "%.1f", r->now->v.busy_pct);
	prop(f, "gpu_busy_pct", busy);
	prop(f, "gpu", r->simulated ? "simulated GPU (tests/simgpu): timings are modelled, not measured" : "real");
	fprintf(f, "    </properties>\n");
	if (r->incomplete) {
		fprintf(f, "    <testcase classname=\"cprof.check\" name=\"profile complete\" time=\"0\">\n"
			   "      <error type=\"incomplete\" message=\"");
		cprof_xml_fput(f, r->now->reason);
		fprintf(f, "\"/>\n    </testcase>\n");
	} else if (r->ngates == 0) {
		fprintf(f, "    <testcase classname=\"cprof.check\" name=\"verdict\" time=\"0\">\n      <system-out>");
		cprof_xml_fput(f, r->now->v.verdict);
		fprintf(f, " (GPU busy %.1f%%), no condition set</system-out>\n    </testcase>\n", r->now->v.busy_pct);
	}
	for (i = 0; !r->incomplete && i < r->ngates; i++) {
		const struct cprof_gate *g = &r->gates[i];

		fprintf(f, "    <testcase classname=\"cprof.check\" name=\"");
		cprof_xml_fput(f, g->what);
		fprintf(f, "\" time=\"0\">\n");
		if (g->failed) {
			fprintf(f, "      <failure type=\"%s\" message=\"", g->id);
			cprof_xml_fput(f, g->detail);
			fprintf(f, "\">measured ");
			cprof_xml_fput(f, g->value_text);
			fprintf(f, ", limit ");
			cprof_xml_fput(f, g->limit_text);
			fprintf(f, "</failure>\n");
		}
		fprintf(f, "      <system-out>");
		cprof_xml_fput(f, g->detail);
		fprintf(f, "</system-out>\n    </testcase>\n");
	}
	fprintf(f, "  </testsuite>\n</testsuites>\n");
}

const struct cprof_check_fmt cprof_check_junit = { "junit", write_junit };

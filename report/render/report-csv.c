/* cprof report as CSV: one table (the CUDA API unless --by names another), a row per name. */
#include <stdint.h>
#include <stdio.h>

#include "report/render/report-fmt.h"

void report_print_csv(const struct table *t, size_t top)
{
	size_t i;

	printf("time_pct,total_ns,calls,avg_ns,med_ns,min_ns,max_ns,std_ns,name\n");
	for (i = 0; i < report_shown(t, top); i++) {
		const struct cprof_stats *s = &t->rows[i].st;

		printf("%.2f,%.0f,%llu,%.1f,%.1f,%.0f,%.0f,%.1f,", t->total > 0 ? 100.0 * s->total / t->total : 0.0, s->total,
		       (unsigned long long)s->n, s->avg, s->med, s->min, s->max, s->std);
		cprof_csv_str(stdout, t->rows[i].name);
		putchar('\n');
	}
}

void cprof_ranges_csv(const struct cprof_range_table *t, size_t top)
{
	size_t i, n = REPORT_SHOWN(t, top);

	printf("type,count,cpu_ns,self_cpu_ns,min_ns,max_ns,calls,api_ns,gpu_ns,gpu_ops,path\n");
	for (i = 0; i < n; i++) {
		const struct cprof_range_row *r = &t->rows[i];

		printf("%s,%llu,%.0f,%.0f,%.0f,%.0f,%llu,%.0f,%.0f,%llu,", r->startend ? "startend" : "range",
		       (unsigned long long)r->count, r->cpu_ns, r->self_cpu_ns, r->min_ns, r->max_ns,
		       (unsigned long long)r->calls, r->api_ns, r->gpu_ns, (unsigned long long)r->gpu_ops);
		cprof_csv_str(stdout, r->path);
		putchar('\n');
	}
}

void cprof_attr_csv(const struct cprof_attr_table *t, enum cprof_attr_by by, size_t top)
{
	size_t i, n = REPORT_SHOWN(t, top);

	printf("calls,gpu_ops,self_cpu_ns,self_cuda_ns,cpu_total_ns,cuda_total_ns,%s\n",
	       by == CPROF_BY_OP ? "name" : "callsite");
	for (i = 0; i < n; i++) {
		const struct cprof_attr_row *r = &t->rows[i];

		printf("%llu,%llu,%.0f,%.0f,%.0f,%.0f,", (unsigned long long)r->calls, (unsigned long long)r->gpu_ops,
		       r->cpu_ns, r->gpu_ns, by == CPROF_BY_OP ? r->cpu_total_ns : r->cpu_ns,
		       by == CPROF_BY_OP ? r->gpu_total_ns : r->gpu_ns);
		cprof_csv_str(stdout, r->label);
		putchar('\n');
	}
}

void cprof_ops_csv(const struct cprof_op_table *t, size_t top)
{
	printf("name,calls,self_cpu_ns,cpu_total_ns,self_cuda_ns,cuda_total_ns,gpu_ops\n");
	for (size_t i = 0; i < REPORT_SHOWN(t, top); i++) {
		const struct cprof_op_row *r = &t->rows[i];

		cprof_csv_str(stdout, r->name);
		printf(",%llu,%.0f,%.0f,%.0f,%.0f,%llu\n", (unsigned long long)r->calls, r->self_cpu_ns, r->cpu_total_ns,
		       r->self_cuda_ns, r->cuda_total_ns, (unsigned long long)r->gpu_ops);
	}
}

/* one table: --by names it (the CUDA API by default); op rows from PyTorch's own ranges when it has them */
static void render_csv(const struct report_doc *d)
{
	const struct cprof_model_extra *x = d->model.x;
	size_t top = d->o->top_set ? d->o->top : 0;

	switch (d->o->by) {
	case REPORT_BY_RANGE:
		cprof_ranges_csv(&x->ranges, top);
		break;
	case REPORT_BY_OP:
		if (x->torch_ops.n)
			cprof_ops_csv(&x->torch_ops, top);
		else
			cprof_attr_csv(&x->ops, CPROF_BY_OP, top);
		break;
	case REPORT_BY_CALLSITE:
		cprof_attr_csv(&x->sites, CPROF_BY_CALLSITE, top);
		break;
	case REPORT_BY_KERNEL:
		report_print_csv(&d->kernels, top);
		break;
	default:
		report_print_csv(&d->apis, top);
	}
}

const struct report_fmt_ops report_fmt_csv = { .name = "csv", .one_table = 1, .render = render_csv };

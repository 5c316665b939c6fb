/* cprof html: the tables of cprof report (kernels, memory operations, CUDA API, Self CPU/CUDA), sortable. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define PR_FMT "cprof html"
#include "common/log.h"
#include "report/render/html.h"

struct load_ctx {
	struct html_table *t;
	int cupti;
	int demangle;
};

static int add_row(void *arg, int64_t key, const char *label, const struct cprof_stats *st)
{
	struct load_ctx *c = arg;
	struct html_table *t = c->t;
	struct html_row *r;

	(void)key;
	if (cprof_grow(&t->rows, &t->cap, t->n, sizeof(*t->rows)) < 0)
		return -ENOMEM;
	r = &t->rows[t->n];
	memset(r, 0, sizeof(*r));
	r->name = c->demangle ? cprof_demangle(label) : strdup(label);
	if (r->name == NULL)
		return -ENOMEM;
	r->cupti = c->cupti;
	r->st = *st;
	t->total += st->total;
	t->n++;
	return 0;
}

static int by_total_desc(const void *a, const void *b)
{
	const struct html_row *x = a, *y = b;

	if (x->st.total != y->st.total)
		return x->st.total < y->st.total ? 1 : -1;
	return strcmp(x->name, y->name);
}

static void sort_table(struct html_table *t)
{
	if (t->n)
		qsort(t->rows, t->n, sizeof(t->rows[0]), by_total_desc);
}

/* The same queries as cprof report, so both show the same numbers: hooked calls, then the calls only
 * CUPTI saw (inside libraries, or not hooked), each counted once. */
static int load_apis(struct html *h)
{
	int ret;

	struct load_ctx c = { &h->apis, 0, 0 }, cupti = { &h->apis, 1, 0 };

	if ((ret = cprof_model_call_stats(&h->model, 0, 0, add_row, &c) < 0 ? -EIO : 0) < 0 ||
	    (ret = cprof_model_cupti_only_stats(&h->model, 0, add_row, &cupti) < 0 ? -EIO : 0) < 0 ||
	    (ret = cprof_model_driver_only_stats(&h->model, 0, add_row, &cupti) < 0 ? -EIO : 0) < 0)
		return ret;
	sort_table(&h->apis);
	return 0;
}

static int add_memop(void *arg, const char *name, const struct cprof_stats *st, double bytes)
{
	struct load_ctx *c = arg;
	int ret;

	if ((ret = add_row(c, 0, name, st)) < 0)
		return ret;
	c->t->rows[c->t->n - 1].bytes = bytes;
	return 0;
}

/* the same loader as cprof report's, so both show the same numbers */
static int load_memops(struct html *h)
{
	struct load_ctx c = { &h->memops, 0, 0 };
	int ret;

	if ((ret = cprof_model_memop_stats(&h->model, 0, add_memop, &c)) < 0)
		return ret;
	sort_table(&h->memops);
	return 0;
}

static int set_launched(void *arg, const char *api, double ns)
{
	struct html_table *t = arg;
	size_t i;

	for (i = 0; i < t->n; i++)
		if (!strcmp(t->rows[i].name, api))
			t->rows[i].launched = ns;
	return 0;
}

/* torch.profiler's view: Self CPU of each outermost hooked call name, and the GPU time it queued */
static int load_torch(struct html *h)
{
	struct html_table *t = &h->torch;
	struct load_ctx c = { t, 0, 0 };

	if (cprof_model_call_stats(&h->model, 0, 1, add_row, &c) < 0 ||
	    cprof_model_launched_time(&h->model, 0, set_launched, t) < 0)
		return -EIO;
	sort_table(t);
	return 0;
}

int html_tables_load(struct html *h)
{
	int ret;

	struct load_ctx c = { &h->kernels, 0, 1 };

	if (cprof_model_kernel_stats(&h->model, 0, add_row, &c) < 0)
		return -EIO;
	sort_table(&h->kernels);
	if ((ret = load_memops(h)) < 0 || (ret = load_apis(h)) < 0 || (ret = load_torch(h)) < 0)
		return ret;
	h->nsteps = cprof_model_steps(&h->model, 0, h->v.step_re, &h->steps);
	return h->nsteps < 0 ? h->nsteps : 0;
}

static void table_free(struct html_table *t)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		free(t->rows[i].name);
	free(t->rows);
	memset(t, 0, sizeof(*t));
}

void html_tables_free(struct html *h)
{
	table_free(&h->kernels);
	table_free(&h->memops);
	table_free(&h->apis);
	table_free(&h->torch);
}

/* A cell that sorts by its number, shows it as a duration. */
static void dur_cell(FILE *f, double ns)
{
	char buf[32];

	cprof_fmt_dur(buf, sizeof(buf), ns);
	fprintf(f, "<td data-v=\"%.0f\">%s</td>", ns, buf);
}

/* A name shortened as cprof_shown_levels says (level 0: cprof_shorten; 1: its template arguments kept; 2: whole),
 * so that two rows of one table never read alike; the full name on hover */
static void name_cell_at(FILE *f, const char *full, int cupti, unsigned char level)
{
	char sh[1024];
	const char *shown = sh;

	if (level == 0)
		cprof_shorten(full, sh, 128); /* the cut the page always had */
	else if (level > 1 || cprof_shorten_targs(full, sh, sizeof(sh)) < 0)
		shown = full;
	fputs("<td class=\"name\" title=\"", f);
	html_text(f, full);
	fputs("\">", f);
	html_text(f, shown);
	if (cupti)
		fputs("<sup title=\"seen only by CUPTI: called inside a library or not hooked\">*</sup>", f);
	fputs("</td>", f);
}

static void name_cell(FILE *f, const char *full, int cupti)
{
	name_cell_at(f, full, cupti, 0);
}

/* cprof_shown_levels of the rows of up to three tables shown as one (the Self table: calls, kernels, copies and
 * memsets); all 0 (each cprof_shorten'd, as before) when out of memory; free() it */
static unsigned char *html_levels(const struct html_table *a, const struct html_table *b, const struct html_table *c)
{
	const struct html_table *t[3] = { a, b, c };
	size_t n = 0, k, i;
	const char **names;
	unsigned char *levels;

	for (k = 0; k < 3; k++)
		n += t[k] ? t[k]->n : 0;
	levels = calloc(n ? n : 1, 1);
	names = calloc(n ? n : 1, sizeof(*names));
	if (levels && names) {
		n = 0;
		for (k = 0; k < 3; k++)
			for (i = 0; t[k] && i < t[k]->n; i++)
				names[n++] = t[k]->rows[i].name;
		cprof_shown_levels(names, n, levels);
	}
	free(names);
	return levels;
}

static void stats_table(struct html *h, const char *id, const char *title, const struct html_table *t, int bytes)
{
	FILE *f = h->f;
	size_t i;
	int tagged = 0;
	unsigned char *levels;

	if (t->n == 0)
		return;
	levels = html_levels(t, NULL, NULL);
	fprintf(f, "<h3>%s</h3>\n<div class=\"tw\"><table class=\"sortable\" id=\"%s\"><thead><tr>", title, id);
	fputs("<th>Time (%)</th><th>Total</th><th>Instances</th><th>Avg</th><th>Med</th><th>Min</th><th>Max</th>"
	      "<th>StdDev</th>", f);
	if (bytes)
		fputs("<th>Total MB</th><th>GB/s</th>", f);
	fputs("<th class=\"name\">Name</th></tr></thead>\n<tbody>\n", f);
	for (i = 0; i < t->n; i++) {
		const struct cprof_stats *s = &t->rows[i].st;
		double pct = t->total > 0 ? 100.0 * s->total / t->total : 0.0;

		fprintf(f, "<tr><td data-v=\"%.4f\">%.1f</td>", pct, pct);
		dur_cell(f, s->total);
		fprintf(f, "<td data-v=\"%llu\">%llu</td>", (unsigned long long)s->n, (unsigned long long)s->n);
		dur_cell(f, s->avg);
		dur_cell(f, s->med);
		dur_cell(f, s->min);
		dur_cell(f, s->max);
		dur_cell(f, s->std);
		if (bytes) {
			double gbs = s->total > 0 ? t->rows[i].bytes / s->total : 0.0;

			fprintf(f, "<td data-v=\"%.0f\">%.3f</td><td data-v=\"%.4f\">%.1f</td>", t->rows[i].bytes,
				t->rows[i].bytes / 1e6, gbs, gbs);
		}
		name_cell_at(f, t->rows[i].name, t->rows[i].cupti, levels ? levels[i] : 0);
		fputs("</tr>\n", f);
		tagged |= t->rows[i].cupti;
	}
	free(levels);
	fputs("</tbody></table></div>\n", f);
	if (tagged)
		fputs("<p class=\"note\">* seen only by CUPTI: called inside a library (cuBLAS, cuDNN) or not hooked</p>\n", f);
}

/* the device queries counted and not timed, over the whole run (CPROF_API_COUNTS) */
static void counted_note(struct html *h)
{
	struct cprof_counted *c;
	int n = cprof_model_counted_calls(&h->model, 0, &c);

	if (n <= 0)
		return;
	fputs("<p class=\"note\">Counted, not timed (whole run; calls that make no GPU work: device queries, of which "
	      "CUPTI made no record, as under torch.profiler, and cuBLAS handle settings):", h->f);
	for (int i = 0; i < n; i++) {
		fputs(i ? ", " : " ", h->f);
		html_text(h->f, cprof_model_string(&h->model, c[i].name));
		fprintf(h->f, " %llu", (unsigned long long)c[i].calls);
	}
	fputs("</p>\n", h->f);
	free(c);
}

static void torch_table(struct html *h)
{
	FILE *f = h->f;
	double cpu = 0, cuda = 0;
	char a[32], b[32];
	size_t i;
	unsigned char *levels;

	if (h->torch.n == 0 && h->kernels.n == 0 && h->memops.n == 0)
		return;
	/* one table: a call's name and a kernel's never read alike either */
	levels = html_levels(&h->torch, &h->kernels, &h->memops);
	fputs("<h3>Self CPU and Self CUDA by name</h3>\n<p class=\"note\">As torch.profiler's table; CUDA launched is the "
	      "GPU time of the work a call queued.</p>\n<div class=\"tw\"><table class=\"sortable\" id=\"t-torch\"><thead><tr>"
	      "<th class=\"name\">Name</th><th>Self CPU</th><th>Self CUDA</th><th>CUDA launched</th><th># Calls</th>"
	      "</tr></thead>\n<tbody>\n", f);
	for (i = 0; i < h->torch.n; i++) {
		const struct html_row *r = &h->torch.rows[i];

		fputs("<tr>", f);
		name_cell_at(f, r->name, 0, levels ? levels[i] : 0);
		dur_cell(f, r->st.total);
		dur_cell(f, 0);
		dur_cell(f, r->launched);
		fprintf(f, "<td data-v=\"%llu\">%llu</td></tr>\n", (unsigned long long)r->st.n, (unsigned long long)r->st.n);
		cpu += r->st.total;
	}
	/* kernels, then copies and memsets: torch.profiler's table has its "Memcpy HtoD" and "Memset" rows */
	for (i = 0; i < h->kernels.n + h->memops.n; i++) {
		const struct html_row *r = i < h->kernels.n ? &h->kernels.rows[i] : &h->memops.rows[i - h->kernels.n];

		fputs("<tr>", f);
		name_cell_at(f, r->name, 0, levels ? levels[h->torch.n + i] : 0);
		dur_cell(f, 0);
		dur_cell(f, r->st.total);
		fputs("<td data-v=\"-1\">-</td>", f);
		fprintf(f, "<td data-v=\"%llu\">%llu</td></tr>\n", (unsigned long long)r->st.n, (unsigned long long)r->st.n);
		cuda += r->st.total;
	}
	free(levels);
	cprof_fmt_dur(a, sizeof(a), cpu);
	cprof_fmt_dur(b, sizeof(b), cuda);
	fprintf(f, "</tbody></table></div>\n<p class=\"note\">Self CPU time total: %s; Self CUDA time total: %s</p>\n", a, b);
}

/* The tables built from call stacks: ops (Self/Total), call sites, each kernel's chain. */
static void attr_table(struct html *h, const char *id, const char *title, const char *note,
		       const struct cprof_attr_table *t, enum cprof_attr_by by)
{
	FILE *f = h->f;
	size_t i;

	if (t->n == 0)
		return;
	fprintf(f, "<h3>%s</h3>\n<p class=\"note\">%s</p>\n<div class=\"tw\"><table class=\"sortable\" id=\"%s\"><thead><tr>"
		   "<th class=\"name\">%s</th>", title, note, id,
		by == CPROF_BY_OP ? "Op" : by == CPROF_BY_CALLSITE ? "Call site" : "Kernel");
	if (by == CPROF_BY_CHAIN)
		fputs("<th class=\"name\">Chain (outermost first)</th><th>GPU time</th><th>Launches</th>", f);
	else if (by == CPROF_BY_OP)
		fputs("<th>Self CPU</th><th>CPU total</th><th>Self CUDA</th><th>CUDA total</th><th># Calls</th>", f);
	else
		fputs("<th># Calls</th><th>Self CPU</th><th>Self CUDA</th><th>GPU ops</th>", f);
	fputs("</tr></thead>\n<tbody>\n", f);
	for (i = 0; i < t->n; i++) {
		const struct cprof_attr_row *r = &t->rows[i];

		fputs("<tr>", f);
		name_cell(f, r->label, 0);
		if (by == CPROF_BY_CHAIN) {
			fputs("<td class=\"name\">", f);
			html_text(f, r->detail ? r->detail : "");
			fputs("</td>", f);
			dur_cell(f, r->gpu_ns);
			fprintf(f, "<td data-v=\"%llu\">%llu</td>", (unsigned long long)r->gpu_ops, (unsigned long long)r->gpu_ops);
		} else if (by == CPROF_BY_OP) {
			dur_cell(f, r->cpu_ns);
			dur_cell(f, r->cpu_total_ns);
			dur_cell(f, r->gpu_ns);
			dur_cell(f, r->gpu_total_ns);
			fprintf(f, "<td data-v=\"%llu\">%llu</td>", (unsigned long long)r->calls, (unsigned long long)r->calls);
		} else {
			fprintf(f, "<td data-v=\"%llu\">%llu</td>", (unsigned long long)r->calls, (unsigned long long)r->calls);
			dur_cell(f, r->cpu_ns);
			dur_cell(f, r->gpu_ns);
			fprintf(f, "<td data-v=\"%llu\">%llu</td>", (unsigned long long)r->gpu_ops, (unsigned long long)r->gpu_ops);
		}
		fputs("</tr>\n", f);
	}
	fputs("</tbody></table></div>\n", f);
}

static void ranges_table(struct html *h)
{
	FILE *f = h->f;
	size_t i;

	if (h->model.x->ranges.n == 0)
		return;
	fputs("<h3>NVTX ranges</h3>\n<p class=\"note\">Nesting joined with /; CPU = time inside the ranges, Self = minus "
	      "their child ranges; Calls = hooked CUDA calls that started inside them on their thread; GPU = the work "
	      "those calls launched.</p>\n<div class=\"tw\"><table class=\"sortable\" id=\"t-ranges\"><thead><tr>"
	      "<th class=\"name\">Range</th><th>Count</th><th>CPU total</th><th>Self CPU</th><th>Min</th><th>Max</th>"
	      "<th>Calls</th><th>API time</th><th>GPU time</th><th>GPU ops</th></tr></thead>\n<tbody>\n", f);
	for (i = 0; i < h->model.x->ranges.n; i++) {
		const struct cprof_range_row *r = &h->model.x->ranges.rows[i];

		fputs("<tr>", f);
		name_cell(f, r->path, 0);
		fprintf(f, "<td data-v=\"%llu\">%llu</td>", (unsigned long long)r->count, (unsigned long long)r->count);
		dur_cell(f, r->cpu_ns);
		dur_cell(f, r->self_cpu_ns);
		dur_cell(f, r->min_ns);
		dur_cell(f, r->max_ns);
		fprintf(f, "<td data-v=\"%llu\">%llu</td>", (unsigned long long)r->calls, (unsigned long long)r->calls);
		dur_cell(f, r->api_ns);
		dur_cell(f, r->gpu_ns);
		fprintf(f, "<td data-v=\"%llu\">%llu</td></tr>\n", (unsigned long long)r->gpu_ops,
			(unsigned long long)r->gpu_ops);
	}
	fputs("</tbody></table></div>\n", f);
}

static void steps_table(struct html *h)
{
	FILE *f = h->f;
	int i, cold;

	if (h->nsteps < 2)
		return;
	cold = cprof_steps_cold(h->steps, h->nsteps);
	fprintf(f, "<h3>Steps</h3>\n<p class=\"note\">%d NVTX ranges matching <code>", h->nsteps);
	html_text(f, h->v.step_re ? h->v.step_re : cprof_step_re_default);
	fprintf(f, "</code>%s</p>\n<div class=\"tw\"><table class=\"sortable\" id=\"t-steps\"><thead><tr><th>Step</th>"
		   "<th class=\"name\">Range</th><th>Time</th></tr></thead>\n<tbody>\n",
		cold ? "; the first one is a cold start, kept out of the verdict" : "");
	for (i = 0; i < h->nsteps; i++) {
		fprintf(f, "<tr><td data-v=\"%d\">%d%s</td>", i + 1, i + 1, i == 0 && cold ? " (cold)" : "");
		name_cell(f, h->steps[i].name, 0);
		dur_cell(f, (double)(h->steps[i].end - h->steps[i].start));
		fputs("</tr>\n", f);
	}
	fputs("</tbody></table></div>\n", f);
}

void html_tables_write(struct html *h)
{
	char d[32];

	/* each table's window (issue 29 item 6): the whole run, as cprof report's default */
	cprof_fmt_dur(d, sizeof(d), (double)(h->v.end - h->v.start));
	fprintf(h->f, "<section id=\"tables\"><h2>Tables</h2>\n<p class=\"note\">As <code>cprof report</code> prints them, "
		"over the <b>whole run</b> (start-up and warm-up included; the verdict's window is %s: "
		"<code>cprof report --window verdict</code> gives its tables); click a column heading to sort.</p>\n", d);
	stats_table(h, "t-kernels", "GPU kernels", &h->kernels, 0);
	stats_table(h, "t-memops", "GPU memory operations", &h->memops, 1);
	stats_table(h, "t-apis", "CUDA API", &h->apis, 0);
	counted_note(h);
	if (h->model.queries_sampled)
		fputs("<p class=\"note\">" CPROF_QUERIES_SAMPLED_NOTE "</p>\n", h->f);
	torch_table(h);
	steps_table(h);
	ranges_table(h);
	attr_table(h, "t-chains", "Where the kernels were launched from",
		   "The ATen dispatch chain on the stack of the call that launched each kernel.", &h->model.x->chains, CPROF_BY_CHAIN);
	attr_table(h, "t-ops", "By operator",
		   "ATen ops on the stacks of the CUDA calls: Self = the op innermost, Total = anywhere on the chain; "
		   "CPU = time inside those CUDA calls, CUDA = GPU time of the work they launched.", &h->model.x->ops, CPROF_BY_OP);
	attr_table(h, "t-callsites", "By call site",
		   "The innermost frame outside libraries: the Python line, or the native caller on a thread without Python frames (such as PyTorch's autograd thread).", &h->model.x->sites,
		   CPROF_BY_CALLSITE);
	if (h->kernels.n == 0 && h->memops.n == 0 && h->apis.n == 0)
		fputs("<p>No CUDA call or GPU operation was recorded.</p>\n", h->f);
	fputs("</section>\n", h->f);
}

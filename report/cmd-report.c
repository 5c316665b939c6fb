/* cprof report: the API summary (as nsys stats cuda_api_sum) per process, as text, JSON or CSV. */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#define PR_FMT "cprof report"
#include "common/log.h"
#include "report/cprof.h"

enum fmt { FMT_TEXT, FMT_JSON, FMT_CSV };
enum by { BY_API, BY_PROCESS };

struct row {
	char *name;
	struct cprof_stats st;
};

struct table {
	struct row *rows;
	size_t n, cap;
	double total;
};

struct proc {
	int64_t id;
	int64_t pid, ppid, rank;
	char *exe, *argv, *host, *bye;
	int64_t recorded, lost;
	struct table apis;
};

static int add_row(void *ctx, int64_t key, const char *label, const struct cprof_stats *st)
{
	struct table *t = ctx;

	(void)key;
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 32;
		struct row *r = realloc(t->rows, cap * sizeof(*r));

		if (r == NULL)
			return -1;
		t->rows = r;
		t->cap = cap;
	}
	t->rows[t->n].name = strdup(label);
	t->rows[t->n].st = *st;
	t->total += st->total;
	t->n++;
	return 0;
}

static int by_total_desc(const void *a, const void *b)
{
	const struct row *x = a, *y = b;

	if (x->st.total != y->st.total)
		return x->st.total < y->st.total ? 1 : -1;
	return strcmp(x->name, y->name);
}

static void table_free(struct table *t)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		free(t->rows[i].name);
	free(t->rows);
	memset(t, 0, sizeof(*t));
}

static const char api_sql_all[] =
	"SELECT a.nameId, s.value, a.end - a.start AS d FROM CPROF_API a JOIN StringIds s ON s.id = a.nameId"
	" ORDER BY a.nameId, d";
static const char api_sql_proc[] =
	"SELECT a.nameId, s.value, a.end - a.start AS d FROM CPROF_API a JOIN StringIds s ON s.id = a.nameId"
	" WHERE a.processId = ? ORDER BY a.nameId, d";

static int load_table(sqlite3 *db, const char *sql, int64_t proc, struct table *t)
{
	if (cprof_group_stats(db, sql, proc, add_row, t) < 0)
		return -1;
	if (t->n)
		qsort(t->rows, t->n, sizeof(t->rows[0]), by_total_desc);
	return 0;
}

static char *col_text(sqlite3_stmt *st, int i)
{
	const unsigned char *t = sqlite3_column_text(st, i);

	return strdup(t ? (const char *)t : "");
}

static int load_procs(sqlite3 *db, struct proc **out, size_t *n)
{
	sqlite3_stmt *st;
	struct proc *p = NULL;
	size_t cnt = 0;

	if (sqlite3_prepare_v2(db, "SELECT id, pid, ppid, coalesce(rank, -1), exe, argv, host,"
				   " coalesce(byeReason, ''), coalesce(eventsRecorded, 0), coalesce(lostEvents, 0)"
				   " FROM PROCESSES ORDER BY id", -1, &st, NULL) != SQLITE_OK)
		return -1;
	while (sqlite3_step(st) == SQLITE_ROW) {
		struct proc *np = realloc(p, (cnt + 1) * sizeof(*p));

		if (np == NULL)
			break;
		p = np;
		memset(&p[cnt], 0, sizeof(p[cnt]));
		p[cnt].id = sqlite3_column_int64(st, 0);
		p[cnt].pid = sqlite3_column_int64(st, 1);
		p[cnt].ppid = sqlite3_column_int64(st, 2);
		p[cnt].rank = sqlite3_column_int64(st, 3);
		p[cnt].exe = col_text(st, 4);
		p[cnt].argv = col_text(st, 5);
		p[cnt].host = col_text(st, 6);
		p[cnt].bye = col_text(st, 7);
		p[cnt].recorded = sqlite3_column_int64(st, 8);
		p[cnt].lost = sqlite3_column_int64(st, 9);
		cnt++;
	}
	sqlite3_finalize(st);
	*out = p;
	*n = cnt;
	return 0;
}

static int64_t count_sql(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *st;
	int64_t v = 0;

	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		return 0;
	if (sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}

static void print_text_table(const struct table *t, size_t top)
{
	double maxv = 0;
	enum cprof_unit u;
	size_t i, n = top && top < t->n ? top : t->n;
	char tot[32], avg[32], med[32], mn[32], mx[32], sd[32];

	for (i = 0; i < n; i++)
		if (t->rows[i].st.total > maxv)
			maxv = t->rows[i].st.total;
	u = cprof_unit_for(maxv);
	/* one unit for the whole table, as nsys stats does, chosen so the biggest value stays readable */
	printf(" Time (%%)  Total (%s)  Num Calls   Avg (%s)   Med (%s)   Min (%s)   Max (%s)  StdDev (%s)  Name\n",
	       cprof_unit_name(u), cprof_unit_name(u), cprof_unit_name(u), cprof_unit_name(u), cprof_unit_name(u),
	       cprof_unit_name(u));
	printf(" --------  ----------  ---------  ---------  ---------  ---------  ---------  -----------  ----\n");
	for (i = 0; i < n; i++) {
		const struct cprof_stats *s = &t->rows[i].st;

		cprof_fmt_in(tot, sizeof(tot), s->total, u);
		cprof_fmt_in(avg, sizeof(avg), s->avg, u);
		cprof_fmt_in(med, sizeof(med), s->med, u);
		cprof_fmt_in(mn, sizeof(mn), s->min, u);
		cprof_fmt_in(mx, sizeof(mx), s->max, u);
		cprof_fmt_in(sd, sizeof(sd), s->std, u);
		printf(" %8.1f  %10s  %9llu  %9s  %9s  %9s  %9s  %11s  %.60s\n",
		       t->total > 0 ? 100.0 * s->total / t->total : 0.0, tot, (unsigned long long)s->n, avg, med, mn,
		       mx, sd, t->rows[i].name);
	}
	if (n < t->n)
		printf(" (%zu more; --top 0 shows all)\n", t->n - n);
}

static void print_json_apis(const struct table *t, size_t top)
{
	size_t i, n = top && top < t->n ? top : t->n;

	printf("[");
	for (i = 0; i < n; i++) {
		const struct cprof_stats *s = &t->rows[i].st;

		printf("%s{\"name\":", i ? "," : "");
		cprof_json_str(stdout, t->rows[i].name);
		printf(",\"calls\":%llu,\"total_ns\":%.0f,\"avg_ns\":%.1f,\"med_ns\":%.1f,\"min_ns\":%.0f,"
		       "\"max_ns\":%.0f,\"std_ns\":%.1f,\"time_pct\":%.2f}",
		       (unsigned long long)s->n, s->total, s->avg, s->med, s->min, s->max, s->std,
		       t->total > 0 ? 100.0 * s->total / t->total : 0.0);
	}
	printf("]");
}

static void print_csv(const struct table *t, size_t top, int64_t pid)
{
	size_t i, n = top && top < t->n ? top : t->n;

	for (i = 0; i < n; i++) {
		const struct cprof_stats *s = &t->rows[i].st;

		printf("%lld,%.2f,%.0f,%llu,%.1f,%.1f,%.0f,%.0f,%.1f,", (long long)pid,
		       t->total > 0 ? 100.0 * s->total / t->total : 0.0, s->total, (unsigned long long)s->n, s->avg,
		       s->med, s->min, s->max, s->std);
		cprof_csv_str(stdout, t->rows[i].name);
		putchar('\n');
	}
}

static void usage(FILE *f)
{
	fprintf(f, "usage: cprof report PROFILE.db [--format text|json|csv] [--top N] [--by api|process]\n");
}

int cmd_report(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "format", required_argument, NULL, 'f' }, { "top", required_argument, NULL, 't' },
		{ "by", required_argument, NULL, 'b' },     { "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	enum fmt fmt = FMT_TEXT;
	enum by by = BY_API;
	size_t top = 0, nprocs = 0, i;
	struct proc *procs = NULL;
	struct table all = { 0 };
	sqlite3 *db;
	int opt, ret = CPROF_EXIT_OK, complete;
	int64_t lost, api_calls;
	char reason[256], command[1024], simulated[16], gpu_note[256];
	char *end;

	while ((opt = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (opt) {
		case 'f':
			if (!strcmp(optarg, "text"))
				fmt = FMT_TEXT;
			else if (!strcmp(optarg, "json"))
				fmt = FMT_JSON;
			else if (!strcmp(optarg, "csv"))
				fmt = FMT_CSV;
			else {
				pr_err("unknown --format '%s' (text, json or csv)", optarg);
				return CPROF_EXIT_USAGE;
			}
			break;
		case 't':
			top = strtoul(optarg, &end, 10);
			if (*optarg == '\0' || *end != '\0') {
				pr_err("--top wants a number, got '%s'", optarg);
				return CPROF_EXIT_USAGE;
			}
			break;
		case 'b':
			if (!strcmp(optarg, "api"))
				by = BY_API;
			else if (!strcmp(optarg, "process"))
				by = BY_PROCESS;
			else {
				pr_err("--by %s is not available in this version (api or process)", optarg);
				return CPROF_EXIT_USAGE;
			}
			break;
		case 'h':
			usage(stdout);
			return CPROF_EXIT_OK;
		default:
			usage(stderr);
			return CPROF_EXIT_USAGE;
		}
	}
	if (optind != argc - 1) {
		usage(stderr);
		return CPROF_EXIT_USAGE;
	}
	db = cprof_profile_open(argv[optind]);
	if (db == NULL)
		return CPROF_EXIT_USAGE;
	complete = cprof_meta_int(db, "complete", 0) == 1;
	lost = cprof_meta_int(db, "lost_events", 0);
	cprof_meta(db, "incomplete_reason", reason, sizeof(reason), "");
	cprof_meta(db, "command", command, sizeof(command), "?");
	cprof_meta(db, "simulated_gpu", simulated, sizeof(simulated), "0");
	cprof_meta(db, "gpu_records_note", gpu_note, sizeof(gpu_note), "");
	api_calls = count_sql(db, "SELECT count(*) FROM CPROF_API");
	if (load_procs(db, &procs, &nprocs) < 0 || load_table(db, api_sql_all, 0, &all) < 0) {
		pr_err("%s: cannot read the profile: %s", argv[optind], sqlite3_errmsg(db));
		ret = CPROF_EXIT_USAGE;
		goto out;
	}
	for (i = 0; i < nprocs; i++)
		if (load_table(db, api_sql_proc, procs[i].id, &procs[i].apis) < 0) {
			ret = CPROF_EXIT_USAGE;
			goto out;
		}

	if (fmt == FMT_JSON) {
		printf("{\"schema\":\"cprof.summary/1\",\"profile\":");
		cprof_json_str(stdout, argv[optind]);
		printf(",\"command\":");
		cprof_json_str(stdout, command);
		printf(",\"simulated_gpu\":%s", strcmp(simulated, "1") == 0 ? "true" : "false");
		if (gpu_note[0]) {
			printf(",\"gpu_records_note\":");
			cprof_json_str(stdout, gpu_note);
		}
		printf(",\"cpu_api_ns\":%.0f", all.total);
		printf(",\"counts\":{\"api_calls\":%lld,\"launch_calls\":%lld,\"memcpy_calls\":%lld,"
		       "\"memset_calls\":%lld,\"processes\":%zu}",
		       (long long)api_calls, (long long)count_sql(db, "SELECT count(*) FROM CPROF_API WHERE class='launch'"),
		       (long long)count_sql(db, "SELECT count(*) FROM CPROF_API WHERE class='memcpy'"),
		       (long long)count_sql(db, "SELECT count(*) FROM CPROF_API WHERE class='memset'"), nprocs);
		printf(",\"lost_events\":%lld,\"complete\":%s,\"incomplete_reason\":", (long long)lost,
		       complete ? "true" : "false");
		cprof_json_str(stdout, complete ? "" : reason);
		printf(",\"apis\":");
		print_json_apis(&all, top);
		printf(",\"processes\":[");
		for (i = 0; i < nprocs; i++) {
			printf("%s{\"pid\":%lld,\"ppid\":%lld,\"exe\":", i ? "," : "", (long long)procs[i].pid,
			       (long long)procs[i].ppid);
			cprof_json_str(stdout, procs[i].exe);
			printf(",\"argv\":");
			cprof_json_str(stdout, procs[i].argv);
			printf(",\"host\":");
			cprof_json_str(stdout, procs[i].host);
			if (procs[i].rank >= 0)
				printf(",\"rank\":%lld", (long long)procs[i].rank);
			printf(",\"events\":%lld,\"lost_events\":%lld,\"cpu_api_ns\":%.0f,\"apis\":",
			       (long long)procs[i].recorded, (long long)procs[i].lost, procs[i].apis.total);
			print_json_apis(&procs[i].apis, top);
			printf("}");
		}
		printf("]}\n");
	} else if (fmt == FMT_CSV) {
		printf("pid,time_pct,total_ns,calls,avg_ns,med_ns,min_ns,max_ns,std_ns,name\n");
		if (nprocs != 1)
			print_csv(&all, top, -1); /* pid -1: all processes together */
		for (i = 0; i < nprocs; i++)
			print_csv(&procs[i].apis, top, procs[i].pid);
	} else {
		char dur[32];

		cprof_fmt_dur(dur, sizeof(dur), all.total);
		printf("cprof report: %s\n", argv[optind]);
		printf("Command: %s\n", command);
		if (strcmp(simulated, "1") == 0)
			printf("GPU: simulated GPU (tests/simgpu) - timings are modelled, not measured\n");
		if (gpu_note[0])
			printf("GPU records: %s\n", gpu_note);
		printf("Processes: %zu   API calls: %lld   time in CUDA API: %s   lost events: %lld   %s%s%s\n",
		       nprocs, (long long)api_calls, dur, (long long)lost, complete ? "complete" : "INCOMPLETE",
		       complete ? "" : " - ", complete ? "" : reason);
		if (by == BY_PROCESS) {
			printf("\n     PID     PPID  Rank  API calls    API time  Lost  End     Command\n");
			printf(" -------  -------  ----  ---------  ----------  ----  ------  -------\n");
			for (i = 0; i < nprocs; i++) {
				char r[24] = "-";

				if (procs[i].rank >= 0)
					snprintf(r, sizeof(r), "%lld", (long long)procs[i].rank);
				cprof_fmt_dur(dur, sizeof(dur), procs[i].apis.total);
				printf(" %7lld  %7lld  %4s  %9lld  %10s  %4lld  %-6s  %.60s\n", (long long)procs[i].pid,
				       (long long)procs[i].ppid, r, (long long)procs[i].recorded, dur,
				       (long long)procs[i].lost, procs[i].bye[0] ? procs[i].bye : "killed",
				       procs[i].argv[0] ? procs[i].argv : procs[i].exe);
			}
			goto out;
		}
		if (by == BY_API && nprocs != 1) {
			printf("\nCUDA API summary, all processes\n\n");
			print_text_table(&all, top);
		}
		for (i = 0; i < nprocs; i++) {
			printf("\nCUDA API summary, process %lld (parent %lld)%s", (long long)procs[i].pid,
			       (long long)procs[i].ppid, procs[i].rank >= 0 ? "" : "");
			if (procs[i].rank >= 0)
				printf(" rank %lld", (long long)procs[i].rank);
			printf(": %.100s\n", procs[i].argv[0] ? procs[i].argv : procs[i].exe);
			if (procs[i].apis.n == 0)
				printf(" (no CUDA API calls)\n");
			else {
				putchar('\n');
				print_text_table(&procs[i].apis, top);
			}
		}
		if (nprocs == 0)
			printf("\nNo process made a CUDA call under cprof.\n");
	}
out:
	for (i = 0; i < nprocs; i++) {
		free(procs[i].exe);
		free(procs[i].argv);
		free(procs[i].host);
		free(procs[i].bye);
		table_free(&procs[i].apis);
	}
	free(procs);
	table_free(&all);
	sqlite3_close(db);
	return ret;
}

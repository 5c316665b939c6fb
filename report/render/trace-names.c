/* Names and ids in the trace: API names as Kineto writes them, demangled kernels, pids, flow ids, CUPTI thread ids. */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#define PR_FMT "cprof trace"
#include "common/log.h"
#include "report/render/trace.h"

/* Names compare equal when they are the same API: "__cudaLaunchKernel" is cudaLaunchKernel, CUPTI's
 * "cudaMemcpyAsync_ptsz_v7000" is cudaMemcpyAsync. */
static void api_key(const char *in, char *out, size_t size)
{
	size_t n, o = 0;
	const char *p;

	while (*in == '_')
		in++;
	n = strlen(in);
	p = strrchr(in, '_');
	if (p && p[1] == 'v' && p[2] >= '0' && p[2] <= '9' && strspn(p + 2, "0123456789") == strlen(p + 2))
		n = (size_t)(p - in);
	for (p = in; p < in + n && o + 1 < size; p++) {
		if (!strncmp(p, "_ptsz", 5) || !strncmp(p, "_ptds", 5)) {
			p += 4;
			continue;
		}
		out[o++] = *p;
	}
	out[o] = '\0';
}

int trace_same_api(const char *a, const char *b)
{
	char ka[128], kb[128];

	api_key(a, ka, sizeof(ka));
	api_key(b, kb, sizeof(kb));
	return strcmp(ka, kb) == 0;
}

/* CUPTI's runtime names carry the API version ("cudaLaunchKernel_v7000"); Kineto prints them without it. */
void trace_display_api_name(const char *in, char *out, size_t size)
{
	const char *p = strrchr(in, '_');

	snprintf(out, size, "%s", in);
	if (p && p[1] == 'v' && strlen(p + 2) >= 4 && strspn(p + 2, "0123456789") == strlen(p + 2) &&
	    (size_t)(p - in) < size)
		out[p - in] = '\0';
}

/* A kernel name is written twice per kernel (its event and its launch's argument): one of 100 KB times 5,000
 * kernels made a 523 MB trace. Longer names are cut, at a character boundary, and say how long they were. */
#define TRACE_NAME_MAX 1024

static char *cap_name(char *text)
{
	size_t len = strlen(text), cut = TRACE_NAME_MAX;
	char *n;

	if (len <= TRACE_NAME_MAX)
		return text;
	while (cut > 0 && ((unsigned char)text[cut] & 0xc0) == 0x80)
		cut--;
	n = malloc(cut + 48);
	if (n != NULL)
		snprintf(n, cut + 48, "%.*s... (%zu bytes)", (int)cut, text, len);
	free(text);
	return n;
}

/* Kineto demangles kernel names (libstdc++'s __cxa_demangle); one demangling per distinct name, not per event. */
const char *trace_kernel_name(struct trace *t, int64_t name_id, const char *mangled)
{
	size_t lo = 0, hi = t->ndm, i;
	char *text;

	if (name_id < 0 || (strncmp(mangled, "_Z", 2) != 0 && strnlen(mangled, TRACE_NAME_MAX + 1) <= TRACE_NAME_MAX))
		return mangled;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (t->dm[mid].name_id == name_id)
			return t->dm[mid].text;
		if (t->dm[mid].name_id < name_id)
			lo = mid + 1;
		else
			hi = mid;
	}
	text = strncmp(mangled, "_Z", 2) == 0 ? cprof_demangle(mangled) : NULL;
	if (text == NULL && strnlen(mangled, TRACE_NAME_MAX + 1) > TRACE_NAME_MAX)
		text = strdup(mangled);
	if (text == NULL || (text = cap_name(text)) == NULL)
		return mangled;
	if (t->ndm == t->capdm) {
		size_t cap = t->capdm ? t->capdm * 2 : 64;
		struct demangled *n = realloc(t->dm, cap * sizeof(*n));

		if (n == NULL) {
			free(text);
			return mangled;
		}
		t->dm = n;
		t->capdm = cap;
	}
	/* kept sorted by id: one entry per distinct kernel name, not per event */
	for (i = t->ndm; i > lo; i--)
		t->dm[i] = t->dm[i - 1];
	t->dm[lo].name_id = name_id;
	t->dm[lo].text = text;
	t->ndm++;
	return text;
}

int64_t trace_proc_pid(const struct trace *t, int64_t process_id)
{
	size_t lo = 0, hi = t->nprocs;

	/* loaded ORDER BY id */
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (t->procs[mid].id == process_id)
			return t->procs[mid].pid;
		if (t->procs[mid].id < process_id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return 0;
}

/* CUPTI correlation ids count from 1 in every process: when a profile holds several, the process's row id
 * in the high bits keeps flow ids and HTA's correlation join from pairing one process's launch with
 * another's kernel. */
int64_t trace_corr_id(const struct trace *t, int64_t process_id, int64_t corr)
{
	return t->nprocs > 1 ? (int64_t)((uint64_t)process_id << 32 | (uint32_t)corr) : corr;
}

/* Kineto's fallback for a CUPTI thread it cannot name: the handle truncated to int32, made positive. */
int64_t trace_cupti_tid(const struct trace *t, int64_t process_id, int64_t thread_id)
{
	int32_t v = (int32_t)(uint32_t)thread_id;
	int64_t tid;

	if (cprof_model_tid(&t->src.m, process_id, thread_id, &tid))
		return tid;
	return v == INT32_MIN ? 0 : v < 0 ? -(int64_t)v : v;
}

/* the processes (this rank's only), from the trace's model part */
int trace_load_procs(struct trace *t)
{
	size_t i;

	t->procs = calloc(t->src.m.nprocs ? t->src.m.nprocs : 1, sizeof(*t->procs));
	if (t->procs == NULL)
		return -ENOMEM;
	for (i = 0; i < t->src.m.nprocs; i++) {
		t->procs[i].id = t->src.m.procs[i].id;
		t->procs[i].pid = t->src.m.procs[i].pid;
	}
	t->nprocs = t->src.m.nprocs;
	return 0;
}

/* Test probe for preload/python.c alone: a shared object Python loads with ctypes, or (-DPROBE_MAIN) a program without Python. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/wire.h"
#include "preload/cprof.h"
#include "preload/python.h"

#define PROBE_API __attribute__((visibility("default")))

/* ---- stand-ins for what libcprof.so provides to python.c ---- */

_Atomic uint32_t cprof_generation = 1;

#define NSTR 4096
static struct {
	uint16_t kind;
	char *text;
} strs[NSTR];
static uint32_t nstrs;
static unsigned long interns;
static pthread_mutex_t strs_lock = PTHREAD_MUTEX_INITIALIZER;

/* ids from 1, one per (kind, text), so the probe can print text back */
uint32_t cprof_intern(uint16_t kind, const char *s, size_t len)
{
	uint32_t i, id = 0;

	pthread_mutex_lock(&strs_lock);
	interns++;
	for (i = 0; i < nstrs; i++) {
		if (strs[i].kind == kind && strlen(strs[i].text) == len && memcmp(strs[i].text, s, len) == 0) {
			id = i + 1;
			break;
		}
	}
	if (id == 0 && nstrs < NSTR && (strs[nstrs].text = strndup(s, len)) != NULL) {
		strs[nstrs].kind = kind;
		id = ++nstrs;
	}
	pthread_mutex_unlock(&strs_lock);
	return id;
}

static const char *str_of(uint32_t id, uint16_t kind)
{
	if (id == 0 || id > nstrs)
		return "<no id>";
	return strs[id - 1].kind == kind ? strs[id - 1].text : "<wrong kind>";
}

/* ---- what the tests call ---- */

static int probe_max_frames = CPROF_STACK_MAX_PY;

PROBE_API void probe_set_max(int max)
{
	probe_max_frames = max;
}

PROBE_API int probe_available(void)
{
	return cprof_py_available();
}

PROBE_API uint64_t probe_site(void)
{
	return cprof_py_site();
}

PROBE_API unsigned long probe_interns(void)
{
	return interns;
}

PROBE_API void probe_skew_layout(void)
{
	cprof_py_test_skew_layout();
}

/* what a fork does to the strings: the child must queue them again */
PROBE_API void probe_fork_gen(void)
{
	atomic_fetch_add(&cprof_generation, 1);
	cprof_py_reset_after_fork();
}

/* Captures and writes "file:line func" lines into buf; returns the frame count. */
PROBE_API int probe(char *buf, int len)
{
	static struct cprof_wire_frame f[1024];
	int n, i, o = 0, max = probe_max_frames > 1024 ? 1024 : probe_max_frames;

	n = cprof_py_capture(f, max);
	buf[0] = '\0';
	for (i = 0; i < n && o < len; i++)
		o += snprintf(buf + o, len - o, "%s:%llu %s\n", str_of(f[i].module, CPROF_STR_PYFILE),
			      (unsigned long long)f[i].off, str_of(f[i].func, CPROF_STR_PYFUNC));
	return n;
}

/* probe() while the program has an exception pending (a C hook can run inside a destructor during
 * unwinding); leaves it pending, so ctypes raises it. buf gets the frames then "site=1|0". */
PROBE_API int probe_pending(char *buf, int len)
{
	void (*set_string)(void *type, const char *msg) = (void (*)(void *, const char *))dlsym(RTLD_DEFAULT, "PyErr_SetString");
	void *(*occurred)(void) = (void *(*)(void))dlsym(RTLD_DEFAULT, "PyErr_Occurred");
	void **value_error = dlsym(RTLD_DEFAULT, "PyExc_ValueError");
	uint64_t site;
	int n, o;

	if (!set_string || !occurred || !value_error)
		return -1;
	set_string(*value_error, "pending marker");
	site = cprof_py_site();
	n = probe(buf, len);
	o = strlen(buf);
	snprintf(buf + o, len - o, "site=%d\n", site != 0);
	return occurred() == *value_error ? n : -2;
}

static void *cthread(void *arg)
{
	struct cprof_wire_frame f[8];

	*(int *)arg = cprof_py_capture(f, 8) + (cprof_py_site() != 0) * 1000;
	return NULL;
}

/* From a thread Python never saw, while the caller may hold the GIL: must read nothing. */
PROBE_API int probe_cthread(void)
{
	pthread_t t;
	int r = -1;

	if (pthread_create(&t, NULL, cthread, &r) != 0)
		return -1;
	pthread_join(t, NULL);
	return r;
}

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* Mean cost of cprof_py_site and (cached) cprof_py_capture from the caller's stack; frames in *depth. */
PROBE_API int probe_bench(int iters, double *site_ns, double *capture_ns, int *depth)
{
	struct cprof_wire_frame f[CPROF_STACK_MAX_PY];
	volatile uint64_t sink = 0;
	double t0;
	int i;

	*depth = cprof_py_capture(f, CPROF_STACK_MAX_PY);
	t0 = now_ns();
	for (i = 0; i < iters; i++)
		sink += cprof_py_site();
	*site_ns = (now_ns() - t0) / iters;
	t0 = now_ns();
	for (i = 0; i < iters; i++)
		sink += cprof_py_capture(f, CPROF_STACK_MAX_PY);
	*capture_ns = (now_ns() - t0) / iters;
	return sink != 0;
}

#ifdef PROBE_MAIN
/* No Python in this process: everything says so, nothing crashes. */
int main(void)
{
	struct cprof_wire_frame f[4];
	int i;

	for (i = 0; i < 3; i++) {
		if (cprof_py_available() || cprof_py_site() != 0 || cprof_py_capture(f, 4) != 0) {
			printf("no python: FAIL\n");
			return 1;
		}
	}
	printf("no python: ok\n");
	return 0;
}
#endif

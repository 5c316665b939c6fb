/* Writes the trace's JSON: one event per line, numbers formatted by hand (the hot loop). */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#define PR_FMT "cprof trace"
#include "common/log.h"
#include "common/textsafe.h"
#include "report/render/trace.h"

/* ---- output primitives: one event per line, numbers formatted by hand because this is the hot loop ---- */

void trace_put(struct trace *t, const char *s)
{
	fputs_unlocked(s, t->f);
}

static void put_u(struct trace *t, uint64_t v)
{
	char buf[24], *p = buf + sizeof(buf);

	do {
		*--p = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	fwrite_unlocked(p, 1, (size_t)(buf + sizeof(buf) - p), t->f);
}

void trace_put_i(struct trace *t, int64_t v)
{
	if (v < 0) {
		fputc_unlocked('-', t->f);
		put_u(t, (uint64_t)0 - (uint64_t)v);
	} else {
		put_u(t, (uint64_t)v);
	}
}

/* Microseconds with exactly three decimals, as Kineto prints them ("{}.{:03}"), never negative. */
static void put_us(struct trace *t, int64_t ns)
{
	char frac[5];

	if (ns < 0)
		ns = 0;
	put_u(t, (uint64_t)ns / 1000);
	frac[0] = '.';
	frac[1] = (char)('0' + ns % 1000 / 100);
	frac[2] = (char)('0' + ns % 100 / 10);
	frac[3] = (char)('0' + ns % 10);
	frac[4] = '\0';
	fwrite_unlocked(frac, 1, 4, t->f);
}

void trace_put_ts(struct trace *t, int64_t abs_ns)
{
	put_us(t, abs_ns - t->base_ns);
}

/* A JSON string; bytes that are not UTF-8 (argv can hold anything) become U+FFFD so every parser accepts it. */
void trace_put_str(struct trace *t, const char *s)
{
	cprof_json_fput(t->f, s);
}

/* Shortest decimal that reads back as the same double, as fmt's "{}" (Kineto's bandwidth) prints it. */
void trace_put_double(struct trace *t, double v)
{
	char buf[40];
	int prec;

	for (prec = 1; prec <= 17; prec++) {
		snprintf(buf, sizeof(buf), "%.*g", prec, v);
		if (strtod(buf, NULL) == v)
			break;
	}
	trace_put(t, buf);
}

void trace_ev_begin(struct trace *t)
{
	trace_put(t, t->first_event ? "\n  {" : ",\n  {");
	t->first_event = 0;
	t->events++;
}

void trace_put_meta(struct trace *t, const char *what, int64_t pid, int64_t tid, const char *key, const char *sval,
		     int64_t ival)
{
	trace_ev_begin(t);
	trace_put(t, "\"name\": ");
	trace_put_str(t, what);
	trace_put(t, ", \"ph\": \"M\", \"ts\": ");
	put_us(t, t->first_rel_ns);
	trace_put(t, ", \"pid\": ");
	trace_put_i(t, pid);
	trace_put(t, ", \"tid\": ");
	trace_put_i(t, tid);
	trace_put(t, ", \"args\": {\"");
	trace_put(t, key);
	trace_put(t, "\": ");
	if (sval)
		trace_put_str(t, sval);
	else
		trace_put_i(t, ival);
	trace_put(t, "}}");
}

/* An "X" span up to the start of its args object; the caller adds the args and closes it with "}}". */
void trace_span_begin(struct trace *t, const char *cat, const char *name, int64_t pid, int64_t tid, int64_t start,
		       int64_t end)
{
	trace_ev_begin(t);
	trace_put(t, "\"ph\": \"X\", \"cat\": \"");
	trace_put(t, cat);
	trace_put(t, "\", \"name\": ");
	trace_put_str(t, name);
	trace_put(t, ", \"pid\": ");
	trace_put_i(t, pid);
	trace_put(t, ", \"tid\": ");
	trace_put_i(t, tid);
	trace_put(t, ", \"ts\": ");
	trace_put_ts(t, start);
	trace_put(t, ", \"dur\": ");
	put_us(t, end - start);
}

void trace_flow(struct trace *t, char ph, int64_t id, int64_t pid, int64_t tid, int64_t ts)
{
	trace_ev_begin(t);
	trace_put(t, ph == 's' ? "\"ph\": \"s\", \"id\": " : "\"ph\": \"f\", \"id\": ");
	trace_put_i(t, id);
	trace_put(t, ", \"pid\": ");
	trace_put_i(t, pid);
	trace_put(t, ", \"tid\": ");
	trace_put_i(t, tid);
	trace_put(t, ", \"ts\": ");
	trace_put_ts(t, ts);
	/* only the end binds to its enclosing slice explicitly, as Kineto writes it */
	trace_put(t, ph == 's' ? ", \"cat\": \"ac2g\", \"name\": \"ac2g\"}"
			 : ", \"cat\": \"ac2g\", \"name\": \"ac2g\", \"bp\": \"e\"}");
}

void trace_arg_i(struct trace *t, const char *key, int64_t v)
{
	trace_put(t, ", \"");
	trace_put(t, key);
	trace_put(t, "\": ");
	trace_put_i(t, v);
}

void trace_arg_s(struct trace *t, const char *key, const char *v)
{
	trace_put(t, ", \"");
	trace_put(t, key);
	trace_put(t, "\": ");
	trace_put_str(t, v);
}

void trace_arg_dim3(struct trace *t, const char *key, int64_t x, int64_t y, int64_t z)
{
	trace_put(t, ", \"");
	trace_put(t, key);
	trace_put(t, "\": [");
	trace_put_i(t, x);
	trace_put(t, ", ");
	trace_put_i(t, y);
	trace_put(t, ", ");
	trace_put_i(t, z);
	trace_put(t, "]");
}

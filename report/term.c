/* Terminal-aware text for cprof: width from COLUMNS or TIOCGWINSZ, middle-cut names, colour, progress on stderr. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#define PR_FMT "cprof"
#include "common/log.h"
#include "common/textsafe.h"
#include "report/cprof.h"
#include "report/term.h"

static struct {
	int tty;    /* stdout is a terminal */
	int wide;   /* --wide */
	int color;
	size_t width;
	int no_progress;
} term;

static int env_set(const char *name)
{
	const char *v = getenv(name);

	return v && *v;
}

int cprof_term_setup(int argc, char **argv)
{
	enum cprof_color_when when = CPROF_COLOR_AUTO;
	int i, k;

	for (i = k = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "--")) {
			while (i < argc)
				argv[k++] = argv[i++];
			break;
		}
		if (!strcmp(a, "--wide")) {
			term.wide = 1;
		} else if (!strcmp(a, "--color") || !strncmp(a, "--color=", 8) || !strncmp(a, "--colour=", 9)) {
			const char *w = strchr(a, '=') ? strchr(a, '=') + 1 : "always";

			if (!strcmp(w, "auto"))
				when = CPROF_COLOR_AUTO;
			else if (!strcmp(w, "always"))
				when = CPROF_COLOR_ALWAYS;
			else if (!strcmp(w, "never"))
				when = CPROF_COLOR_NEVER;
			else {
				pr_err("--color=%s: auto, always or never", cprof_tx(w));
				return -1;
			}
		} else {
			argv[k++] = argv[i];
		}
	}
	argv[k] = NULL;
	term.tty = isatty(STDOUT_FILENO);
	if (term.tty && !term.wide) {
		struct winsize ws;
		char *end;
		long c = env_set("COLUMNS") ? strtol(getenv("COLUMNS"), &end, 10) : 0;

		if (c > 0 && *end == '\0')
			term.width = (size_t)c;
		else if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
			term.width = ws.ws_col;
		else
			term.width = 80;
	}
	/* https://no-color.org: a non-empty NO_COLOR turns colour off, --color=always overrides it */
	term.color = when == CPROF_COLOR_ALWAYS ||
		     (when == CPROF_COLOR_AUTO && term.tty && !env_set("NO_COLOR") &&
		      !(getenv("TERM") && !strcmp(getenv("TERM"), "dumb")));
	return k;
}

void cprof_fit(char *buf, size_t size, size_t avail)
{
	size_t total = cprof_text_cols(buf), head, tail, hw = 0, rem, w, k = 0, hl, tl;
	char *h, *t;

	if (total <= avail || avail < 8)
		return;
	/* the head says what it is, the tail which one (the arguments, the instantiation); counted in the columns the
	 * text takes once escaped, and cut between units of the raw text: the caller escapes it whole afterwards */
	head = (avail - 3) * 2 / 3;
	for (h = buf; *h; h += k) {
		k = cprof_text_unit(h, &w);
		if (hw + w > head)
			break;
		hw += w;
	}
	tail = avail - 3 - hw;
	hl = (size_t)(h - buf);
	/* a unit of one byte may take 4 columns: "..." can be longer than what it stands for, so the tail is cut to
	 * fit size too */
	for (t = h, rem = total - hw, tl = strlen(h); *t && (rem > tail || hl + 3 + tl >= size); t += k, tl -= k) {
		k = cprof_text_unit(t, &w);
		rem -= w;
	}
	if (hl + 3 >= size)
		return;
	memmove(buf + hl + 3, t, tl + 1);
	memcpy(buf + hl, "...", 3);
}

/* text into raw, whole when it fits; else its first and its last quarter of raw's size, each cut at a UTF-8
 * sequence's edge: cprof_fit keeps a head and a tail of a few columns, which those hold (a unit takes a column
 * at least, 4 bytes at most), so the cell is the one the whole text gives */
static void cell_ends(char *raw, size_t size, const char *text)
{
	size_t len = strlen(text), part = size / 4, h = part, t = len - part, k;

	if (len < size) {
		memcpy(raw, text, len + 1);
		return;
	}
	/* a sequence has 3 continuation bytes at most: a run of them is bytes of their own, shown escaped */
	for (k = 0; k < 3 && h > 0 && ((unsigned char)text[h] & 0xc0) == 0x80; k++)
		h--;
	for (k = 0; k < 3 && t < len && ((unsigned char)text[t] & 0xc0) == 0x80; k++)
		t++;
	memcpy(raw, text, h);
	memcpy(raw + h, text + t, len - t + 1);
}

void cprof_cell(char *out, size_t size, const char *text, const char *tag, size_t cols)
{
	char raw[4096];
	size_t avail, o, i;

	if (size == 0)
		return;
	tag = tag ? tag : "";
	cell_ends(raw, sizeof(raw), text);
	avail = cols > strlen(tag) + 8 ? cols - strlen(tag) : 8;
	/* cut in the columns of the escaped text, between units of the raw one: no escape or sequence is split */
	cprof_fit(raw, sizeof(raw), avail);
	cprof_text_safe(out, size, raw);
	o = strlen(out);
	for (i = 0; tag[i] && o + 1 < size; i++)
		out[o++] = tag[i];
	/* padded to cols columns, as printf's %-60s pads bytes */
	for (i = cprof_text_cols(raw) + strlen(tag); i < cols && o + 1 < size; i++)
		out[o++] = ' ';
	out[o] = '\0';
}

const char *cprof_term_name(const char *full, size_t col, char *buf, size_t size)
{
	size_t avail;

	if (term.wide)
		return full;
	cprof_shorten(full, buf, size);
	if (!term.tty)
		return buf;
	/* at least a readable stub, even when the columns before the name fill the terminal */
	avail = term.width > col + 24 ? term.width - col : 24;
	/* in the columns the name takes once escaped: a control byte takes 4 (\x1b), a backslash 2 */
	if (cprof_text_cols(full) <= avail)
		return full; /* it fits whole: the template arguments too */
	cprof_fit(buf, size, avail);
	return buf;
}

const char *cprof_term_name_at(const char *full, int level, size_t col, char *buf, size_t size)
{
	if (level == 0)
		return cprof_term_name(full, col, buf, size);
	if (term.wide || level > 1 || cprof_shorten_targs(full, buf, size) < 0)
		return full;
	return buf;
}

const char *cprof_hue(enum cprof_hue h)
{
	static const char *const sgr[] = {
		[CPROF_HUE_RESET] = "\033[0m", [CPROF_HUE_BAD] = "\033[1;31m", [CPROF_HUE_GOOD] = "\033[1;32m",
		[CPROF_HUE_WARN] = "\033[33m", [CPROF_HUE_INFO] = "\033[36m",  [CPROF_HUE_BOLD] = "\033[1m",
	};

	return term.color ? sgr[h] : "";
}

const char *cprof_hue_verdict(const char *verdict)
{
	if (!strcmp(verdict, "compute-bound"))
		return cprof_hue(CPROF_HUE_GOOD);
	if (!strcmp(verdict, "overhead-bound") || !strcmp(verdict, "cuda-unavailable"))
		return cprof_hue(CPROF_HUE_BAD);
	return cprof_hue(CPROF_HUE_WARN);
}

/* ---- progress ---- */

static struct {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int running, stop, shown;
	long delay_ms;
	char what[200];
	struct timespec start;
} prog = { .lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER };

static double since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)(t.tv_sec - t0->tv_sec) + (t.tv_nsec - t0->tv_nsec) / 1e9;
}

static void *progress_main(void *arg)
{
	struct timespec until;

	(void)arg;
	pthread_mutex_lock(&prog.lock);
	/* silent for the first 2 s, as the tools users know: a quick command prints nothing */
	until = prog.start;
	until.tv_sec += prog.delay_ms / 1000;
	until.tv_nsec += (prog.delay_ms % 1000) * 1000000;
	if (until.tv_nsec >= 1000000000) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000;
	}
	while (!prog.stop) {
		if (pthread_cond_timedwait(&prog.cond, &prog.lock, &until) == ETIMEDOUT && !prog.stop) {
			fprintf(stderr, "\r\033[K%s... %.0f s", prog.what, since(&prog.start));
			fflush(stderr);
			prog.shown = 1;
			clock_gettime(CLOCK_MONOTONIC, &until);
			until.tv_nsec += 500000000;
			if (until.tv_nsec >= 1000000000) {
				until.tv_sec++;
				until.tv_nsec -= 1000000000;
			}
		}
	}
	if (prog.shown) {
		fprintf(stderr, "\r\033[K");
		fflush(stderr);
	}
	pthread_mutex_unlock(&prog.lock);
	return NULL;
}

void cprof_progress_off(void)
{
	term.no_progress = 1;
}

void cprof_progress_begin(const char *what)
{
	const char *d = getenv("CPROF_PROGRESS_DELAY_MS");

	if (term.no_progress || prog.running || !isatty(STDERR_FILENO))
		return;
	cprof_text_safe(prog.what, sizeof(prog.what), what);
	clock_gettime(CLOCK_MONOTONIC, &prog.start);
	prog.stop = prog.shown = 0;
	/* the tests' knob: 0 draws the line at once, here, so that a quick command shows it too */
	prog.delay_ms = d && *d ? strtol(d, NULL, 10) : 2000;
	if (prog.delay_ms <= 0) {
		prog.delay_ms = 500;
		fprintf(stderr, "\r\033[K%s... 0 s", prog.what);
		fflush(stderr);
		prog.shown = 1;
	}
	/* CLOCK_MONOTONIC for the waits too */
	{
		pthread_condattr_t ca;

		pthread_condattr_init(&ca);
		pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
		pthread_cond_destroy(&prog.cond);
		pthread_cond_init(&prog.cond, &ca);
		pthread_condattr_destroy(&ca);
	}
	if (pthread_create(&prog.thread, NULL, progress_main, NULL) == 0)
		prog.running = 1;
}

void cprof_progress_end(void)
{
	if (!prog.running)
		return;
	pthread_mutex_lock(&prog.lock);
	prog.stop = 1;
	pthread_cond_signal(&prog.cond);
	pthread_mutex_unlock(&prog.lock);
	pthread_join(prog.thread, NULL);
	prog.running = 0;
}

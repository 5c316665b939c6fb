/* cprof capture: opens a recording window in a running cprof-run --on-demand job, through its private run directory. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define PR_FMT "cprof capture"
#include "common/clock.h"
#include "common/log.h"
#include "common/windows.h"
#include "report/cprof.h"

static void usage(FILE *f)
{
	fprintf(f, "usage: cprof capture PID|RUN-DIR --duration S [--no-wait]\n"
		   "Records S seconds of a job started with cprof-run --on-demand (or --delay/--duration), from now, as\n"
		   "one more numbered window of its profile. PID: any process of the job (cprof-run's own too);\n"
		   "RUN-DIR: the run directory cprof-run printed. Only the user running the job may.\n"
		   "Waits until the window closes unless --no-wait.\n");
}

static int all_digits(const char *s)
{
	if (*s == '\0')
		return 0;
	for (; *s; s++)
		if (!isdigit((unsigned char)*s))
			return 0;
	return 1;
}

/* CPROF_WINDOWS=... in /proc/PID/environ, as the process was started: 0 (out set), -ENOENT (none), -errno */
static int windows_of_pid(long pid, char *out, size_t size)
{
	char path[64], *buf = NULL, *p;
	size_t len = 0, cap = 1 << 16;
	ssize_t r;
	int fd, ret = -ENOENT;

	snprintf(path, sizeof(path), "/proc/%ld/environ", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	buf = malloc(cap + 1);
	if (buf == NULL) {
		close(fd);
		return -ENOMEM;
	}
	while (len < cap && (r = read(fd, buf + len, cap - len)) > 0)
		len += (size_t)r;
	close(fd);
	buf[len] = '\0';
	for (p = buf; p < buf + len; p += strlen(p) + 1)
		if (!strncmp(p, "CPROF_WINDOWS=", 14) && strlen(p + 14) < size) {
			snprintf(out, size, "%s", p + 14);
			ret = 0;
			break;
		}
	free(buf);
	return ret;
}

/* The schedule of the job PID belongs to: its own environment's, else (cprof-run) its first child's. */
static int windows_for(long pid, char *out, size_t size)
{
	char path[96], kids[4096];
	int ret = windows_of_pid(pid, out, size), fd;
	ssize_t n;

	if (ret != -ENOENT)
		return ret;
	snprintf(path, sizeof(path), "/proc/%ld/task/%ld/children", pid, pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return ret;
	n = read(fd, kids, sizeof(kids) - 1);
	close(fd);
	if (n <= 0)
		return ret;
	kids[n] = '\0';
	/* cprof-run's children: the collector, then the job's top process */
	for (char *p = kids, *end; *p; p = end) {
		long kid = strtol(p, &end, 10);

		if (end == p)
			break;
		if (windows_of_pid(kid, out, size) == 0)
			return 0;
	}
	return ret;
}

/* The run directory must be ours and private, as cprof-run made it: nobody else may open windows in it. */
static int check_private(const char *dir)
{
	struct stat st;

	if (lstat(dir, &st) < 0)
		return -errno;
	if (!S_ISDIR(st.st_mode))
		return -ENOTDIR;
	if (st.st_uid != geteuid() || (st.st_mode & 077))
		return -EPERM;
	return 0;
}

int cmd_capture(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "duration", required_argument, NULL, 'd' }, { "no-wait", no_argument, NULL, 'n' },
		{ "help", no_argument, NULL, 'h' },           { NULL, 0, NULL, 0 },
	};
	char windows[PATH_MAX], dir[PATH_MAX];
	double seconds = -1;
	int opt, wait = 1, number = 0, ret;
	uint64_t start, end, busy = 0;
	char why[96], *endp;
	struct stat st;

	while ((opt = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (opt) {
		case 'd':
			errno = 0;
			seconds = strtod(optarg, &endp);
			if (*optarg == '\0' || *endp || errno || !(seconds > 0) || seconds > 86400) {
				pr_err("--duration %s: expected seconds, more than 0 (decimals allowed)", optarg);
				return CPROF_EXIT_USAGE;
			}
			break;
		case 'n': wait = 0; break;
		case 'h': usage(stdout); return CPROF_EXIT_OK;
		default: usage(stderr); return CPROF_EXIT_USAGE;
		}
	}
	if (optind != argc - 1 || seconds < 0) {
		usage(stderr);
		return CPROF_EXIT_USAGE;
	}
	if (all_digits(argv[optind])) {
		long pid = strtol(argv[optind], NULL, 10);
		char proc[64];

		snprintf(proc, sizeof(proc), "/proc/%ld", pid);
		if (stat(proc, &st) < 0) {
			pr_err("no process %ld", pid);
			return CPROF_EXIT_NO_RUN;
		}
		if (st.st_uid != geteuid()) {
			pr_err("process %ld is not yours: only the user running a job may capture it", pid);
			return CPROF_EXIT_DENIED;
		}
		ret = windows_for(pid, windows, sizeof(windows));
		if (ret == -EACCES || ret == -EPERM) {
			pr_err("cannot read the environment of process %ld (%s): not a job of yours to capture", pid,
			       strerror(-ret));
			return CPROF_EXIT_DENIED;
		}
		if (ret < 0) {
			pr_err("process %ld is not a cprof-run --on-demand job (%s)", pid,
			       ret == -ENOENT ? "no recording schedule in its environment" : strerror(-ret));
			return CPROF_EXIT_NO_RUN;
		}
		snprintf(dir, sizeof(dir), "%s", windows);
		if (strrchr(dir, '/'))
			*strrchr(dir, '/') = '\0';
	} else {
		if (snprintf(dir, sizeof(dir), "%s", argv[optind]) >= (int)sizeof(dir) ||
		    snprintf(windows, sizeof(windows), "%s/%s", argv[optind], CPROF_WINDOWS_FILE) >= (int)sizeof(windows)) {
			pr_err("path too long");
			return CPROF_EXIT_USAGE;
		}
	}
	ret = check_private(dir);
	if (ret == -EPERM || ret == -EACCES) {
		pr_err("%s is not a private run directory of yours: only the user running a job may capture it",
		       cprof_tx(dir));
		return CPROF_EXIT_DENIED;
	}
	if (ret < 0 || lstat(windows, &st) < 0 || !S_ISREG(st.st_mode)) {
		pr_err("%s: no running cprof-run --on-demand job there (%s)", cprof_tx(dir),
		       ret < 0 ? strerror(-ret) : "no recording schedule");
		return CPROF_EXIT_NO_RUN;
	}
	if (st.st_uid != geteuid()) {
		pr_err("%s is not yours", cprof_tx(windows));
		return CPROF_EXIT_DENIED;
	}
	start = cprof_now_ns();
	end = start + (uint64_t)(seconds * 1e9 + 0.5);
	snprintf(why, sizeof(why), "cprof capture --duration %.3f (by pid %d)", seconds, (int)getpid());
	ret = cprof_windows_add(windows, start, end, why, &number, &busy);
	if (ret == -EBUSY) {
		pr_err("a capture is open already (until %.3f s from now): wait for it to end",
		       busy > start ? (busy - start) / 1e9 : 0.0);
		return CPROF_EXIT_BUSY;
	}
	if (ret < 0) {
		pr_err("cannot add a window to %s: %s", cprof_tx(windows), strerror(-ret));
		return ret == -EACCES || ret == -EPERM ? CPROF_EXIT_DENIED : CPROF_EXIT_NO_RUN;
	}
	fprintf(stderr, "cprof capture: window %d: recording for %.3f s\n", number, seconds);
	while (wait && cprof_now_ns() < end) {
		struct timespec ts = { 0, 100000000 };

		if (access(windows, F_OK) < 0) {
			fprintf(stderr, "cprof capture: window %d: the job ended during it; its profile keeps what was recorded\n",
				number);
			return CPROF_EXIT_OK;
		}
		nanosleep(&ts, NULL);
	}
	if (wait)
		fprintf(stderr, "cprof capture: window %d: done\n", number);
	return CPROF_EXIT_OK;
}

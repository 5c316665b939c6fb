/* cprof-run: runs a command under cprof (collector, FIFO, LD_PRELOAD) and exits with the command's status. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <libgen.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define PR_FMT "cprof-run"
#include "common/clock.h"
#include "common/log.h"
#include "common/shquote.h"
#include "common/textsafe.h"
#include "common/version.h"
#include "common/windows.h"
#include "common/wire.h"

/* Our own failures use the codes timeout(1) and env(1) use, so they differ from most targets'. */
enum { RUN_EXIT_INTERNAL = 125, RUN_EXIT_NOEXEC = 126, RUN_EXIT_NOTFOUND = 127, RUN_EXIT_USAGE = 2 };
/* cprof check's status for options it refuses */
enum { CHECK_EXIT_USAGE = 2 };

#define READY_TIMEOUT_MS 10000
/* the longest absolute database path SQLite's unix VFS opens (as report/cprof.h says) */
#define CPROF_SQLITE_PATH_MAX 504

static volatile pid_t target_pid;
static volatile sig_atomic_t interrupted_by;

static void forward(int sig, siginfo_t *si, void *uctx)
{
	(void)uctx;
	/* either way the run was interrupted; the profile says so */
	interrupted_by = sig;
	/* a signal from the terminal already reached the target (same process group); one sent to us
	 * by kill(1) or a scheduler did not, so pass it on */
	if (target_pid > 0 && si && si->si_code <= 0)
		kill(target_pid, sig);
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: cprof-run [-o PROFILE.db] [-f] [--quiet] [--html PAGE.html] [--check 'OPTS'] [--inject-only] [--grace S]\n"
		"                 [--stacks off|sampled|all] [--capture-range cudaProfilerApi|nvtx:NAME] [--torch-ops]\n"
		"                 [--delay S] [--duration S] [--on-demand] [--max-size SIZE] [--simulated-gpu]\n"
		"                 -- CMD [ARGS...]\n"
		"Runs CMD with cprof loaded and writes its profile. cprofd, cprof and ../lib/libcprof.so are found\n"
		"beside this program (a bundle's ../lib/cprof/libunwind.so.8 too, for --stacks).\n"
		"  -o, --output PATH  profile file (default cprof.db, or cprof-N.db with the first free N);\n"
		"                     %%h = host name, %%p = pid of cprof-run, %%r = rank (RANK, SLURM_PROCID,\n"
		"                     OMPI_COMM_WORLD_RANK, PMI_RANK; \"norank\" when unset), %%%% = %%\n"
		"  -f, --force        overwrite an existing profile (and --html page)\n"
		"  -q, --quiet        no summary on stderr\n"
		"      --html PATH    write 'cprof html PROFILE -o PATH' after CMD: one self-contained page\n"
		"      --inject-only  load cprof through CUDA_INJECTION64_PATH only, no LD_PRELOAD: GPU records\n"
		"                     and no hooked calls (for programs where LD_PRELOAD is not wanted)\n"
		"      --stacks MODE  call stacks (native and Python) at launches, copies, memsets, GEMMs and syncs:\n"
		"                     sampled (default: the first 4 calls of each call site, then 1 in 256; the\n"
		"                     others reuse their site's last stack), all (every call), off\n"
		"      --capture-range cudaProfilerApi|nvtx:NAME[@DOMAIN]\n"
		"                     record only between cudaProfilerStart and cudaProfilerStop (or the driver's\n"
		"                     cuProfilerStart and cuProfilerStop), or inside the NVTX range NAME (push/pop;\n"
		"                     ASCII or registered string), of any domain or of DOMAIN only: the rest of the\n"
		"                     run passes through unrecorded\n"
		"      --delay S      record from S seconds (decimals allowed) after CMD starts; the time before passes\n"
		"                     through unrecorded, as outside a --capture-range\n"
		"      --duration S   record for S seconds (from the start, or from the end of --delay), then stop\n"
		"      --on-demand    record nothing until 'cprof capture PID|RUN-DIR --duration S' asks (same user\n"
		"                     only); each capture is a numbered window of the one profile\n"
		"      --steps FIRST:LAST[:every=N]\n"
		"                     record steps FIRST to LAST (counted from 1 as cprof report numbers them: NVTX\n"
		"                     ranges named ProfilerStep#N, step, step N, ...), again every N steps\n"
		"      --max-size SIZE  stop storing events when the profile would pass SIZE (bytes, or with K, M, G, T\n"
		"                     or KiB, MiB, GiB, TiB: powers of 1024; MB and the like are refused) and count those\n"
		"                     not stored; default half the free space where the profile goes, at least 64M; 0: no\n"
		"                     limit\n"
		"      --grace S      after CMD exits, wait at most S seconds (default 10) for the events of processes\n"
		"                     it left running (daemons, setsid'd children); then finish the profile without\n"
		"                     them, marked incomplete\n"
		"      --torch-ops    when CMD imports torch, record each ATen op as a range (PyTorch's own NVTX\n"
		"                     emission, through a sitecustomize.py on PYTHONPATH); also CPROF_TORCH_OPS=1\n"
		"      --simulated-gpu  run CMD on cprof's simulated GPU (no GPU needed; kernels do not compute, their\n"
		"                     times are modelled): to try cprof, or test a CI gate, on a machine without a GPU\n"
		"      --check 'OPTS' run 'cprof check PROFILE OPTS' after CMD (options split at spaces);\n"
		"                     exit 1 when the gate fails; options cprof check refuses (or a --baseline it\n"
		"                     cannot read): exit 2 before CMD starts\n"
		"      --version      print cprof-run's version\n"
		"Exit status: CMD's own (128+N when killed by signal N), 1 when --check fails; 125 when cprof itself failed,\n"
		"126 when CMD cannot be executed, 127 when it is not found, 2 on bad usage.\n");
}

static int expand_output(const char *pattern, char *out, size_t size)
{
	char host[256] = "host";
	size_t o = 0;
	const char *p;

	gethostname(host, sizeof(host) - 1);
	/* a host name is not ours to trust: "a/../b" must not leave the chosen directory */
	cprof_path_component(host);
	for (p = pattern; *p; p++) {
		char tmp[300];
		const char *add = tmp;

		if (*p == '%' && p[1] == 'h')
			add = host, p++;
		else if (*p == '%' && p[1] == 'p')
			snprintf(tmp, sizeof(tmp), "%d", (int)getpid()), p++;
		else if (*p == '%' && p[1] == 'r') {
			static const char *const vars[] = { "RANK", "SLURM_PROCID", "OMPI_COMM_WORLD_RANK", "PMI_RANK", NULL };
			const char *r = NULL;

			for (int i = 0; vars[i] && (r == NULL || *r == '\0'); i++)
				r = getenv(vars[i]);
			snprintf(tmp, sizeof(tmp), "%.32s", r && *r && !strchr(r, '/') ? r : "norank");
			p++;
		}
		else if (*p == '%' && p[1] == '%')
			tmp[0] = '%', tmp[1] = '\0', p++;
		else
			tmp[0] = *p, tmp[1] = '\0';
		if (o + strlen(add) >= size)
			return -ENAMETOOLONG;
		memcpy(out + o, add, strlen(add));
		o += strlen(add);
	}
	out[o] = '\0';
	return 0;
}

static void remove_profile(const char *path)
{
	char side[PATH_MAX + 8];

	/* unlink removes a symlink itself, never what it points to */
	unlink(path);
	snprintf(side, sizeof(side), "%s-wal", path);
	unlink(side);
	snprintf(side, sizeof(side), "%s-shm", path);
	unlink(side);
}

/* Anything at the profile's path or its SQLite side files, a dangling symlink included (lstat, not access). */
static int profile_exists(const char *path)
{
	char side[PATH_MAX + 8];
	struct stat st;

	if (lstat(path, &st) == 0)
		return 1;
	snprintf(side, sizeof(side), "%s-wal", path);
	if (lstat(side, &st) == 0)
		return 1;
	snprintf(side, sizeof(side), "%s-shm", path);
	return lstat(side, &st) == 0;
}

/* Whether two output paths name one file: the same inode when both exist, else the same resolved directory and
 * name (a profile and its --html page written to one file would destroy the profile). */
static int same_file(const char *a, const char *b)
{
	char da[PATH_MAX], db[PATH_MAX], ra[PATH_MAX], rb[PATH_MAX], ca[PATH_MAX], cb[PATH_MAX];
	struct stat sa, sb;

	if (stat(a, &sa) == 0 && stat(b, &sb) == 0)
		return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
	snprintf(ca, sizeof(ca), "%s", a);
	snprintf(cb, sizeof(cb), "%s", b);
	if (realpath(dirname(ca), da) == NULL || realpath(dirname(cb), db) == NULL)
		return 0;
	snprintf(ca, sizeof(ca), "%s", a);
	snprintf(cb, sizeof(cb), "%s", b);
	snprintf(ra, sizeof(ra), "%s", basename(ca));
	snprintf(rb, sizeof(rb), "%s", basename(cb));
	return strcmp(da, db) == 0 && strcmp(ra, rb) == 0;
}

/* Whether another run writes the profile at path now: its collector (and its cprof-run, until its summary,
 * page and gate are done) hold a shared flock on the file. */
static int profile_in_use(const char *path)
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC), busy;

	if (fd < 0)
		return 0;
	busy = flock(fd, LOCK_EX | LOCK_NB) < 0 && errno == EWOULDBLOCK;
	close(fd);
	return busy;
}

static int default_output(char *out, size_t size)
{
	int i;

	snprintf(out, size, "cprof.db");
	for (i = 1; profile_exists(out); i++)
		snprintf(out, size, "cprof-%d.db", i);
	return 0;
}

/* The command as one line for the profile's META (what cprof info, report, html and trace show), each argument
 * quoted as a shell needs it (cprof_sh_quote), cut at CPROF_COMMAND_MAX: it goes to cprofd as one argument, and
 * the kernel refuses an argument over 128 KiB (E2BIG), which would stop a long command line from running.
 * The target's own HELLO carries its argv. */
#define CPROF_COMMAND_MAX 65536
static char *join_command(char **argv)
{
	size_t n = 0, total = 0, used = 0;
	char **a, *s;

	for (a = argv; *a; a++)
		total += strlen(*a) + 1;
	s = malloc(CPROF_COMMAND_MAX + 64);
	if (s == NULL)
		return NULL;
	for (a = argv; *a; a++) {
		size_t l = strlen(*a), take = l, room;

		/* the space before it and at least '' */
		if (n + (n > 0) + 2 > CPROF_COMMAND_MAX)
			break;
		if (n > 0)
			s[n++] = ' ', used++;
		room = CPROF_COMMAND_MAX - n;
		if (cprof_sh_quote(*a, l, NULL) > room)
			take = room < 3 ? 0 : (room - 3) / 4; /* what surely fits, quoted */
		n += cprof_sh_quote(*a, take, s + n);
		used += take;
		if (take < l)
			break;
	}
	s[n] = '\0';
	if (total - 1 > used)
		snprintf(s + n, 64, " ... (%zu bytes more)", total - 1 - used);
	return s;
}

/* What the run directory may hold besides the FIFO: links to paths the loader would split (loader_path). */
static const char *const run_links[] = { "libcprof.so", "python", "simgpu" };

/* LD_PRELOAD splits at spaces and colons, LD_LIBRARY_PATH and PYTHONPATH at colons: a path with either
 * (an install under "odd dir") goes as a link named name in the private run directory instead, never
 * cut in two (ld.so would load nothing and the profile would be empty). -EINVAL when the run directory
 * has one too (TMPDIR). */
static int loader_path(const char *rundir, const char *name, char *path, size_t size)
{
	char link[PATH_MAX];

	if (strpbrk(path, " :") == NULL)
		return 0;
	if (strpbrk(rundir, " :") != NULL)
		return -EINVAL;
	if (snprintf(link, sizeof(link), "%s/%s", rundir, name) >= (int)sizeof(link) || strlen(link) >= size)
		return -ENAMETOOLONG;
	if (symlink(path, link) < 0)
		return -errno;
	strcpy(path, link);
	return 0;
}

static void remove_rundir(const char *rundir, const char *fifo)
{
	char link[PATH_MAX + 16];
	size_t i;

	unlink(fifo);
	for (i = 0; i < sizeof(run_links) / sizeof(run_links[0]); i++)
		if (snprintf(link, sizeof(link), "%s/%s", rundir, run_links[i]) < (int)sizeof(link))
			unlink(link);
	rmdir(rundir);
}

/* The simulated GPU's libraries, preloaded after cprof's: a program that finds its own CUDA libraries
 * (PyTorch's wheel, through RPATH) gets these, as tests/simgpu/simgpu-run.sh does. */
static const char *const sim_libs[] = { "libcuda.so.1", "libcudart.so.13", "libcublasLt.so.13", "libcublas.so.13",
					"libcupti.so.13" };

/* The target's environment only: the collector and the summary must not load the library. simdir: the
 * simulated GPU's libraries (--simulated-gpu), or NULL. */
static int target_env(const char *lib, const char *unwind, const char *fifo, int inject_only, const char *stacks,
		      const char *capture, const char *pydir, const char *windows, const char *simdir)
{
	const char *old = getenv("LD_PRELOAD"), *inj = getenv("CUDA_INJECTION64_PATH");
	char *preload;
	size_t i, n = strlen(lib) + (old ? strlen(old) : 0) + 2;
	int ret = 0;

	for (i = 0; simdir && i < sizeof(sim_libs) / sizeof(sim_libs[0]); i++)
		n += strlen(simdir) + strlen(sim_libs[i]) + 2;
	preload = malloc(n);
	if (preload) {
		strcpy(preload, lib);
		if (old && *old)
			strcat(strcat(preload, ":"), old);
		for (i = 0; simdir && i < sizeof(sim_libs) / sizeof(sim_libs[0]); i++)
			strcat(strcat(strcat(strcat(preload, ":"), simdir), "/"), sim_libs[i]);
	}
	if (simdir) {
		const char *lp = getenv("LD_LIBRARY_PATH");
		char *v = malloc(strlen(simdir) + (lp ? strlen(lp) : 0) + 2);

		if (v == NULL || (sprintf(v, lp && *lp ? "%s:%s" : "%s", simdir, lp), setenv("LD_LIBRARY_PATH", v, 1) < 0)) {
			free(v);
			free(preload);
			return -ENOMEM;
		}
		free(v);
	}
	if (inj && *inj && strcmp(inj, lib) != 0)
		pr_warn("CUDA_INJECTION64_PATH=%s replaced by cprof's (CUDA loads one injection library)", inj);
	if (windows && setenv("CPROF_WINDOWS", windows, 1) < 0)
		return -1;
	if (preload == NULL || (!inject_only && setenv("LD_PRELOAD", preload, 1) < 0) ||
	    setenv("CPROF_FIFO", fifo, 1) < 0 || setenv("CUDA_INJECTION64_PATH", lib, 1) < 0 ||
	    (stacks && setenv("CPROF_STACKS", stacks, 1) < 0) || (capture && setenv("CPROF_CAPTURE", capture, 1) < 0) ||
	    /* a bundle carries its own libunwind (make dist); one the user named stays */
	    (unwind && setenv("CPROF_LIBUNWIND", unwind, 0) < 0))
		ret = -ENOMEM;
	/* NVTX v3 loads its injection library on the first annotation; one that is set already is the user's
	 * choice (e.g. another tool's) and stays */
	else if ((inj = getenv("NVTX_INJECTION64_PATH")) && *inj && strcmp(inj, lib) != 0)
		pr_warn("NVTX_INJECTION64_PATH=%s kept: NVTX annotations go there, not to cprof", inj);
	else if (setenv("NVTX_INJECTION64_PATH", lib, 1) < 0)
		ret = -ENOMEM;
	free(preload);
	/* --torch-ops: Python finds cprof's sitecustomize.py first; it chains to the program's own */
	if (ret == 0 && pydir) {
		const char *pp = getenv("PYTHONPATH");
		char *v = malloc(strlen(pydir) + (pp ? strlen(pp) : 0) + 2);

		if (v == NULL)
			return -ENOMEM;
		sprintf(v, pp && *pp ? "%s:%s" : "%s", pydir, pp);
		if (setenv("PYTHONPATH", v, 1) < 0 || setenv("CPROF_TORCH_OPS", "1", 1) < 0)
			ret = -ENOMEM;
		free(v);
	}
	return ret;
}

/* The BYEs processes left in the run directory for a collector that did not read them (it was killed). */
static void remove_byes(const char *rundir)
{
	DIR *d = opendir(rundir);
	struct dirent *e;

	if (d == NULL)
		return;
	while ((e = readdir(d)) != NULL)
		if (strncmp(e->d_name, "bye.", 4) == 0)
			unlinkat(dirfd(d), e->d_name, 0);
	closedir(d);
}

/* Starts cprofd and waits until it is ready. *drain_fd is the pipe on which it later says its intake is done
 * (or closes, when it exits). */
static pid_t start_collector(const char *cprofd, const char *fifo, const char *db, const char *command,
			     const char *recording, int *drain_fd, unsigned long long max_size)
{
	int ready[2], devnull;
	struct pollfd p;
	pid_t pid;
	char c;

	if (pipe2(ready, O_CLOEXEC) < 0)
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		char fdbuf[16], maxbuf[24];

		/* its own process group: Ctrl-C is for the target; the collector drains until told */
		setpgid(0, 0);
		devnull = open("/dev/null", O_RDWR);
		if (devnull >= 0) {
			dup2(devnull, STDIN_FILENO);
			dup2(devnull, STDOUT_FILENO);
		}
		close(ready[0]);
		fcntl(ready[1], F_SETFD, 0);
		snprintf(fdbuf, sizeof(fdbuf), "%d", ready[1]);
		snprintf(maxbuf, sizeof(maxbuf), "%llu", max_size);
		execl(cprofd, "cprofd", "--fifo", fifo, "--db", db, "--ready-fd", fdbuf, "--command", command,
		      "--max-size", maxbuf, "--recording", recording, (char *)NULL);
		pr_err("cannot execute %s: %s", cprofd, strerror(errno));
		_exit(RUN_EXIT_INTERNAL);
	}
	close(ready[1]);
	p.fd = ready[0];
	p.events = POLLIN;
	if (poll(&p, 1, READY_TIMEOUT_MS) != 1 || read(ready[0], &c, 1) != 1 || c != 'R') {
		close(ready[0]);
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		return -1;
	}
	*drain_fd = ready[0];
	return pid;
}

/* The run's end goes to cprofd as a queued signal: the kernel tells it the sender (si_pid), so no process of
 * the job can forge it, as it could a frame in the FIFO. The target's writes are all in the FIFO already:
 * cprofd reads on until it stays quiet. */
static int send_run_end(pid_t collector, int status, int sig)
{
	union sigval v = { .sival_int = (status & 0xffff) | (sig & 0x7fff) << 16 };

	return sigqueue(collector, SIGUSR2, v) < 0 ? -errno : 0;
}

/* Waits up to timeout_ms for the collector to exit: its exit status, -1 when it did not exit cleanly,
 * -2 when it is still running. */
static int collector_exit(pid_t pid, int timeout_ms)
{
	int status, i;

	for (i = 0; i <= timeout_ms / 10; i++) {
		pid_t r = waitpid(pid, &status, WNOHANG);

		if (r == pid)
			return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
		if (r < 0 && errno != EINTR)
			return -1;
		poll(NULL, 0, 10);
	}
	return -2;
}

/* The rule for what outlives CMD: cprof-run waits for CMD itself, then at most grace_s for the collector's
 * intake to drain (it stops once the FIFO stays quiet and no process that said hello still runs). Events
 * still flowing then come from processes CMD left behind (a daemon, a setsid'd grandchild): they are not
 * waited for; the collector is told to finish, and the profile keeps them without an end, marked incomplete
 * ("still running"). Storing what the intake spooled may take longer; that is waited for. Returns the
 * collector's exit status or -1. */
static int wait_collector(pid_t pid, int drain_fd, int grace_s)
{
	struct pollfd p = { .fd = drain_fd, .events = POLLIN };
	int rc, r;

	do
		r = poll(&p, 1, grace_s * 1000);
	while (r < 0 && errno == EINTR);
	close(drain_fd);
	if (r == 1) /* 'D', or the collector is gone: either way no survivor holds it */
		return collector_exit(pid, 600000);
	pr_warn("events still arrive %d s after the command ended (a process it left running?); finishing the "
		"profile without them (marked incomplete)", grace_s);
	kill(pid, SIGTERM);
	rc = collector_exit(pid, 30000);
	if (rc != -2)
		return rc;
	pr_warn("collector did not finish within 30 s; stopped (the profile keeps what it committed)");
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	return -1;
}

/* Runs cprof check on the profile with the user's gate options; its lines go to stderr. Returns its status. */
/* "1.5" seconds -> ns; -1 when not a number of seconds in 0..30 days */
static int64_t parse_seconds(const char *v)
{
	char *end;
	double d;

	errno = 0;
	d = strtod(v, &end);
	if (*v == '\0' || *end || errno || !(d >= 0) || d > 30 * 86400.0)
		return -1;
	return (int64_t)(d * 1e9 + 0.5);
}

/* "100M" -> bytes: K, M, G, T (or KiB, MiB, GiB, TiB) are powers of 1024, as --help says; -1 when not a size,
 * -2 for KB, MB, GB, TB, which mean powers of 1000 as often as of 1024: refused, not guessed */
static long long parse_size(const char *v)
{
	char *end;
	unsigned long long n;
	int shift = 0;

	errno = 0;
	if (*v < '0' || *v > '9')
		return -1;
	n = strtoull(v, &end, 10);
	if (errno)
		return -1;
	switch (*end) {
	case '\0': break;
	case 'k': case 'K': shift = 10; end++; break;
	case 'm': case 'M': shift = 20; end++; break;
	case 'g': case 'G': shift = 30; end++; break;
	case 't': case 'T': shift = 40; end++; break;
	default: return -1;
	}
	if (shift && (end[0] == 'B' || end[0] == 'b') && end[1] == '\0')
		return -2;
	if (shift && strcmp(end, "iB") == 0)
		end += 2;
	if (*end || n > (1ull << (62 - shift)))
		return -1;
	return (long long)(n << shift);
}

/* --max-size's default: half the space free where the profile goes, never under 64 MiB (a profile that
 * small is a few hundred thousand events: the limit is there for runs of hours, not to cut short ones) */
static unsigned long long default_max_size(const char *db)
{
	char dir[PATH_MAX];
	struct statvfs vf;
	unsigned long long half;

	snprintf(dir, sizeof(dir), "%s", db);
	if (statvfs(dirname(dir), &vf) < 0)
		return 0;
	half = (unsigned long long)vf.f_bavail * vf.f_frsize / 2;
	return half < (64ull << 20) ? 64ull << 20 : half;
}

/* cprof check's arguments: PROFILE and the --check options split at spaces and tabs (as --help says), with
 * --validate-only first when asked; copy is cut up in place. The argument count, or -E2BIG when the options
 * do not fit (never cut silently: the gate the user wrote would not be the one that ran). */
#define GATE_ARGS_MAX 64
static int gate_args(char *copy, const char *db, int validate, char **args)
{
	char *tok, *save = NULL;
	int n = 0;

	args[n++] = "cprof";
	args[n++] = "check";
	if (validate)
		args[n++] = "--validate-only";
	args[n++] = (char *)db;
	for (tok = strtok_r(copy, " \t", &save); tok; tok = strtok_r(NULL, " \t", &save)) {
		if (n >= GATE_ARGS_MAX - 1)
			return -E2BIG;
		args[n++] = tok;
	}
	args[n] = NULL;
	return n;
}

/* Runs cprof check on the profile with the user's gate options; its lines go to stderr. With validate, only
 * the options are checked (cprof check --validate-only, the one parser of them), before the run: what it says
 * goes into msg, one line. Returns its exit status, -1 when it did not run. */
static int gate(const char *self_dir, const char *db, const char *options, int validate, char *msg, size_t size)
{
	char cprof[PATH_MAX + 8], *copy = strdup(options), *args[GATE_ARGS_MAX], *save = NULL;
	int out[2] = { -1, -1 }, status = -1;
	pid_t pid;

	if (msg)
		msg[0] = '\0';
	if (copy == NULL)
		return -1;
	if (gate_args(copy, db, validate, args) < 0) {
		if (msg)
			snprintf(msg, size, "more than %d options", GATE_ARGS_MAX - 5);
		free(copy);
		return CHECK_EXIT_USAGE;
	}
	snprintf(cprof, sizeof(cprof), "%s/cprof", self_dir);
	if (validate && pipe2(out, O_CLOEXEC) < 0)
		goto out;
	pid = fork();
	if (pid == 0) {
		if (validate) {
			dup2(out[1], STDOUT_FILENO);
			dup2(out[1], STDERR_FILENO);
		} else {
			dup2(STDERR_FILENO, STDOUT_FILENO);
		}
		execv(cprof, args);
		_exit(RUN_EXIT_INTERNAL);
	}
	if (validate) {
		size_t got = 0;
		ssize_t r;
		char buf[1024];

		close(out[1]);
		out[1] = -1;
		/* read to the end (what does not fit is dropped): a writer stopped by a full pipe never exits */
		while (pid > 0) {
			char rest[256];
			int full = got == sizeof(buf) - 1;

			r = full ? read(out[0], rest, sizeof(rest)) : read(out[0], buf + got, sizeof(buf) - 1 - got);
			if (r < 0 && errno == EINTR)
				continue;
			if (r <= 0)
				break;
			if (!full)
				got += (size_t)r;
		}
		buf[got] = '\0';
		/* its lines without their "cprof check: ", joined: one line of cprof-run's */
		for (char *line = strtok_r(buf, "\n", &save); msg && line; line = strtok_r(NULL, "\n", &save)) {
			size_t l = strlen(msg);

			if (strncmp(line, "cprof check: ", 13) == 0)
				line += 13;
			snprintf(msg + l, size - l, "%s%s", l ? "; " : "", line);
		}
	}
	if (pid > 0 && waitpid(pid, &status, 0) != pid)
		status = -1;
out:
	if (out[0] >= 0)
		close(out[0]);
	if (out[1] >= 0)
		close(out[1]);
	free(copy);
	return status < 0 ? -1 : WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* Runs cprof html on the profile; its lines go to stderr. Returns its exit status, -1 if it did not run. */
static int html_page(const char *self_dir, const char *db, const char *path, int force)
{
	char cprof[PATH_MAX + 8];
	int status = 0;
	pid_t pid;

	snprintf(cprof, sizeof(cprof), "%s/cprof", self_dir);
	pid = fork();
	if (pid == 0) {
		dup2(STDERR_FILENO, STDOUT_FILENO);
		execl(cprof, "cprof", "html", "-q", db, "-o", path, force ? "-f" : (char *)NULL, (char *)NULL); /* -q: we say it */
		_exit(RUN_EXIT_INTERNAL);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static void summary(const char *self_dir, const char *db)
{
	char cprof[PATH_MAX + 8];
	pid_t pid;

	snprintf(cprof, sizeof(cprof), "%s/cprof", self_dir);
	pid = fork();
	if (pid == 0) {
		dup2(STDERR_FILENO, STDOUT_FILENO);
		execl(cprof, "cprof", "info", db, (char *)NULL);
		_exit(RUN_EXIT_INTERNAL);
	}
	if (pid > 0)
		waitpid(pid, NULL, 0);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' }, { "force", no_argument, NULL, 'f' },
		{ "quiet", no_argument, NULL, 'q' },        { "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },      { "check", required_argument, NULL, 'C' },
		{ "html", required_argument, NULL, 'H' },   { "inject-only", no_argument, NULL, 'I' },
		{ "stacks", required_argument, NULL, 'S' }, { "grace", required_argument, NULL, 'G' },
		{ "capture-range", required_argument, NULL, 'R' }, { "torch-ops", no_argument, NULL, 'T' },
		{ "delay", required_argument, NULL, 'D' },  { "duration", required_argument, NULL, 'U' },
		{ "on-demand", no_argument, NULL, 'O' },    { "max-size", required_argument, NULL, 'M' },
		{ "steps", required_argument, NULL, 'P' },  { "simulated-gpu", no_argument, NULL, 'g' },
		{ NULL, 0, NULL, 0 },
	};
	char self[PATH_MAX], self_dir[PATH_MAX - 64], lib[PATH_MAX], cprofd[PATH_MAX], unwind[PATH_MAX];
	char out[PATH_MAX], db[PATH_MAX], rundir[PATH_MAX], fifo[PATH_MAX + 16], pydir[PATH_MAX], windows[PATH_MAX + 16];
	char simdir[PATH_MAX];
	const char *output = NULL, *tmp, *check = NULL, *html = NULL, *stacks = NULL, *capture = NULL;
	char recording[256] = "";
	int opt, quiet = 0, force = 0, inject_only = 0, torch_ops = 0, sim = 0, status = 0, rc, errpipe[2], cstatus, sig = 0,
	    grace_s = 10, drain_fd = -1;
	char *command;
	pid_t collector, pid;
	struct sigaction sa, pipe_orig;
	ssize_t n;
	int child_errno = 0, closed_std = 0;
	uint64_t t_end;
	int64_t delay_ns = -1, duration_ns = -1;
	long long max_size = -1;
	int on_demand = 0, timed = 0;
	char steps_capture[96] = "";

	/* a closed stdin, stdout or stderr would be taken by our pipes (the collector's ready pipe on fd 0 or 1):
	 * held by /dev/null here, closed again for the target, which gets them as it was given them */
	for (int i = 0; i < 3; i++)
		if (fcntl(i, F_GETFD) < 0 && open("/dev/null", O_RDWR) == i)
			closed_std |= 1 << i;
	while ((opt = getopt_long(argc, argv, "+o:fqh", opts, NULL)) != -1) {
		switch (opt) {
		case 'o': output = optarg; break;
		case 'f': force = 1; break;
		case 'q': quiet = 1; break;
		case 'h': usage(stdout); return 0;
		case 'V': printf("cprof-run %s\n", CPROF_VERSION); return 0;
		case 'C': check = optarg; break;
		case 'H': html = optarg; break;
		case 'I': inject_only = 1; break;
		case 'G': {
			char *end;
			long g = strtol(optarg, &end, 10);

			if (*optarg == '\0' || *end || g < 0 || g > 86400) {
				pr_err("--grace %s: expected seconds, 0..86400", optarg);
				return RUN_EXIT_USAGE;
			}
			grace_s = (int)g;
			break;
		}
		case 'T': torch_ops = 1; break;
		case 'g': sim = 1; break;
		case 'D':
		case 'U': {
			int64_t ns = parse_seconds(optarg);

			if (ns < 0 || (opt == 'U' && ns == 0)) {
				pr_err("--%s %s: expected seconds (decimals allowed)%s", opt == 'D' ? "delay" : "duration",
				       optarg, opt == 'U' ? ", more than 0" : "");
				return RUN_EXIT_USAGE;
			}
			*(opt == 'D' ? &delay_ns : &duration_ns) = ns;
			break;
		}
		case 'O': on_demand = 1; break;
		case 'P': {
			long a, b, every = 0;
			int off = 0;

			if (sscanf(optarg, "%ld:%ld%n", &a, &b, &off) != 2 || a < 1 || b < a ||
			    (optarg[off] != '\0' && (sscanf(optarg + off, ":every=%ld%n", &every, &off) != 1 ||
						     optarg[strlen(optarg) - 1] < '0' || optarg[strlen(optarg) - 1] > '9' ||
						     every <= b - a)) ||
			    strlen(optarg) > 60) {
				pr_err("--steps %s: expected FIRST:LAST or FIRST:LAST:every=N (steps counted from 1, N > LAST-FIRST)",
				       optarg);
				return RUN_EXIT_USAGE;
			}
			snprintf(steps_capture, sizeof(steps_capture), "steps:%s", optarg);
			break;
		}
		case 'M':
			max_size = parse_size(optarg);
			if (max_size == -2) {
				int l = (int)strlen(optarg) - 2;
				char unit = optarg[l] & ~0x20; /* K, M, G or T */

				pr_err("--max-size %s: %s is ambiguous (powers of 1000 or of 1024); write %.*s%c or %.*s%ciB (powers "
				       "of 1024) or the bytes", optarg, optarg + l, l, optarg, unit, l, optarg, unit);
				return RUN_EXIT_USAGE;
			}
			if (max_size < 0 || (max_size > 0 && max_size < (1 << 20))) {
				pr_err("--max-size %s: expected a size of at least 1M (or 0: no limit), as 512M or 2G", optarg);
				return RUN_EXIT_USAGE;
			}
			break;
		case 'S':
			if (strcmp(optarg, "off") && strcmp(optarg, "sampled") && strcmp(optarg, "all")) {
				pr_err("--stacks %s: expected off, sampled or all", optarg);
				return RUN_EXIT_USAGE;
			}
			stacks = optarg;
			break;
		case 'R':
			if (strcmp(optarg, "cudaProfilerApi") &&
			    (strncmp(optarg, "nvtx:", 5) || !optarg[5] || optarg[5] == '@' || strlen(optarg) > 200 ||
			     optarg[strlen(optarg) - 1] == '@')) {
				pr_err("--capture-range %s: expected cudaProfilerApi, nvtx:NAME or nvtx:NAME@DOMAIN", optarg);
				return RUN_EXIT_USAGE;
			}
			capture = optarg;
			break;
		default: usage(stderr); return RUN_EXIT_USAGE;
		}
	}
	timed = on_demand || delay_ns >= 0 || duration_ns >= 0;
	if (steps_capture[0] && (capture || timed)) {
		pr_err("--steps and --capture-range/--delay/--duration/--on-demand choose the windows two ways: pick one");
		return RUN_EXIT_USAGE;
	}
	if (steps_capture[0])
		capture = steps_capture;
	if (on_demand && (delay_ns >= 0 || duration_ns >= 0)) {
		pr_err("--on-demand records only what cprof capture asks for: it takes no --delay or --duration");
		return RUN_EXIT_USAGE;
	}
	if (timed && capture) {
		pr_err("--capture-range and --delay/--duration/--on-demand choose the windows two ways: pick one");
		return RUN_EXIT_USAGE;
	}
	if (optind >= argc) {
		pr_err("no command given (usage: cprof-run [options] -- CMD [ARGS...])");
		return RUN_EXIT_USAGE;
	}
	/* before the run, not after it: a long run must not end in a page that cannot be written */
	if (html && !force && access(html, F_OK) == 0) {
		pr_err("%s exists; -f overwrites it", html);
		return RUN_EXIT_USAGE;
	}

	/* relocatable: the library is ../lib/libcprof.so and the collector sits next to us */
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n < 0) {
		pr_err("cannot find my own location: %s", strerror(errno));
		return RUN_EXIT_INTERNAL;
	}
	self[n] = '\0';
	tmp = dirname(self);
	if (strlen(tmp) >= sizeof(self_dir)) {
		pr_err("installation path too long");
		return RUN_EXIT_INTERNAL;
	}
	strcpy(self_dir, tmp);
	snprintf(lib, sizeof(lib), "%s/../lib/libcprof.so", self_dir);
	snprintf(cprofd, sizeof(cprofd), "%s/cprofd", self_dir);
	if (realpath(lib, self) == NULL || access(cprofd, X_OK) < 0) {
		pr_err("incomplete installation: need %s and %s", lib, cprofd);
		return RUN_EXIT_INTERNAL;
	}
	snprintf(lib, sizeof(lib), "%s", self);
	snprintf(unwind, sizeof(unwind), "%s/../lib/cprof/libunwind.so.8", self_dir);
	if (realpath(unwind, self) != NULL)
		snprintf(unwind, sizeof(unwind), "%s", self);
	else
		unwind[0] = '\0';
	/* launchers that cannot pass options set it in the environment */
	tmp = getenv("CPROF_TORCH_OPS");
	if (tmp && strcmp(tmp, "1") == 0)
		torch_ops = 1;
	snprintf(pydir, sizeof(pydir), "%s/../lib/cprof/python", self_dir);
	if (torch_ops && (realpath(pydir, self) == NULL || snprintf(pydir, sizeof(pydir), "%s", self) < 0)) {
		pr_err("incomplete installation: --torch-ops needs %s/../lib/cprof/python", self_dir);
		return RUN_EXIT_INTERNAL;
	}

	/* a bundle's (make dist, the wheel, make install) or the build tree's simulated GPU */
	snprintf(simdir, sizeof(simdir), "%s/../lib/cprof/simgpu/lib", self_dir);
	if (sim && realpath(simdir, self) == NULL) {
		snprintf(simdir, sizeof(simdir), "%s/../simgpu/lib", self_dir);
		if (realpath(simdir, self) == NULL) {
			pr_err("incomplete installation: --simulated-gpu needs %s/../lib/cprof/simgpu/lib", self_dir);
			return RUN_EXIT_INTERNAL;
		}
	}
	if (sim)
		snprintf(simdir, sizeof(simdir), "%s", self);
	/* before anything is removed (-f): a path the loader would split needs a run directory without */
	tmp = getenv("TMPDIR");
	if ((strpbrk(lib, " :") || (torch_ops && strpbrk(pydir, " :")) || (sim && strpbrk(simdir, " :"))) &&
	    strpbrk(tmp && *tmp ? tmp : "/tmp", " :")) {
		pr_err("cprof is installed under a path with a space or a colon, which LD_PRELOAD splits, and TMPDIR=%s "
		       "has one too: set TMPDIR to a directory without spaces or colons", tmp);
		return RUN_EXIT_INTERNAL;
	}

	if (output ? expand_output(output, out, sizeof(out)) < 0 : default_output(out, sizeof(out)) < 0) {
		pr_err("profile name too long");
		return RUN_EXIT_USAGE;
	}
	/* the collector runs in / like a daemon would not; give it an absolute path */
	if (out[0] == '/')
		snprintf(db, sizeof(db), "%s", out);
	else {
		char cwd[PATH_MAX];

		if (getcwd(cwd, sizeof(cwd)) == NULL || snprintf(db, sizeof(db), "%s/%s", cwd, out) >= (int)sizeof(db)) {
			pr_err("profile path too long");
			return RUN_EXIT_USAGE;
		}
	}

	/* the directory resolved: SQLite's no-follow open refuses a path through a symlinked directory (a home on
	 * another disk, /tmp -> /private/tmp), which is the user's choice, not a planted link; the file itself
	 * stays unfollowed */
	{
		char dir[PATH_MAX], real[PATH_MAX], *slash = strrchr(db, '/');

		snprintf(dir, sizeof(dir), "%.*s", slash == db ? 1 : (int)(slash - db), db);
		if (slash[1] && realpath(dir, real) != NULL && strcmp(real, dir) != 0) {
			char name[PATH_MAX];

			snprintf(name, sizeof(name), "%s", slash + 1);
			if (snprintf(db, sizeof(db), "%s/%s", strcmp(real, "/") ? real : "", name) >= (int)sizeof(db)) {
				pr_err("profile path too long");
				return RUN_EXIT_USAGE;
			}
		}
	}
	/* before anything is created or removed: SQLite would refuse it after the collector made the file */
	if (strlen(db) > CPROF_SQLITE_PATH_MAX) {
		pr_err("profile path %.60s... is %zu bytes long; SQLite opens at most %d: choose a shorter -o", db,
		       strlen(db), CPROF_SQLITE_PATH_MAX);
		return RUN_EXIT_USAGE;
	}
	/* before anything is created or removed, and before CMD runs: a typo in the gate must not cost the run */
	if (check) {
		char msg[512];
		int g = gate(self_dir, db, check, 1, msg, sizeof(msg));

		if (g == CHECK_EXIT_USAGE) {
			pr_err("--check: %s; nothing was run", msg[0] ? msg : "options refused by cprof check");
			return RUN_EXIT_USAGE;
		}
		if (g != 0) {
			pr_err("cannot run %s/cprof check to validate --check (status %d)", self_dir, g);
			return RUN_EXIT_INTERNAL;
		}
	}
	if (html && same_file(html, out)) {
		pr_err("--html %s is the profile %s itself; choose another page name", html, out);
		return RUN_EXIT_USAGE;
	}
	if (profile_exists(out)) {
		if (!force) {
			pr_err("%s exists; pass -f to overwrite it or choose another -o", out);
			return RUN_EXIT_USAGE;
		}
		if (profile_in_use(out)) {
			pr_err("%s is being written by another cprof-run now; choose another -o", out);
			return RUN_EXIT_USAGE;
		}
		remove_profile(out);
	}
	tmp = getenv("TMPDIR");
	snprintf(rundir, sizeof(rundir), "%s/cprof-run-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (mkdtemp(rundir) == NULL) {
		pr_err("cannot create a run directory in %s: %s", tmp && *tmp ? tmp : "/tmp", strerror(errno));
		return RUN_EXIT_INTERNAL;
	}
	snprintf(fifo, sizeof(fifo), "%s/events.fifo", rundir);
	/* the umask only takes bits away (0700 & ~umask): set the modes exactly, whatever the umask is;
	 * 0600 in a 0700 directory is what keeps other users' processes off the FIFO */
	if (chmod(rundir, 0700) < 0 || mkfifo(fifo, 0600) < 0 || chmod(fifo, 0600) < 0) {
		pr_err("cannot create %s: %s", fifo, strerror(errno));
		unlink(fifo);
		rmdir(rundir);
		return RUN_EXIT_INTERNAL;
	}
	if ((rc = loader_path(rundir, "libcprof.so", lib, sizeof(lib))) < 0 ||
	    (torch_ops && (rc = loader_path(rundir, "python", pydir, sizeof(pydir))) < 0) ||
	    (sim && (rc = loader_path(rundir, "simgpu", simdir, sizeof(simdir))) < 0)) {
		pr_err("cannot link cprof's library into %s: %s", rundir, strerror(-rc));
		remove_rundir(rundir, fifo);
		return RUN_EXIT_INTERNAL;
	}

	snprintf(windows, sizeof(windows), "%s/%s", rundir, CPROF_WINDOWS_FILE);
	if (max_size < 0)
		max_size = (long long)default_max_size(db);

	if (sim && !quiet)
		fprintf(stderr, "cprof: %s runs on the simulated GPU (no GPU is used; kernels do not compute, their times are "
			"modelled)\n", cprof_tx(argv[optind]));
	command = join_command(argv + optind);
	/* the target gets the SIGPIPE disposition we were given (a caller may ignore it), not ours */
	sigaction(SIGPIPE, NULL, &pipe_orig);
	signal(SIGPIPE, SIG_IGN);
	/* what opens the windows, for the report of a run whose window never opened (empty: the whole run) */
	if (steps_capture[0])
		snprintf(recording, sizeof(recording), "--steps %s", steps_capture + 6);
	else if (capture)
		snprintf(recording, sizeof(recording), "--capture-range %s", capture);
	else if (on_demand)
		snprintf(recording, sizeof(recording), "--on-demand");
	else if (timed && delay_ns >= 0 && duration_ns > 0)
		snprintf(recording, sizeof(recording), "--delay %.3f --duration %.3f", delay_ns / 1e9, duration_ns / 1e9);
	else if (timed && delay_ns >= 0)
		snprintf(recording, sizeof(recording), "--delay %.3f", delay_ns / 1e9);
	else if (timed)
		snprintf(recording, sizeof(recording), "--duration %.3f", duration_ns / 1e9);
	collector = start_collector(cprofd, fifo, db, command ? command : "?", recording, &drain_fd,
				    (unsigned long long)max_size);
	free(command);
	if (collector < 0) {
		pr_err("the collector did not start; see its message above");
		remove_rundir(rundir, fifo);
		return RUN_EXIT_INTERNAL;
	}
	/* held until we exit: the summary, the page and the gate below read this run's profile, not one a
	 * second cprof-run -f put at the same path meanwhile */
	{
		int lock = open(db, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);

		if (lock >= 0 && flock(lock, LOCK_SH) < 0)
			close(lock);
	}

	if (pipe2(errpipe, O_CLOEXEC) < 0) {
		pr_err("pipe: %s", strerror(errno));
		return RUN_EXIT_INTERNAL;
	}
	if (timed) {
		/* the clock starts now, just before CMD does */
		uint64_t t0 = cprof_now_ns(), ws = 0, we = 0;

		if (!on_demand) {
			ws = t0 + (uint64_t)(delay_ns > 0 ? delay_ns : 0);
			we = duration_ns > 0 ? ws + (uint64_t)duration_ns : 0;
		}
		/* the window's why: the options, as META recording has them (--on-demand's windows say their own) */
		rc = cprof_windows_init(windows, ws, we, on_demand ? "" : recording);
		if (rc < 0) {
			pr_err("cannot write %s: %s", windows, strerror(-rc));
			return RUN_EXIT_INTERNAL;
		}
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = forward;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	pid = fork();
	if (pid < 0) {
		pr_err("fork: %s", strerror(errno));
		return RUN_EXIT_INTERNAL;
	}
	if (pid == 0) {
		int e;

		sigaction(SIGPIPE, &pipe_orig, NULL);
		close(errpipe[0]);
		if (target_env(lib, unwind[0] ? unwind : NULL, fifo, inject_only, stacks, capture, torch_ops ? pydir : NULL,
			       timed ? windows : NULL, sim ? simdir : NULL) < 0) {
			pr_err("cannot set up the environment");
			_exit(RUN_EXIT_INTERNAL);
		}
		for (int i = 0; i < 3; i++)
			if (closed_std & 1 << i)
				close(i);
		execvp(argv[optind], argv + optind);
		e = errno;
		if (write(errpipe[1], &e, sizeof(e)) < 0) {
			/* the parent sees EOF and reports a generic failure */
		}
		_exit(e == ENOENT ? RUN_EXIT_NOTFOUND : RUN_EXIT_NOEXEC);
	}
	target_pid = pid;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sigaction(SIGQUIT, &sa, NULL);
	close(errpipe[1]);
	if (read(errpipe[0], &child_errno, sizeof(child_errno)) == sizeof(child_errno))
		pr_err("cannot execute %s: %s", argv[optind], strerror(child_errno));
	close(errpipe[0]);
	if (on_demand && !quiet)
		fprintf(stderr, "cprof: recording on demand: cprof capture %d --duration S (or cprof capture %s ...)\n",
			(int)pid, rundir);

	while (waitpid(pid, &cstatus, 0) < 0) {
		if (errno != EINTR) {
			pr_err("waitpid: %s", strerror(errno));
			cstatus = RUN_EXIT_INTERNAL << 8;
			break;
		}
	}
	if (WIFSIGNALED(cstatus)) {
		sig = WTERMSIG(cstatus);
		status = 128 + sig;
	} else {
		status = WEXITSTATUS(cstatus);
	}

	/* the collector learns of the interruption before RUN_END (a queued signal is handled first) */
	if (interrupted_by) {
		union sigval v = { .sival_int = interrupted_by };

		sigqueue(collector, SIGUSR1, v);
	}
	/* the target's writes are all in the FIFO now; the collector reads them all before it stops */
	if (send_run_end(collector, status, sig) < 0)
		pr_warn("collector not reachable at the end of the run (killed?); profile kept as it was, marked incomplete");
	t_end = cprof_now_ns();
	rc = wait_collector(collector, drain_fd, grace_s);
	t_end = cprof_now_ns() - t_end;
	remove_byes(rundir);
	if (timed) {
		char side[PATH_MAX + 32];

		unlink(windows);
		snprintf(side, sizeof(side), "%s.lock", windows);
		unlink(side);
		snprintf(side, sizeof(side), "%s.new", windows);
		unlink(side);
	}
	remove_rundir(rundir, fifo);
	if (rc != 0)
		pr_warn("collector exited with status %d; the profile may be incomplete", rc);
	if (!quiet && t_end > 1000000000ull)
		/* the collector spooled the run at pipe speed; its writer stored the backlog after the exit */
		fprintf(stderr, "cprof: the profile took %.1f s to finish after the program exited (storing what the collector had spooled)\n",
			t_end / 1e9);
	if (!quiet && access(db, R_OK) == 0)
		summary(self_dir, db);
	if (html && access(db, R_OK) == 0) {
		/* the page is a by-product: its failure is reported, CMD's status stays */
		int h = html_page(self_dir, db, html, force);

		if (h != 0)
			pr_warn("cprof html exited %d; no page written to %s", h, html);
		else if (!quiet)
			fprintf(stderr, "cprof: report page %s\n", html);
	}
	if (check) {
		int g = gate(self_dir, db, check, 0, NULL, 0);

		if (g != 0) {
			pr_err("gate failed (cprof check exited %d)", g);
			return 1;
		}
	}
	return status;
}

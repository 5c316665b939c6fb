/* cprofd: spools framed batches from the run's FIFO at pipe speed; its writer thread stores them in the profile. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <libgen.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#define PR_FMT "cprofd"
#include "common/clock.h"
#include "common/log.h"
#include "common/version.h"
#include "collector/ingest.h"
#include "collector/spool.h"
#include "collector/store.h"

enum { EXIT_OK = 0, EXIT_STORE = 1, EXIT_USAGE = 2 };

#define QUIET_MS 50 /* after RUN_END: stop when the FIFO stayed empty this long */
#define INTAKE_COALESCE_MS 2
#define INTAKE_BIG_READ (256 << 10)
#define TERM_GRACE_NS 2000000000ull /* SIGTERM: the writer stores for this long more, then counts the rest */

static volatile sig_atomic_t stop_requested;
static volatile sig_atomic_t interrupt_signal;
static pid_t parent;                         /* cprof-run, which forked us: the only one that may end the run */
static volatile sig_atomic_t run_end_value = -1; /* cprof-run's RUN_END: status | term_signal << 16 */

static void on_term(int sig)
{
	(void)sig;
	stop_requested = 1;
}

/* Whether a process that said HELLO and no BYE still exists (and may still write): a zombie does not. */
static int producer_alive(const struct cprof_spool *sp)
{
	const uint32_t *pids;
	size_t n = cprof_spool_live(sp, &pids);

	for (size_t i = 0; i < n; i++) {
		char path[64], buf[256], *paren;
		ssize_t r;
		int fd;

		if (kill((pid_t)pids[i], 0) != 0 && errno != EPERM)
			continue;
		snprintf(path, sizeof(path), "/proc/%u/stat", pids[i]);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		r = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
		if (fd >= 0)
			close(fd);
		if (r > 0) {
			buf[r] = '\0';
			paren = strrchr(buf, ')');
			if (paren && paren[1] == ' ' && (paren[2] == 'Z' || paren[2] == 'X'))
				continue;
		}
		return 1;
	}
	return 0;
}

/* cprof-run says, with sigqueue before RUN_END, that it forwarded an interrupting signal to the target. */
static void on_interrupted(int sig, siginfo_t *si, void *uctx)
{
	(void)sig;
	(void)uctx;
	if (si && si->si_code == SI_QUEUE && si->si_pid == getppid())
		interrupt_signal = si->si_value.sival_int;
}

/* The run's end comes from cprof-run as a queued signal, whose sender the kernel vouches for (si_pid):
 * a RUN_END frame in the FIFO could come from any process of the job (issue 21, item 6). */
static void on_run_end(int sig, siginfo_t *si, void *uctx)
{
	(void)sig;
	(void)uctx;
	if (si && si->si_code == SI_QUEUE && si->si_pid == parent && si->si_value.sival_int >= 0)
		run_end_value = si->si_value.sival_int;
}

/* The BYEs processes wrote beside the FIFO because it stayed full at their exit (this collector stopped or
 * starved): read, applied, removed. Only regular files of ours, a frame long. */
static void late_byes(struct cprof_ingest *in, const char *fifo)
{
	char dir[4096], path[4096 + 300];
	const char *dn;
	struct dirent *e;
	DIR *d;

	snprintf(dir, sizeof(dir), "%s", fifo);
	dn = dirname(dir);
	d = opendir(dn);
	if (d == NULL)
		return;
	while ((e = readdir(d)) != NULL) {
		uint8_t buf[CPROF_WIRE_MAX_FRAME];
		unsigned long long start;
		unsigned pid;
		struct stat st;
		ssize_t n;
		int fd;

		if (sscanf(e->d_name, "bye.%u.%llu", &pid, &start) != 2)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dn, e->d_name);
		fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
		if (fd < 0)
			continue;
		n = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid() ? read(fd, buf, sizeof(buf)) : -1;
		close(fd);
		unlink(path);
		if (n > 0 && cprof_ingest_late_bye(in, buf, (size_t)n, start) < 0)
			pr_dbg("%s: not applied", e->d_name);
	}
	closedir(d);
}

static void usage(FILE *f)
{
	fprintf(f, "usage: cprofd --fifo PATH --db PROFILE.db [--ready-fd N] [--command TEXT] [--max-size BYTES]\n"
		   "              [--recording TEXT]\n"
		   "Collector of cprof; started by cprof-run, not by hand.\n");
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "fifo", required_argument, NULL, 'f' },   { "db", required_argument, NULL, 'd' },
		{ "ready-fd", required_argument, NULL, 'r' }, { "command", required_argument, NULL, 'c' },
		{ "max-size", required_argument, NULL, 'm' }, { "recording", required_argument, NULL, 'R' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *fifo = NULL, *db = NULL, *command = NULL, *recording = NULL;
	int ready_fd = -1, fd, opt, clean = 0, rc = EXIT_OK;
	unsigned long long max_size = 0;
	struct cprof_store *store = NULL;
	struct cprof_ingest in;
	struct sigaction sa;
	uint64_t quiet_since = 0, deadline = 0;
	struct cprof_spool *spool = NULL;
	struct cprof_spool_stats st = { 0 };
	struct rusage ru;
	int run_ended = 0;
	uint64_t run_end_ns = 0;
	const char *dbg = getenv("CPROF_DEBUG");

	if (dbg && *dbg >= '0' && *dbg <= '3')
		cprof_log_level = *dbg - '0';
	while ((opt = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (opt) {
		case 'f': fifo = optarg; break;
		case 'd': db = optarg; break;
		case 'r': ready_fd = atoi(optarg); break;
		case 'c': command = optarg; break;
		case 'm': max_size = strtoull(optarg, NULL, 10); break;
		case 'R': recording = optarg; break;
		case 'h': usage(stdout); return EXIT_OK;
		default: usage(stderr); return EXIT_USAGE;
		}
	}
	if (fifo == NULL || db == NULL) {
		usage(stderr);
		return EXIT_USAGE;
	}
	parent = getppid();
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_term;
	sigaction(SIGTERM, &sa, NULL);
	/* Ctrl-C belongs to the target; the collector drains until cprof-run says the run ended */
	signal(SIGINT, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	signal(SIGPIPE, SIG_IGN);
	/* a file size limit (ulimit -f) makes writes fail with EFBIG, which the store reports, instead of killing us */
	signal(SIGXFSZ, SIG_IGN);
	sa.sa_sigaction = on_interrupted;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigaction(SIGUSR1, &sa, NULL);
	sa.sa_sigaction = on_run_end;
	sigaction(SIGUSR2, &sa, NULL);

	/* O_RDWR: the FIFO always has a writer, so reads never see EOF between processes */
	fd = open(fifo, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		pr_err("cannot open FIFO %s: %s", fifo, strerror(errno));
		return EXIT_USAGE;
	}
	/* a bigger pipe absorbs bursts while SQLite commits */
	fcntl(fd, F_SETPIPE_SZ, 1 << 20);
	if (cprof_store_open(&store, db) < 0)
		return EXIT_STORE;
	if (command)
		cprof_store_meta(store, "command", command);
	/* what was to open the recording windows (cprof-run's option; none: the whole run) */
	if (recording && *recording)
		cprof_store_meta(store, "recording", recording);
	cprof_store_meta_int(store, "collector_pid", getpid());
	cprof_store_commit(store, 1);
	if (cprof_ingest_init(&in, store) < 0) {
		pr_err("out of memory");
		return EXIT_STORE;
	}
	in.max_bytes = max_size;
	/* RUN_END frames in the FIFO are forgeries: the real one is cprof-run's signal */
	in.run_end_by_signal = 1;
	/* from here until cprof_spool_finish, the writer thread alone uses in and store */
	if (cprof_spool_open(&spool, db, &in) < 0)
		return EXIT_STORE;
	cprof_spool_check_hellos(spool, parent);
	/* the same pipe says later when the intake is done ('D'): cprof-run's grace period for processes left
	 * running covers the intake, not the writer catching up */
	if (ready_fd >= 0 && write(ready_fd, "R", 1) != 1)
		pr_warn("cannot tell cprof-run that the collector is ready");

	for (;;) {
		ssize_t n = cprof_spool_intake(spool, fd, run_ended ? 10 : 100);

		/* every frame a producer writes would wake this thread once, and each wake-up takes a core from the
		 * program (issue 26): after a small read, let the pipe fill for INTAKE_COALESCE_MS. The pipe holds
		 * 1 MiB, 20 ms of a 500k launches/s producer, so nothing waits on it; a big read goes on at once. */
		if (n > 0 && n < INTAKE_BIG_READ && !run_ended && !stop_requested) {
			struct timespec ts = { 0, INTAKE_COALESCE_MS * 1000000l };

			nanosleep(&ts, NULL);
		}

		if (cprof_spool_failed(spool)) {
			/* the store failed (disk full, file size limit): what was committed stays, consistent; the
			 * producers see the collector go and carry on unprofiled */
			pr_err("cannot write the profile %s; stopping, the profile keeps what was committed", db);
			rc = EXIT_STORE;
			break;
		}
		if (n < 0) {
			pr_err("reading the FIFO: %s", strerror((int)-n));
			rc = EXIT_STORE;
			break;
		}
		run_ended = run_end_value >= 0;
		if (run_ended && run_end_ns == 0)
			run_end_ns = cprof_now_ns(); /* the signal interrupted the poll: this is when it came */
		if (run_ended) {
			/* the target is gone: what it wrote is already in the pipe; stop once it is empty and no
			 * process it started still runs (cprof-run bounds that wait: --grace, then SIGTERM) */
			uint64_t now = cprof_now_ns();

			if (n > 0 || quiet_since == 0)
				quiet_since = now;
			else if (now - quiet_since > QUIET_MS * 1000000ull && !producer_alive(spool)) {
				clean = 1;
				break;
			}
		}
		if (stop_requested) {
			/* what is in the pipe, within a bound: a process left running may write for ever */
			uint64_t until = cprof_now_ns() + 2000000000ull;

			while (cprof_spool_intake(spool, fd, 0) > 0 && cprof_now_ns() < until)
				;
			clean = run_end_value >= 0;
			deadline = cprof_now_ns() + TERM_GRACE_NS;
			break;
		}
		if (getppid() != parent) {
			pr_warn("cprof-run went away; finalising the profile");
			while (cprof_spool_intake(spool, fd, 0) > 0)
				;
			break;
		}
	}
	/* the FIFO is no longer read: the writer catches up with the spool (or stops at the deadline) */
	if (ready_fd >= 0) {
		if (write(ready_fd, "D", 1) != 1)
			pr_dbg("cprof-run no longer listens");
		close(ready_fd);
	}
	if (cprof_spool_finish(spool, deadline, &st) < 0 && rc != EXIT_STORE) {
		/* the store failed while the writer caught up after the run */
		pr_err("cannot write the profile %s; the profile keeps what was committed", db);
		rc = EXIT_STORE;
	}
	getrusage(RUSAGE_SELF, &ru);
	in.lost_spool_full = st.lost_full_records;
	in.lost_unstored = st.lost_unstored_records;
	if (!in.store_failed) {
		cprof_store_meta_int(store, "spool_bytes", (int64_t)st.bytes);
		cprof_store_meta_int(store, "spool_records", (int64_t)st.records);
		cprof_store_meta_int(store, "spool_peak_lag_bytes", (int64_t)st.peak_lag_bytes);
		cprof_store_meta_int(store, "spool_lost_frames", (int64_t)st.lost_full_frames);
		/* processes whose frames came through shared memory, and how many bytes (the FIFO carried the rest) */
		cprof_store_meta_int(store, "ring_processes", (int64_t)st.rings);
		cprof_store_meta_int(store, "ring_bytes", (int64_t)st.ring_bytes);
		cprof_store_meta_int(store, "intake_cpu_ns", (int64_t)st.intake_cpu_ns);
		cprof_store_meta_int(store, "writer_cpu_ns", (int64_t)st.writer_cpu_ns);
		/* what the writer took while the program ran, and at what priority (issue 26) */
		cprof_store_meta_int(store, "writer_run_cpu_ns", (int64_t)st.writer_run_cpu_ns);
		cprof_store_meta(store, "writer_priority", st.writer_priority ? st.writer_priority : "normal");
		cprof_store_meta_int(store, "catchup_ns", (int64_t)st.catchup_ns);
		cprof_store_meta_int(store, "collector_max_rss_kb", ru.ru_maxrss);
	}
	if (!in.store_failed)
		late_byes(&in, fifo);
	in.interrupt_signal = interrupt_signal;
	in.suspect_hellos = st.suspect_hellos;
	for (size_t i = 0; !in.store_failed && i < st.suspect_hellos && i < sizeof(st.suspect_pids) / sizeof(st.suspect_pids[0]); i++)
		cprof_store_diag(store, st.suspect_pids[i],
				 "suspect HELLO: this pid was another user's or not a process of the run when it said HELLO"
				 " (a forged frame, or a daemon already detached from the run)");
	if (run_end_value >= 0) {
		in.run_ended = 1;
		in.run_end_pid = (uint32_t)parent;
		in.run_end.exit_status = run_end_value & 0xffff;
		in.run_end.term_signal = (run_end_value >> 16) & 0x7fff;
		in.run_end.end_ns = run_end_ns ? run_end_ns : cprof_now_ns();
	}
	if (cprof_ingest_finish(&in, clean) < 0) {
		if (rc != EXIT_STORE)
			pr_err("cannot write the profile %s; it keeps what was committed, marked incomplete", db);
		rc = EXIT_STORE;
	}
	cprof_ingest_free(&in);
	if (cprof_store_close(store) < 0)
		rc = EXIT_STORE;
	close(fd);
	if (getppid() != parent) {
		/* cprof-run was killed (SIGKILL: it could not clean up): its run directory goes with us */
		char dir[4096];

		snprintf(dir, sizeof(dir), "%s", fifo);
		unlink(fifo);
		rmdir(dirname(dir));
	}
	return rc;
}

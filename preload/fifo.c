/* The FIFO to the collector: the transport under the flusher's drain and crash policy (preload/fifo.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define PR_FMT "cprof: fifo"
#include "common/log.h"
#include "preload/fifo.h"

unsigned long long cprof_fifo_mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000 + (unsigned long long)ts.tv_nsec / 1000000;
}

void cprof_fifo_consume_sigpipe(void)
{
	sigset_t set;
	struct timespec zero = { 0, 0 };
	int saved = errno;

	sigemptyset(&set);
	sigaddset(&set, SIGPIPE);
	while (sigtimedwait(&set, NULL, &zero) == SIGPIPE)
		;
	errno = saved; /* the last sigtimedwait leaves EAGAIN: the caller's error is the write's */
}

int cprof_fifo_is_ours(const struct cprof_fifo *f, int fd)
{
	struct stat st;

	return fd >= 0 && fstat(fd, &st) == 0 && S_ISFIFO(st.st_mode) && st.st_dev == f->dev && st.st_ino == f->ino;
}

int cprof_fifo_open(const struct cprof_fifo *f)
{
	int fd = open(f->path, O_WRONLY | O_NONBLOCK | O_CLOEXEC | O_NOFOLLOW);

	if (fd < 0)
		return -errno;
	if (!cprof_fifo_is_ours(f, fd)) {
		close(fd);
		return -ESTALE;
	}
	if (fd < 3) {
		/* never on 0-2: a stray log line from this thread must not land in the FIFO */
		int hi = fcntl(fd, F_DUPFD_CLOEXEC, 3);

		close(fd);
		if (hi < 0)
			return -errno;
		fd = hi;
	}
	return fd;
}

/* Closes every descriptor of this thread's (private) table; debug mode keeps 0-2 for its log lines. */
static void close_all(void)
{
	int first = cprof_log_level >= CPROF_LOG_DBG ? 3 : 0;
	DIR *d;
	struct dirent *e;

	if (syscall(SYS_close_range, first, ~0U, 0) == 0)
		return;
	/* kernels before 5.9: walk this thread's table (/proc/self/fd is the main thread's) */
	d = opendir("/proc/thread-self/fd");
	if (d == NULL)
		return;
	while ((e = readdir(d)) != NULL) {
		int fd = atoi(e->d_name);

		if (e->d_name[0] >= '0' && e->d_name[0] <= '9' && fd != dirfd(d) && fd >= first)
			close(fd);
	}
	closedir(d);
}

/* A descriptor table of our own: the program's close_range/closefrom/dup2 cannot touch the FIFO, and nothing
 * of the program's stays open in it (a pipe the program closes sees EOF). */
void cprof_fifo_isolate(struct cprof_fifo *f)
{
	if (!f->want_private)
		return;
	if (unshare(CLONE_FILES) != 0) {
		/* seccomp may forbid unshare (containers): the shared table is checked before every write */
		pr_dbg("unshare(CLONE_FILES): %s; sharing the program's descriptor table", strerror(errno));
		return;
	}
	close_all();
	f->private_fds = 1;
}

/* With a shared descriptor table the program may have closed our FIFO and reused its number (close_range,
 * dup2): write only to a descriptor that is still our FIFO, reopen it by path otherwise. */
int cprof_fifo_usable(struct cprof_fifo *f)
{
	int fd;

	if (f->private_fds || cprof_fifo_is_ours(f, f->fd))
		return 1;
	/* the number is not ours any more: forget it, never close it (it is the program's now) */
	f->fd = -1;
	fd = cprof_fifo_open(f);
	if (fd < 0)
		return 0;
	f->fd = fd;
	return 1;
}

int cprof_fifo_wait(int fd, unsigned long long deadline_ms)
{
	unsigned long long now = cprof_fifo_mono_ms();
	struct pollfd p = { .fd = fd, .events = POLLOUT };

	if (now >= deadline_ms)
		return -EAGAIN;
	poll(&p, 1, (int)(deadline_ms - now > 10 ? 10 : deadline_ms - now));
	return 0;
}

int cprof_fifo_write(int fd, const void *buf, size_t len, unsigned long long deadline_ms)
{
	for (;;) {
		ssize_t n = write(fd, buf, len);
		int err;

		if (n == (ssize_t)len)
			return 0;
		if (n >= 0)
			return -EIO;
		err = errno;
		if (err == EINTR)
			continue;
		if (err == EAGAIN) {
			if (cprof_fifo_wait(fd, deadline_ms) < 0)
				return -EAGAIN;
			continue;
		}
		if (err == EPIPE)
			cprof_fifo_consume_sigpipe();
		return -err;
	}
}

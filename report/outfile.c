/* Output files (traces, pages) written next to their target and moved in place only when complete. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/log.h"
#include "report/cprof.h"

/* Set while the temporary file exists, so an interrupted export removes it. */
static char tmp_path[PATH_MAX + 32];
/* Where the finished file goes: the target, or what a symlink target points to (the link stays a link). */
static char final_path[PATH_MAX];
/* Set when the target is a device, a FIFO or a socket (/dev/null, /dev/stdout): written through, in place. */
static int direct;

static void on_signal(int sig)
{
	if (tmp_path[0])
		unlink(tmp_path);
	signal(sig, SIG_DFL);
	raise(sig);
}

/* The descriptor a /dev/stdout, /dev/stderr, /dev/fd/N or /proc/self/fd/N target names, or -1: such a target
 * is written through that descriptor (its offset and mode as the shell set them up), whatever it is. */
static int named_fd(const char *target)
{
	const char *n = NULL;
	char *end;
	long v;

	if (strcmp(target, "/dev/stdout") == 0)
		return STDOUT_FILENO;
	if (strcmp(target, "/dev/stderr") == 0)
		return STDERR_FILENO;
	if (strncmp(target, "/dev/fd/", 8) == 0)
		n = target + 8;
	else if (strncmp(target, "/proc/self/fd/", 14) == 0)
		n = target + 14;
	if (n == NULL || *n < '0' || *n > '9')
		return -1;
	v = strtol(n, &end, 10);
	return *end || v > INT_MAX ? -1 : (int)v;
}

int cprof_out_open(const char *target, FILE **f)
{
	struct sigaction sa;
	struct stat st;
	mode_t mask;
	int fd;

	direct = 0;
	/* "-": standard output, as for every tool that writes a file */
	if (!strcmp(target, "-")) {
		*f = stdout;
		return 0;
	}
	if (stat(target, &st) == 0 && S_ISDIR(st.st_mode))
		return -EISDIR;
	fd = named_fd(target);
	if (fd >= 0 || (stat(target, &st) == 0 && !S_ISREG(st.st_mode))) {
		/* never renamed over or unlinked: the device, pipe or descriptor is the user's, not a file of ours */
		fd = fd >= 0 ? fcntl(fd, F_DUPFD_CLOEXEC, 3) : open(target, O_WRONLY | O_NOCTTY | O_CLOEXEC);
		if (fd < 0)
			return -errno;
		if ((*f = fdopen(fd, "w")) == NULL) {
			int err = errno;

			close(fd);
			return -err;
		}
		direct = 1;
		setvbuf(*f, NULL, _IOFBF, 1 << 20);
		return 0;
	}
	/* a link to a regular file: the file is replaced, the link stays */
	if (lstat(target, &st) == 0 && S_ISLNK(st.st_mode)) {
		if (realpath(target, final_path) == NULL)
			return -errno;
		target = final_path;
	} else if (snprintf(final_path, sizeof(final_path), "%s", target) >= (int)sizeof(final_path)) {
		return -ENAMETOOLONG;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	if (snprintf(tmp_path, sizeof(tmp_path), "%s.tmp.XXXXXX", target) >= (int)sizeof(tmp_path)) {
		tmp_path[0] = '\0';
		return -ENAMETOOLONG;
	}
	fd = mkstemp(tmp_path);
	if (fd < 0) {
		tmp_path[0] = '\0';
		return -errno;
	}
	/* mkstemp makes 0600; a trace or a page is an ordinary output file */
	mask = umask(0);
	umask(mask);
	if (fchmod(fd, 0666 & ~mask) < 0 || (*f = fdopen(fd, "w")) == NULL) {
		int err = errno;

		close(fd);
		unlink(tmp_path);
		tmp_path[0] = '\0';
		return -err;
	}
	setvbuf(*f, NULL, _IOFBF, 1 << 20);
	return 0;
}

int cprof_out_check(const char *who, const char *target, char *const *inputs, int n, int force, int regular_only)
{
	struct stat to, from;

	if (stat(target, &to) != 0)
		return 0;
	for (int i = 0; i < n; i++)
		/* the same file under another name or through a link: writing it would destroy what is read */
		if (stat(inputs[i], &from) == 0 && from.st_dev == to.st_dev && from.st_ino == to.st_ino) {
			cprof_log(CPROF_LOG_ERR, who, "%s is the profile %s itself; choose another output", target, inputs[i]);
			return -EINVAL;
		}
	if (S_ISDIR(to.st_mode)) {
		cprof_log(CPROF_LOG_ERR, who, "%s is a directory; name the output file", target);
		return -EISDIR;
	}
	if (regular_only && !S_ISREG(to.st_mode)) {
		cprof_log(CPROF_LOG_ERR, who, "%s is not a regular file; a profile is written to one", target);
		return -EINVAL;
	}
	if (!force) {
		cprof_log(CPROF_LOG_ERR, who, "%s exists; -f overwrites it", target);
		return -EEXIST;
	}
	return 0;
}

void cprof_out_abort(FILE *f)
{
	if (f == stdout)
		return;
	fclose(f);
	if (direct)
		return;
	if (tmp_path[0])
		unlink(tmp_path);
	tmp_path[0] = '\0';
}

int cprof_out_finish(FILE *f, const char *target, int force)
{
	int ret = 0;

	if (f == stdout)
		return fflush(f) != 0 || ferror(f) ? -(errno ? errno : EIO) : 0;
	if (direct) {
		/* no fsync: a pipe or a device has nothing to sync (EINVAL) */
		if (fflush(f) != 0 || ferror(f))
			ret = -(errno ? errno : EIO);
		if (fclose(f) != 0 && ret == 0)
			ret = -(errno ? errno : EIO);
		direct = 0;
		return ret;
	}
	target = final_path;
	if (fflush(f) != 0 || ferror(f) || fsync(fileno(f)) != 0)
		ret = -(errno ? errno : EIO);
	if (fclose(f) != 0 && ret == 0)
		ret = -(errno ? errno : EIO);
	if (ret < 0)
		goto out;
	if (force) {
		if (rename(tmp_path, target) != 0)
			ret = -errno;
		goto out;
	}
	/* link() refuses an existing target, so a file created meanwhile is not overwritten either */
	if (link(tmp_path, target) == 0)
		goto out;
	ret = -errno;
	if (ret == -EEXIST)
		goto out;
	/* file systems without hard links: the check and the rename are two steps there */
	if (access(target, F_OK) == 0)
		ret = -EEXIST;
	else if (rename(tmp_path, target) == 0)
		ret = 0;
out:
	unlink(tmp_path);
	tmp_path[0] = '\0';
	return ret;
}

void cprof_out_said(const char *cmd, const char *target, const char *what)
{
	struct stat st;
	char size[32] = "";

	/* standard output is the data itself: nothing may follow it there, and stderr would only be noise */
	if (!strcmp(target, "-") || stat(target, &st) != 0)
		return;
	if (st.st_size >= 10 << 20)
		snprintf(size, sizeof(size), "%lld MB", (long long)(st.st_size + 500000) / 1000000);
	else if (st.st_size >= 10000)
		snprintf(size, sizeof(size), "%lld kB", (long long)(st.st_size + 500) / 1000);
	else
		snprintf(size, sizeof(size), "%lld bytes", (long long)st.st_size);
	fprintf(stderr, "%s: wrote %s (%s%s%s)\n", cmd, cprof_tx(target), what ? what : "", what ? ", " : "", size);
}

int cprof_out_copy(const char *path, FILE *to)
{
	char buf[1 << 16];
	FILE *f = fopen(path, "rb");
	size_t n;
	int ret = 0;

	if (f == NULL)
		return -errno;
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		if (fwrite(buf, 1, n, to) != n) {
			ret = -(errno ? errno : EIO);
			break;
		}
	if (ret == 0 && ferror(f))
		ret = -EIO;
	fclose(f);
	if (ret == 0 && fflush(to) != 0)
		ret = -(errno ? errno : EIO);
	return ret;
}

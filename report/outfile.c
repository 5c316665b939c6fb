/* Output files (traces, pages) written next to their target and moved in place only when complete. */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "report/cprof.h"

/* Set while the temporary file exists, so an interrupted export removes it. */
static char tmp_path[PATH_MAX + 32];

static void on_signal(int sig)
{
	if (tmp_path[0])
		unlink(tmp_path);
	signal(sig, SIG_DFL);
	raise(sig);
}

int cprof_out_open(const char *target, FILE **f)
{
	struct sigaction sa;
	mode_t mask;
	int fd;

	/* "-": standard output, as for every tool that writes a file */
	if (!strcmp(target, "-")) {
		*f = stdout;
		return 0;
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

void cprof_out_abort(FILE *f)
{
	if (f == stdout)
		return;
	fclose(f);
	if (tmp_path[0])
		unlink(tmp_path);
	tmp_path[0] = '\0';
}

int cprof_out_finish(FILE *f, const char *target, int force)
{
	int ret = 0;

	if (f == stdout)
		return fflush(f) != 0 || ferror(f) ? -(errno ? errno : EIO) : 0;
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

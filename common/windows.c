/* The recording-window schedule file: one window a line, "NUMBER START_NS END_NS WHY", replaced whole by rename. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/windows.h"

#define WINDOWS_MAX_BYTES 65536

/* why, one line of printable ASCII (it is read back line by line) */
static void one_line(char *out, size_t size, const char *why)
{
	size_t i;

	for (i = 0; why[i] && i + 1 < size; i++)
		out[i] = why[i] >= 0x20 && why[i] < 0x7f ? why[i] : '?';
	out[i] = '\0';
}

int cprof_windows_parse(const char *line, int *number, uint64_t *start, uint64_t *end, int *why_off)
{
	unsigned long long s, e;
	int k, off = 0;

	if (sscanf(line, "%d %llu %llu %n", &k, &s, &e, &off) < 3 || off == 0 || k <= 0 || (e != 0 && e < s))
		return -EINVAL;
	*number = k;
	*start = s;
	*end = e;
	*why_off = off;
	return 0;
}

static int replace(const char *path, const char *text, size_t len)
{
	char tmp[4200];
	int fd, ret = 0;

	if (snprintf(tmp, sizeof(tmp), "%s.new", path) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	if (write(fd, text, len) != (ssize_t)len)
		ret = -EIO;
	if (close(fd) < 0 && ret == 0)
		ret = -errno;
	if (ret == 0 && rename(tmp, path) < 0)
		ret = -errno;
	if (ret < 0)
		unlink(tmp);
	return ret;
}

int cprof_windows_init(const char *path, uint64_t start, uint64_t end, const char *why)
{
	char line[300], safe[200];
	int n = 0;

	one_line(safe, sizeof(safe), why);
	if (start || end)
		n = snprintf(line, sizeof(line), "1 %llu %llu %s\n", (unsigned long long)start, (unsigned long long)end,
			     safe);
	return replace(path, line, (size_t)n);
}

int cprof_windows_add(const char *path, uint64_t start, uint64_t end, const char *why, int *number,
		      uint64_t *busy_until)
{
	char lock[4200], safe[200], *buf = NULL, *line, *save = NULL;
	int lfd = -1, fd = -1, last = 0, ret = 0;
	size_t len = 0;
	ssize_t r;

	if (snprintf(lock, sizeof(lock), "%s.lock", path) >= (int)sizeof(lock))
		return -ENAMETOOLONG;
	/* two captures at once: one after the other */
	lfd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (lfd < 0 || flock(lfd, LOCK_EX) < 0) {
		ret = -errno;
		goto out;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	buf = malloc(WINDOWS_MAX_BYTES + 400);
	if (fd < 0 || buf == NULL) {
		ret = fd < 0 ? -errno : -ENOMEM;
		goto out;
	}
	while ((r = read(fd, buf + len, WINDOWS_MAX_BYTES - len)) > 0)
		len += (size_t)r;
	if (len >= WINDOWS_MAX_BYTES) {
		ret = -ENOSPC;
		goto out;
	}
	buf[len] = '\0';
	{
		char *copy = strdup(buf);

		if (copy == NULL) {
			ret = -ENOMEM;
			goto out;
		}
		for (line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
			uint64_t s, e;
			int k, off;

			if (cprof_windows_parse(line, &k, &s, &e, &off) < 0)
				continue;
			if (k > last)
				last = k;
			if (s <= start && (e == 0 || e > start)) {
				*busy_until = e;
				ret = -EBUSY;
			}
		}
		free(copy);
		if (ret < 0)
			goto out;
	}
	one_line(safe, sizeof(safe), why);
	*number = last + 1;
	len += (size_t)snprintf(buf + len, 400, "%d %llu %llu %s\n", last + 1, (unsigned long long)start,
				(unsigned long long)end, safe);
	ret = replace(path, buf, len);
out:
	free(buf);
	if (fd >= 0)
		close(fd);
	if (lfd >= 0)
		close(lfd);
	return ret;
}

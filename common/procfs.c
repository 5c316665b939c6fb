/* Small /proc files read whole in one call (common/procfs.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "common/procfs.h"

ssize_t cprof_read_proc(const char *path, char *buf, size_t len)
{
	ssize_t n;
	int fd;

	if (len < 2)
		return -1;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	do
		n = read(fd, buf, len - 1);
	while (n < 0 && errno == EINTR);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	return n;
}

int cprof_schedstat_parse(const char *text, uint64_t *run_ns, uint64_t *wait_ns)
{
	uint64_t v[2] = { 0, 0 };
	const char *p = text;

	/* "<run ns> <wait ns> <timeslices>\n": the first two, digits only, no overflow */
	for (int i = 0; i < 2; i++) {
		if (i == 1 && *p++ != ' ')
			return -EINVAL;
		if (*p < '0' || *p > '9')
			return -EINVAL;
		for (; *p >= '0' && *p <= '9'; p++) {
			unsigned d = (unsigned)(*p - '0');

			if (v[i] > (UINT64_MAX - d) / 10)
				return -ERANGE;
			v[i] = v[i] * 10 + d;
		}
	}
	if (*p != ' ' && *p != '\n' && *p != '\0')
		return -EINVAL;
	*run_ns = v[0];
	*wait_ns = v[1];
	return 0;
}

int cprof_schedstat_read(uint32_t tid, uint64_t *run_ns, uint64_t *wait_ns)
{
	static const char head[] = "/proc/self/task/", tail[] = "/schedstat";
	char path[sizeof(head) + 10 + sizeof(tail)], digits[10], buf[96], *p = path;
	int n = 0;

	/* by hand, not snprintf: a thread's first recorded call may come from a signal handler */
	memcpy(p, head, sizeof(head) - 1);
	p += sizeof(head) - 1;
	do
		digits[n++] = (char)('0' + tid % 10);
	while ((tid /= 10) != 0);
	while (n > 0)
		*p++ = digits[--n];
	memcpy(p, tail, sizeof(tail)); /* with its NUL */
	if (cprof_read_proc(path, buf, sizeof(buf)) < 0)
		return -EIO;
	return cprof_schedstat_parse(buf, run_ns, wait_ns);
}

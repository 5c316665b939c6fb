/* Small /proc files read whole in one call (common/procfs.h). */
#include <errno.h>
#include <fcntl.h>
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

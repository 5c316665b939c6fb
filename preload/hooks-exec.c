/* Hooks on the exec family: what a process recorded is sent before its image is replaced. */
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <unistd.h>

#include "preload/cprof.h"
#include "preload/flusher.h"

#define MAX_ARGS 4096

/* The image ends here (whether the new one is profiled or not, e.g. exec with an empty environment):
 * what it recorded goes out with a BYE(exec). Only in the process that owns the flusher: a vfork child
 * (Python's subprocess, posix_spawn-like code) shares our memory but its exec does not end us. */
static void before_exec(void)
{
	int st = atomic_load_explicit(&cprof_state, memory_order_acquire);

	cprof_crash_exec(1);
	if ((st == CPROF_ST_ON || st == CPROF_ST_PAUSED) && cprof_flusher_owner()) {
		cprof_cupti_flush(1); /* GPU records still in CUPTI's buffers die with the image otherwise */
		cprof_flusher_exec_begin();
	}
}

/* exec returned: it failed and this image goes on being profiled. */
static int after_exec(int ret)
{
	int e = errno;

	cprof_crash_exec(0);
	cprof_cupti_exec_failed();
	cprof_flusher_exec_failed();
	errno = e;
	return ret;
}

#define REAL_LIBC(fn) ((__typeof__(&fn))dlsym(RTLD_NEXT, #fn))

CPROF_EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
	__typeof__(&execve) real = REAL_LIBC(execve);

	if (real == NULL) {
		errno = ENOSYS;
		return -1;
	}
	before_exec();
	return after_exec(real(path, argv, envp));
}

CPROF_EXPORT int execv(const char *path, char *const argv[])
{
	__typeof__(&execv) real = REAL_LIBC(execv);

	if (real == NULL) {
		errno = ENOSYS;
		return -1;
	}
	before_exec();
	return after_exec(real(path, argv));
}

CPROF_EXPORT int execvp(const char *file, char *const argv[])
{
	__typeof__(&execvp) real = REAL_LIBC(execvp);

	if (real == NULL) {
		errno = ENOSYS;
		return -1;
	}
	before_exec();
	return after_exec(real(file, argv));
}

CPROF_EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
	__typeof__(&execvpe) real = REAL_LIBC(execvpe);

	if (real == NULL) {
		errno = ENOSYS;
		return -1;
	}
	before_exec();
	return after_exec(real(file, argv, envp));
}

CPROF_EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
	__typeof__(&fexecve) real = REAL_LIBC(fexecve);

	if (real == NULL) {
		errno = ENOSYS;
		return -1;
	}
	before_exec();
	return after_exec(real(fd, argv, envp));
}

/* The variadic forms gather their arguments and go through the vector forms above. */
#define GATHER(first, ap, args, n)                                                   \
	do {                                                                          \
		args[0] = (char *)(first);                                            \
		for (n = 1; args[n - 1] != NULL; n++) {                               \
			if (n == MAX_ARGS) {                                          \
				va_end(ap);                                           \
				errno = E2BIG;                                        \
				return -1;                                            \
			}                                                             \
			args[n] = va_arg(ap, char *);                                 \
		}                                                                     \
	} while (0)

CPROF_EXPORT int execl(const char *path, const char *arg, ...)
{
	char *args[MAX_ARGS];
	va_list ap;
	int n;

	va_start(ap, arg);
	GATHER(arg, ap, args, n);
	va_end(ap);
	return execv(path, args);
}

CPROF_EXPORT int execlp(const char *file, const char *arg, ...)
{
	char *args[MAX_ARGS];
	va_list ap;
	int n;

	va_start(ap, arg);
	GATHER(arg, ap, args, n);
	va_end(ap);
	return execvp(file, args);
}

CPROF_EXPORT int execle(const char *path, const char *arg, ...)
{
	char *args[MAX_ARGS];
	char *const *envp;
	va_list ap;
	int n;

	va_start(ap, arg);
	GATHER(arg, ap, args, n);
	envp = va_arg(ap, char *const *);
	va_end(ap);
	return execve(path, args, envp);
}

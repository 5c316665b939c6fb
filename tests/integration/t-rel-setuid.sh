# Issue 7 scenario 17: a set-user/group-ID target (AT_SECURE) -> the library does nothing and reads no
# CPROF_* variable. The dynamic loader ignores LD_PRELOAD=/path for such programs, so a probe program
# loads libcprof.so itself (dlopen) and enters it through InitializeInjection (what cuInit calls); it
# exports its own getenv to see which variables the library asks for, and counts its threads. Run
# set-group-ID (egid != rgid gives AT_SECURE without a second user), and plain as the control.
. "$(dirname "$0")/lib.sh"
command -v cc > /dev/null || skip "no C compiler to build the probe"
cat > probe.c <<'CEOF'
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>
extern char **environ;
static char asked[4096];
/* the library's getenv calls land here (exported with -rdynamic) */
char *getenv(const char *name)
{
	size_t n = strlen(name);
	if (strncmp(name, "CPROF_", 6) == 0 && strlen(asked) + n + 2 < sizeof(asked))
		strcat(strcat(asked, name), " ");
	for (char **e = environ; *e; e++)
		if (strncmp(*e, name, n) == 0 && (*e)[n] == '=')
			return *e + n + 1;
	return NULL;
}
int main(int argc, char **argv)
{
	int threads = 0, loaded;
	DIR *d;
	if (argc > 1) {
		void *h = dlopen(argv[1], RTLD_NOW | RTLD_GLOBAL);
		int (*inj)(void) = h ? (int (*)(void))dlsym(h, "InitializeInjection") : NULL;
		if (inj == NULL)
			return 3;
		inj();
	}
	/* the threads that stay: a short-lived helper (libunwind's first use runs on one) may still be ending */
	for (int tries = 0; tries < 100; tries++) {
		threads = 0;
		if ((d = opendir("/proc/self/task")) != NULL) {
			for (struct dirent *e; (e = readdir(d)) != NULL;)
				threads += e->d_name[0] != '.';
			closedir(d);
		}
		if (threads <= 2)
			break;
		usleep(10000);
	}
	char line[4096];
	FILE *maps = fopen("/proc/self/maps", "r");
	loaded = 0;
	while (maps && fgets(line, sizeof(line), maps))
		loaded |= strstr(line, "/libcprof.so") != NULL;
	if (maps)
		fclose(maps);
	printf("secure %lu threads %d loaded %d asked [%s]\n", getauxval(AT_SECURE), threads, loaded, asked);
	return 0;
}
CEOF
cc -o probe probe.c -ldl -rdynamic || fail "cannot build the probe"
cp probe probe-sgid
chgrp nogroup probe-sgid 2>/dev/null || chgrp 65534 probe-sgid || fail "chgrp"
chmod 2755 probe-sgid
mkfifo f.fifo
exec 7<> f.fifo # a reader, so that the library finds its "collector"
export CPROF_FIFO=$T/f.fifo CPROF_DEBUG=1 CPROF_NO_CUPTI=1
LIB=$BUILD/lib/libcprof.so
out=$(./probe "$LIB") || fail "control run"
echo "plain:      $out"
assert_match "$out" "^secure 0 threads 2 loaded 1 asked \[.*CPROF_FIFO" "control: the library starts and reads its variables"
if [ "$(id -u)" = 0 ] || [ -g probe-sgid ]; then
	out=$(./probe-sgid "$LIB") || fail "set-group-ID run"
	echo "setgid:     $out"
	case $out in "secure 0 "*) skip "no AT_SECURE for a set-group-ID program here (nosuid mount?)" ;; esac
	assert_eq "$out" "secure 1 threads 1 loaded 1 asked []" "AT_SECURE: no thread, no CPROF_* read"
	# and LD_PRELOAD of a path into a secure program is dropped by the loader, the program unharmed
	out=$(LD_PRELOAD=$LIB ./probe-sgid) || fail "set-group-ID run with LD_PRELOAD"
	echo "LD_PRELOAD: $out"
	assert_eq "$out" "secure 1 threads 1 loaded 0 asked []" "LD_PRELOAD ignored under AT_SECURE"
else
	skip "cannot make a set-group-ID program here (not root); the control run passed"
fi
echo ok

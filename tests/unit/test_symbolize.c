/* Unit tests of native stack symbolisation: this binary's and libc's functions, a profile, stripped files. */
#include <check.h>
#include <dlfcn.h>
#include <elf.h>
#include <limits.h>
#include <link.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/schema.h"
#include "collector/symbolize.h"
#include "tests/unit/tests.h"

/* Exported (the unit binary links with -rdynamic): in .dynsym as well as .symtab, so it survives a strip. */
int cprof_symbolize_probe(int x);

__attribute__((noinline)) int cprof_symbolize_probe(int x)
{
	volatile int acc = 0;
	int i;

	for (i = 0; i < x; i++)
		acc += i * x;
	return acc;
}

/* Local: only in .symtab, gone from a stripped copy. */
static __attribute__((noinline)) int symbolize_static_probe(int x)
{
	volatile int acc = 1;
	int i;

	for (i = 0; i < x; i++)
		acc *= i + x;
	return acc;
}

struct module {
	uintptr_t addr;
	char path[PATH_MAX];
	uintptr_t bias;
	int found;
};

/* The module holding an address and its load bias, the way the preload sees it (dl_iterate_phdr). */
static int find_module_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	struct module *m = data;
	int i;

	(void)size;
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t start = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type != PT_LOAD || m->addr < start || m->addr - start >= ph->p_memsz)
			continue;
		m->bias = info->dlpi_addr;
		if (info->dlpi_name && info->dlpi_name[0]) {
			snprintf(m->path, sizeof(m->path), "%s", info->dlpi_name);
		} else {
			ssize_t n = readlink("/proc/self/exe", m->path, sizeof(m->path) - 1);

			m->path[n > 0 ? n : 0] = '\0';
		}
		m->found = 1;
		return 1;
	}
	return 0;
}

static struct module module_of(const void *addr)
{
	struct module m = { .addr = (uintptr_t)addr };

	dl_iterate_phdr(find_module_cb, &m);
	ck_assert_msg(m.found && m.path[0], "no module holds %p", addr);
	return m;
}

/* libc's getenv, its own address (not a PLT stub of this binary) and size, from libc's dynamic symbol */
static const void *libc_getenv(uint64_t *size)
{
	void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
	const ElfW(Sym) *sym = NULL;
	Dl_info info;
	void *fn;

	ck_assert_ptr_nonnull(libc);
	fn = dlsym(libc, "getenv");
	ck_assert_ptr_nonnull(fn);
	ck_assert(dladdr1(fn, &info, (void **)&sym, RTLD_DL_SYMENT));
	ck_assert_ptr_nonnull(sym);
	ck_assert_uint_gt(sym->st_size, 1);
	*size = sym->st_size;
	dlclose(libc);
	return fn;
}

static uint64_t off_of(const void *fn, const struct module *m)
{
	return (uintptr_t)fn - m->bias;
}

START_TEST(test_symbolize_own_and_libc_functions)
{
	const void *probe = (const void *)cprof_symbolize_probe;
	const void *sprobe = (const void *)symbolize_static_probe;
	struct module exe = module_of(probe), libc;
	struct cprof_symtab *t;
	const void *getenv_fn;
	uint64_t getenv_size, into = 99;
	const char *name;

	ck_assert_int_eq(cprof_symbolize_probe(3), 9);
	ck_assert_int_eq(symbolize_static_probe(2), 6);
	ck_assert_int_eq(cprof_symtab_open(exe.path, &t), 0);
	name = cprof_symtab_lookup(t, off_of(probe, &exe), &into);
	ck_assert_ptr_nonnull(name);
	ck_assert_str_eq(name, "cprof_symbolize_probe");
	ck_assert_uint_eq(into, 0);
	name = cprof_symtab_lookup(t, off_of(probe, &exe) + 1, &into);
	ck_assert_ptr_nonnull(name);
	ck_assert_str_eq(name, "cprof_symbolize_probe");
	ck_assert_uint_eq(into, 1);
	name = cprof_symtab_lookup(t, off_of(sprobe, &exe) + 1, &into);
	ck_assert_ptr_nonnull(name);
	ck_assert_str_eq(name, "symbolize_static_probe");
	ck_assert_uint_eq(into, 1);
	ck_assert_ptr_null(cprof_symtab_lookup(t, 0, NULL));
	cprof_symtab_close(t);

	getenv_fn = libc_getenv(&getenv_size);
	libc = module_of(getenv_fn);
	ck_assert_ptr_nonnull(strstr(libc.path, "libc"));
	ck_assert_int_eq(cprof_symtab_open(libc.path, &t), 0);
	name = cprof_symtab_lookup(t, off_of(getenv_fn, &libc) + 1, &into);
	ck_assert_ptr_nonnull(name);
	ck_assert_str_eq(name, "getenv");
	ck_assert_uint_eq(into, 1);
	/* its last byte is still getenv, the byte after is not */
	name = cprof_symtab_lookup(t, off_of(getenv_fn, &libc) + getenv_size - 1, &into);
	ck_assert_ptr_nonnull(name);
	ck_assert_str_eq(name, "getenv");
	ck_assert_uint_eq(into, getenv_size - 1);
	name = cprof_symtab_lookup(t, off_of(getenv_fn, &libc) + getenv_size, NULL);
	ck_assert(!name || strcmp(name, "getenv"));
	cprof_symtab_close(t);
}
END_TEST

START_TEST(test_symbolize_bad_files)
{
	char dir[] = "/tmp/cprof-sym-XXXXXX", path[300];
	struct cprof_symtab *t = (void *)1;
	FILE *f;

	ck_assert_int_eq(cprof_symtab_open("/nonexistent/libnope.so", &t), -ENOENT);
	ck_assert_ptr_null(t);
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/text.so", dir);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs("not an ELF file\n", f);
	fclose(f);
	ck_assert_int_eq(cprof_symtab_open(path, &t), -ENOEXEC);
	unlink(path);
	/* a FIFO named as a module must not hang the collector */
	snprintf(path, sizeof(path), "%s/fifo.so", dir);
	ck_assert_int_eq(mkfifo(path, 0600), 0);
	ck_assert_int_eq(cprof_symtab_open(path, &t), -EINVAL);
	unlink(path);
	rmdir(dir);
	ck_assert_ptr_null(cprof_symtab_lookup(NULL, 1, NULL));
}
END_TEST

static int64_t q_int(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *st;
	int64_t v = -999;

	ck_assert_msg(sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK, "%s: %s", sql, sqlite3_errmsg(db));
	if (sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_type(st, 0) == SQLITE_NULL ? -1 : sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}

static const char *q_text(sqlite3 *db, const char *sql)
{
	static char buf[1024];
	sqlite3_stmt *st;

	snprintf(buf, sizeof(buf), "(no row)");
	ck_assert_msg(sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK, "%s: %s", sql, sqlite3_errmsg(db));
	if (sqlite3_step(st) == SQLITE_ROW)
		snprintf(buf, sizeof(buf), "%s",
			 sqlite3_column_text(st, 0) ? (const char *)sqlite3_column_text(st, 0) : "(null)");
	sqlite3_finalize(st);
	return buf;
}

static void exec(sqlite3 *db, const char *sql)
{
	char *err = NULL;

	ck_assert_msg(sqlite3_exec(db, sql, NULL, NULL, &err) == SQLITE_OK, "%s: %s", sql, err ? err : "?");
}

static void frame(sqlite3 *db, int stack, int level, const char *kind, const char *module, uint64_t off)
{
	sqlite3_stmt *st;
	const char *sql = "INSERT OR IGNORE INTO StringIds(value) VALUES(?1);"
			  "INSERT INTO CPROF_STACK_FRAMES(processId, stackId, level, kind, moduleId, offset)"
			  " VALUES(1, ?2, ?3, ?4, (SELECT id FROM StringIds WHERE value = ?1), ?5);";
	const char *next = sql;

	while (*next) {
		ck_assert_int_eq(sqlite3_prepare_v2(db, next, -1, &st, &next), SQLITE_OK);
		sqlite3_bind_text(st, 1, module, -1, SQLITE_STATIC);
		if (sqlite3_bind_parameter_count(st) > 1) {
			sqlite3_bind_int(st, 2, stack);
			sqlite3_bind_int(st, 3, level);
			sqlite3_bind_text(st, 4, kind, -1, SQLITE_STATIC);
			sqlite3_bind_int64(st, 5, (int64_t)off);
		}
		ck_assert_msg(sqlite3_step(st) == SQLITE_DONE, "%s", sqlite3_errmsg(db));
		sqlite3_finalize(st);
	}
}

#define SYM_OF(stack, level)                                                                               \
	"SELECT s.value FROM CPROF_STACK_FRAMES f JOIN StringIds s ON s.id = f.symbolId WHERE f.stackId = " #stack \
	" AND f.level = " #level

START_TEST(test_symbolize_profile_frames)
{
	const void *probe = (const void *)cprof_symbolize_probe;
	const void *sprobe = (const void *)symbolize_static_probe;
	struct module exe = module_of(probe), libc;
	const void *getenv_fn;
	uint64_t getenv_size;
	sqlite3 *db;
	int rc;

	getenv_fn = libc_getenv(&getenv_size);
	libc = module_of(getenv_fn);
	ck_assert_int_eq(sqlite3_open(":memory:", &db), SQLITE_OK);
	exec(db, cprof_schema_sql);
	/* offsets are return addresses: the byte before them is the call */
	frame(db, 1, 0, "native", exe.path, off_of(sprobe, &exe) + 1);
	frame(db, 1, 1, "native", libc.path, off_of(getenv_fn, &libc) + getenv_size); /* a call as its last insn */
	frame(db, 1, 2, "native", "/nonexistent/libnope.so", 0x1234);
	exec(db, "INSERT INTO StringIds(value) VALUES('train.py'), ('step');"
		 "INSERT INTO CPROF_STACK_FRAMES(processId, stackId, level, kind, fileId, funcId, line) VALUES(1, 1, 3,"
		 " 'python', (SELECT id FROM StringIds WHERE value = 'train.py'),"
		 " (SELECT id FROM StringIds WHERE value = 'step'), 42);");
	frame(db, 1, 4, "native", "[vdso]", 0x10);
	frame(db, 1, 5, "native", "", 0x10);
	frame(db, 2, 0, "native", exe.path, off_of(sprobe, &exe) + 1); /* the same frame in another stack */
	frame(db, 2, 1, "native", exe.path, off_of(probe, &exe) + 2);
	frame(db, 2, 2, "native", libc.path, off_of(getenv_fn, &libc)); /* returns to getenv's start: not getenv */
	frame(db, 2, 3, "native", exe.path, off_of(probe, &exe) + 1);
	exec(db, "INSERT INTO StringIds(value) VALUES('kept');"
		 "UPDATE CPROF_STACK_FRAMES SET symbolId = (SELECT id FROM StringIds WHERE value = 'kept')"
		 " WHERE stackId = 2 AND level = 3;");

	exec(db, "BEGIN");
	rc = cprof_symbolize_profile(db);
	exec(db, "COMMIT");
	ck_assert_int_ge(rc, 4);
	ck_assert_int_eq(rc, q_int(db, "SELECT count(*) FROM CPROF_STACK_FRAMES WHERE symbolId IS NOT NULL") - 1);
	ck_assert_str_eq(q_text(db, SYM_OF(1, 0)), "symbolize_static_probe");
	ck_assert_str_eq(q_text(db, SYM_OF(1, 1)), "getenv");
	ck_assert_str_eq(q_text(db, SYM_OF(2, 0)), "symbolize_static_probe");
	ck_assert_str_eq(q_text(db, SYM_OF(2, 1)), "cprof_symbolize_probe");
	ck_assert_str_eq(q_text(db, SYM_OF(2, 3)), "kept");
	ck_assert_str_ne(q_text(db, SYM_OF(2, 2)), "getenv");
	ck_assert_int_eq(q_int(db, "SELECT symbolId FROM CPROF_STACK_FRAMES WHERE stackId = 1 AND level = 2"), -1);
	ck_assert_int_eq(q_int(db, "SELECT symbolId FROM CPROF_STACK_FRAMES WHERE stackId = 1 AND level = 4"), -1);
	ck_assert_int_eq(q_int(db, "SELECT symbolId FROM CPROF_STACK_FRAMES WHERE stackId = 1 AND level = 5"), -1);
	ck_assert_int_eq(q_int(db, "SELECT symbolId IS NULL AND line = 42 AND funcId ="
				   " (SELECT id FROM StringIds WHERE value = 'step')"
				   " FROM CPROF_STACK_FRAMES WHERE kind = 'python'"), 1);
	ck_assert_int_eq(q_int(db, "SELECT count(*) FROM StringIds WHERE value = 'symbolize_static_probe'"), 1);
	/* what could not be resolved stays unresolved, and nothing is done twice */
	ck_assert_int_eq(cprof_symbolize_profile(db), 0);
	sqlite3_close(db);
}
END_TEST

START_TEST(test_symbolize_stripped_dynsym)
{
	const void *probe = (const void *)cprof_symbolize_probe;
	const void *sprobe = (const void *)symbolize_static_probe;
	struct module exe = module_of(probe), libc;
	char dir[] = "/tmp/cprof-sym-XXXXXX", exe_copy[300], libc_copy[300], cmd[3 * PATH_MAX];
	struct cprof_symtab *t = NULL, *tl = NULL;
	const void *getenv_fn;
	uint64_t getenv_size;
	const char *name;
	int rc;

	if (system("command -v objcopy >/dev/null 2>&1") != 0) {
		fprintf(stderr, "test_symbolize_stripped_dynsym: skipped, no objcopy on PATH\n");
		return;
	}
	getenv_fn = libc_getenv(&getenv_size);
	libc = module_of(getenv_fn);
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(exe_copy, sizeof(exe_copy), "%s/unit", dir);
	snprintf(libc_copy, sizeof(libc_copy), "%s/libc.so", dir);
	snprintf(cmd, sizeof(cmd), "objcopy --strip-all '%s' '%s' && objcopy --strip-all '%s' '%s'", exe.path,
		 exe_copy, libc.path, libc_copy);
	rc = system(cmd);
	if (!rc)
		rc = cprof_symtab_open(exe_copy, &t) ?: cprof_symtab_open(libc_copy, &tl);
	/* the tables are mapped: the copies can go before anything is asserted */
	unlink(exe_copy);
	unlink(libc_copy);
	rmdir(dir);
	ck_assert_int_eq(rc, 0);

	name = cprof_symtab_lookup(t, off_of(probe, &exe) + 1, NULL);
	ck_assert_ptr_nonnull(name);
	ck_assert_str_eq(name, "cprof_symbolize_probe");
	/* .symtab is gone, and with it the local function: no guess from a neighbour */
	ck_assert_ptr_null(cprof_symtab_lookup(t, off_of(sprobe, &exe) + 1, NULL));
	cprof_symtab_close(t);

	name = cprof_symtab_lookup(tl, off_of(getenv_fn, &libc) + 1, NULL);
	ck_assert_ptr_nonnull(name);
	ck_assert_str_eq(name, "getenv");
	cprof_symtab_close(tl);
}
END_TEST

Suite *symbolize_suite(void)
{
	Suite *s = suite_create("symbolize");
	TCase *tc = tcase_create("symbolize");

	tcase_add_test(tc, test_symbolize_own_and_libc_functions);
	tcase_add_test(tc, test_symbolize_bad_files);
	tcase_add_test(tc, test_symbolize_profile_frames);
	tcase_add_test(tc, test_symbolize_stripped_dynsym);
	suite_add_tcase(s, tc);
	return s;
}

/* Native stack symbolisation: resolves CPROF_STACK_FRAMES (module, offset) to function names with libelf. */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sqlite3.h>

#define PR_FMT "cprofd: symbolize"
#include "common/log.h"
#include "collector/symbolize.h"

/* How many preceding symbols a lookup inspects for one that overlaps the nearest (aliases of different
 * sizes, hand-written assembly); a bound keeps a pathological table from making lookups linear. */
#define OVERLAP_WALK 16

struct sym {
	uint64_t start;
	uint64_t size;
	const char *name; /* points into the string table of the mapped file */
	uint32_t shndx;
	uint8_t rank; /* among symbols at one address, the lowest is kept */
};

struct sect {
	uint64_t addr;
	uint64_t size;
};

struct cprof_symtab {
	int fd;
	Elf *elf;
	struct sym *syms;
	size_t n;
	struct sect *sects;
	size_t nsect;
};

static int sym_cmp(const void *a, const void *b)
{
	const struct sym *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	/* qsort is not stable: the name decides the last ties so that a profile symbolises the same way twice */
	return strcmp(x->name, y->name);
}

static uint8_t sym_rank(const GElf_Sym *s)
{
	uint8_t r;

	switch (GELF_ST_BIND(s->st_info)) {
	case STB_GLOBAL:
		r = 0;
		break;
	case STB_WEAK:
		r = 1;
		break;
	default:
		r = 2;
		break;
	}
	/* a sized alias says where the function ends, an unsized one does not */
	return s->st_size ? r : r + 3;
}

static int add_syms(struct cprof_symtab *t, Elf_Scn *scn, Elf_Scn *xscn, size_t *cap)
{
	GElf_Shdr sh;
	Elf_Data *data, *xdata = NULL;
	size_t i, count;

	if (!gelf_getshdr(scn, &sh) || !sh.sh_entsize)
		return -EINVAL;
	data = elf_getdata(scn, NULL);
	if (!data)
		return -EINVAL;
	if (xscn)
		xdata = elf_getdata(xscn, NULL);
	count = sh.sh_size / sh.sh_entsize;
	if (t->n + count > *cap) {
		struct sym *p = realloc(t->syms, (t->n + count) * sizeof(*p));

		if (!p)
			return -ENOMEM;
		t->syms = p;
		*cap = t->n + count;
	}
	for (i = 1; i < count; i++) { /* entry 0 is the reserved null symbol */
		GElf_Sym s;
		Elf32_Word xndx = 0;
		uint32_t shndx;
		const char *name;
		int type;

		if (!gelf_getsymshndx(data, xdata, (int)i, &s, &xndx))
			continue;
		type = GELF_ST_TYPE(s.st_info);
		if (type != STT_FUNC && type != STT_GNU_IFUNC)
			continue;
		if (s.st_shndx == SHN_XINDEX)
			shndx = xndx;
		else if (s.st_shndx == SHN_UNDEF || s.st_shndx >= SHN_LORESERVE)
			continue; /* imports (a non-PIE executable gives them PLT addresses) and absolute values */
		else
			shndx = s.st_shndx;
		name = elf_strptr(t->elf, sh.sh_link, s.st_name);
		if (!name || !*name)
			continue;
		t->syms[t->n++] = (struct sym){ .start = s.st_value, .size = s.st_size, .name = name,
						.shndx = shndx, .rank = sym_rank(&s) };
	}
	return 0;
}

int cprof_symtab_open(const char *path, struct cprof_symtab **out)
{
	struct cprof_symtab *t;
	Elf_Scn *scn = NULL, *symtab = NULL, *dynsym = NULL, *xsymtab = NULL, *xdynsym = NULL;
	GElf_Ehdr eh;
	struct stat stb;
	size_t cap = 0, i, j, nsect;
	int rc;

	*out = NULL;
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	/* the path comes from the profiled process: never block on a FIFO or a device standing in its place */
	t->fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (t->fd < 0) {
		rc = -errno;
		goto out;
	}
	if (fstat(t->fd, &stb) < 0) {
		rc = -errno;
		goto out;
	}
	if (!S_ISREG(stb.st_mode)) {
		rc = -EINVAL;
		goto out;
	}
	elf_version(EV_CURRENT);
	/* mapped, not read: the string tables of a library like libtorch_cuda.so are hundreds of MB */
	t->elf = elf_begin(t->fd, ELF_C_READ_MMAP, NULL);
	if (!t->elf || elf_kind(t->elf) != ELF_K_ELF || !gelf_getehdr(t->elf, &eh) ||
	    (eh.e_type != ET_EXEC && eh.e_type != ET_DYN)) {
		rc = -ENOEXEC;
		goto out;
	}
	if (elf_getshdrnum(t->elf, &nsect) < 0) {
		rc = -ENOEXEC;
		goto out;
	}
	t->sects = calloc(nsect ? nsect : 1, sizeof(*t->sects));
	if (!t->sects) {
		rc = -ENOMEM;
		goto out;
	}
	t->nsect = nsect;
	while ((scn = elf_nextscn(t->elf, scn))) {
		GElf_Shdr sh;
		size_t idx = elf_ndxscn(scn);

		if (!gelf_getshdr(scn, &sh))
			continue;
		if (idx < nsect && (sh.sh_flags & SHF_ALLOC))
			t->sects[idx] = (struct sect){ .addr = sh.sh_addr, .size = sh.sh_size };
		if (sh.sh_type == SHT_SYMTAB)
			symtab = scn;
		else if (sh.sh_type == SHT_DYNSYM)
			dynsym = scn;
	}
	/* extended section indices (files with more than 65279 sections) sit in a section linked to their table */
	scn = NULL;
	while ((scn = elf_nextscn(t->elf, scn))) {
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB_SHNDX)
			continue;
		if (symtab && sh.sh_link == elf_ndxscn(symtab))
			xsymtab = scn;
		else if (dynsym && sh.sh_link == elf_ndxscn(dynsym))
			xdynsym = scn;
	}
	/* .symtab has the local functions, .dynsym is all a stripped file keeps: both, duplicates removed below */
	if (symtab && (rc = add_syms(t, symtab, xsymtab, &cap)) == -ENOMEM)
		goto out;
	if (dynsym && (rc = add_syms(t, dynsym, xdynsym, &cap)) == -ENOMEM)
		goto out;
	if (t->n) {
		qsort(t->syms, t->n, sizeof(*t->syms), sym_cmp);
		for (i = 1, j = 0; i < t->n; i++)
			if (t->syms[i].start != t->syms[j].start)
				t->syms[++j] = t->syms[i];
		t->n = j + 1;
	}
	rc = 0;
	*out = t;
	t = NULL;
out:
	cprof_symtab_close(t);
	return rc;
}

static int in_section(const struct cprof_symtab *t, uint32_t shndx, uint64_t off)
{
	return shndx < t->nsect && off >= t->sects[shndx].addr && off - t->sects[shndx].addr < t->sects[shndx].size;
}

const char *cprof_symtab_lookup(const struct cprof_symtab *t, uint64_t off, uint64_t *into)
{
	const struct sym *s = NULL;
	size_t lo = 0, hi, i, j, stop;

	if (!t)
		return NULL;
	hi = t->n;
	while (lo < hi) { /* lo: the first symbol starting after off */
		size_t mid = lo + (hi - lo) / 2;

		if (t->syms[mid].start <= off)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	i = lo - 1;
	stop = i > OVERLAP_WALK ? i - OVERLAP_WALK : 0;
	for (j = i;; j--) {
		if (t->syms[j].size && off - t->syms[j].start < t->syms[j].size) {
			s = &t->syms[j];
			break;
		}
		if (j == stop)
			break;
	}
	/* an unsized symbol (assembly without .size) is taken to run to the next symbol or its section's end */
	if (!s && !t->syms[i].size && in_section(t, t->syms[i].shndx, off))
		s = &t->syms[i];
	if (!s)
		return NULL;
	if (into)
		*into = off - s->start;
	return s->name;
}

void cprof_symtab_close(struct cprof_symtab *t)
{
	if (!t)
		return;
	if (t->elf)
		elf_end(t->elf);
	if (t->fd >= 0)
		close(t->fd);
	free(t->syms);
	free(t->sects);
	free(t);
}

/* ---- the profile ---- */

struct frame_row {
	int64_t rowid;
	int64_t module;
	uint64_t offset;
};

static int row_cmp(const void *a, const void *b)
{
	const struct frame_row *x = a, *y = b;

	if (x->module != y->module)
		return x->module < y->module ? -1 : 1;
	if (x->offset != y->offset)
		return x->offset < y->offset ? -1 : 1;
	return 0;
}

enum { ST_FRAMES, ST_PATH, ST_STR_INS, ST_STR_SEL, ST_UPDATE, ST__N };
static const char *const stmt_sql[ST__N] = {
	[ST_FRAMES] = ("SELECT rowid, moduleId, offset FROM CPROF_STACK_FRAMES WHERE kind = 'native'"
		       " AND symbolId IS NULL AND moduleId IS NOT NULL AND offset IS NOT NULL"),
	[ST_PATH] = "SELECT value FROM StringIds WHERE id = ?",
	[ST_STR_INS] = "INSERT OR IGNORE INTO StringIds(value) VALUES(?)",
	[ST_STR_SEL] = "SELECT id FROM StringIds WHERE value = ?",
	[ST_UPDATE] = "UPDATE CPROF_STACK_FRAMES SET symbolId = ? WHERE rowid = ?",
};

static int db_err(sqlite3 *db, const char *what)
{
	pr_err("%s: %s", what, sqlite3_errmsg(db));
	return -EIO;
}

/* All frames to resolve, read to the end before any is updated: changing rows under a running SELECT
 * of the same table is undefined in SQLite. */
static int read_frames(sqlite3 *db, sqlite3_stmt *st, struct frame_row **out, size_t *n_out)
{
	struct frame_row *rows = NULL;
	size_t n = 0, cap = 0;
	int rc, sr;

	while ((sr = sqlite3_step(st)) == SQLITE_ROW) {
		if (n == cap) {
			struct frame_row *p;

			cap = cap ? cap * 2 : 1024;
			p = realloc(rows, cap * sizeof(*p));
			if (!p) {
				rc = -ENOMEM;
				goto out;
			}
			rows = p;
		}
		rows[n++] = (struct frame_row){ .rowid = sqlite3_column_int64(st, 0),
						.module = sqlite3_column_int64(st, 1),
						.offset = (uint64_t)sqlite3_column_int64(st, 2) };
	}
	if (sr != SQLITE_DONE) {
		rc = db_err(db, "reading stack frames");
		goto out;
	}
	if (n) /* qsort(NULL, 0) is undefined */
		qsort(rows, n, sizeof(*rows), row_cmp);
	*out = rows;
	*n_out = n;
	rows = NULL;
	rc = 0;
out:
	free(rows);
	return rc;
}

/* The module's symbols, NULL when it has none to read (a pseudo-module, a file gone or not ELF). */
static int open_module(sqlite3 *db, sqlite3_stmt *st, int64_t module, struct cprof_symtab **out)
{
	const char *path;
	int rc, sr;

	*out = NULL;
	sqlite3_reset(st);
	sqlite3_bind_int64(st, 1, module);
	sr = sqlite3_step(st);
	if (sr != SQLITE_ROW && sr != SQLITE_DONE)
		return db_err(db, "reading a module path");
	path = sr == SQLITE_ROW ? (const char *)sqlite3_column_text(st, 0) : NULL;
	/* "", "[vdso]", "linux-vdso.so.1": what dl_iterate_phdr names has a '/' when it is a file */
	if (!path || !strchr(path, '/') || path[0] == '[')
		return 0;
	rc = cprof_symtab_open(path, out);
	if (rc == -ENOMEM)
		return rc;
	if (rc < 0)
		pr_dbg("%s: not symbolised (%s)", path, strerror(-rc));
	return 0;
}

static int string_id(sqlite3 *db, sqlite3_stmt **st, const char *text, int64_t *id)
{
	int sr;

	sqlite3_reset(st[ST_STR_INS]);
	sqlite3_bind_text(st[ST_STR_INS], 1, text, -1, SQLITE_STATIC);
	if (sqlite3_step(st[ST_STR_INS]) != SQLITE_DONE)
		return db_err(db, "storing a symbol name");
	sqlite3_reset(st[ST_STR_SEL]);
	sqlite3_bind_text(st[ST_STR_SEL], 1, text, -1, SQLITE_STATIC);
	sr = sqlite3_step(st[ST_STR_SEL]);
	if (sr != SQLITE_ROW)
		return sr == SQLITE_DONE ? -EIO : db_err(db, "reading a symbol id");
	*id = sqlite3_column_int64(st[ST_STR_SEL], 0);
	return 0;
}

/* The StringIds id of the function containing the return address off, 0 when unknown. The last name's id is
 * remembered: neighbouring offsets in one module are mostly the same function. */
static int resolve(sqlite3 *db, sqlite3_stmt **st, const struct cprof_symtab *tab, uint64_t off,
		   const char **last_name, int64_t *last_id, int64_t *sym_id)
{
	const char *name;
	int rc;

	*sym_id = 0;
	if (!tab || !off)
		return 0;
	/* the call that pushed a return address is the byte before it, maybe the function's last */
	name = cprof_symtab_lookup(tab, off - 1, NULL);
	if (!name)
		return 0;
	if (name == *last_name) {
		*sym_id = *last_id;
		return 0;
	}
	rc = string_id(db, st, name, sym_id);
	if (rc < 0)
		return rc;
	*last_name = name;
	*last_id = *sym_id;
	return 0;
}

int cprof_symbolize_profile(struct sqlite3 *db)
{
	sqlite3_stmt *st[ST__N] = { 0 };
	struct frame_row *rows = NULL;
	struct cprof_symtab *tab = NULL;
	const char *last_name = NULL;
	int64_t sym_id = 0, last_id = 0;
	size_t n = 0, i, resolved = 0, modules = 0;
	int rc, k;

	for (k = 0; k < ST__N; k++)
		if (sqlite3_prepare_v2(db, stmt_sql[k], -1, &st[k], NULL) != SQLITE_OK) {
			rc = db_err(db, stmt_sql[k]);
			goto out;
		}
	rc = read_frames(db, st[ST_FRAMES], &rows, &n);
	if (rc < 0)
		goto out;
	/* rows are sorted by module: each module's file is opened once, and only if it has frames */
	for (i = 0; i < n; i++) {
		const struct frame_row *r = &rows[i];
		int new_module = !i || r->module != rows[i - 1].module;

		if (new_module) {
			cprof_symtab_close(tab);
			last_name = NULL;
			rc = open_module(db, st[ST_PATH], r->module, &tab);
			if (rc < 0)
				goto out;
			modules += tab != NULL;
		}
		/* a frame repeated in another stack keeps the sym_id of the row before */
		if (new_module || r->offset != rows[i - 1].offset) {
			rc = resolve(db, st, tab, r->offset, &last_name, &last_id, &sym_id);
			if (rc < 0)
				goto out;
		}
		if (!sym_id)
			continue;
		sqlite3_reset(st[ST_UPDATE]);
		sqlite3_bind_int64(st[ST_UPDATE], 1, sym_id);
		sqlite3_bind_int64(st[ST_UPDATE], 2, r->rowid);
		if (sqlite3_step(st[ST_UPDATE]) != SQLITE_DONE) {
			rc = db_err(db, "storing a frame's symbol");
			goto out;
		}
		resolved++;
	}
	pr_dbg("%zu of %zu native frames resolved, %zu modules read", resolved, n, modules);
	rc = resolved > INT32_MAX ? INT32_MAX : (int)resolved;
out:
	cprof_symtab_close(tab);
	free(rows);
	for (k = 0; k < ST__N; k++)
		sqlite3_finalize(st[k]);
	return rc;
}

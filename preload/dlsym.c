/* dlsym/dlvsym interposed: a lookup of a hooked CUDA function on a CUDA library's own handle gets the hook. */
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#define PR_FMT "cprof: dlsym"
#include "common/log.h"
#include "preload/cprof.h"

/*
 * Programs that find CUDA functions with dlsym(handle, name) on the library's own handle (ctypes.CDLL,
 * cuda-python, JIT loaders) bypass the LD_PRELOAD scope and so every hook. dlsym and dlvsym are exported
 * here; each is a few instructions of assembly that ask cprof_dlsym_pick whether the lookup is one of
 * ours and otherwise jump (not call) to glibc's function, so that glibc still sees the program's return
 * address: RTLD_NEXT and RTLD_DEFAULT are resolved from the caller's object, not from libcprof.so.
 *
 * glibc's own dlsym cannot be found with dlsym (ours would answer) nor with a versioned reference (an
 * unversioned definition here satisfies it): it is read from libc's dynamic symbol table, once, before
 * any lookup. Our own lookups (cprof_resolve, CPROF_REAL, python.c) come from inside libcprof.so and go
 * straight through. No loader lock is taken by the choice: it reads symbol tables already in memory,
 * plus one dlinfo on the handle for a name that cprof hooks.
 */

CPROF_HIDDEN void *cprof_real_dlsym_p;
CPROF_HIDDEN void *cprof_real_dlvsym_p;
static _Atomic int dl_ready; /* 0: not looked up yet, 1: ready, -1: libc's functions not found */
static uintptr_t self_lo, self_hi;
static struct link_map *self_map;
static int after_libc; /* self_map comes after libc's in the loader's list (cprof_loaded_after_libc) */

#if defined(__x86_64__)
/* rdi = handle, rsi = name (, rdx = version); the caller's return address is at (%rsp). */
__asm__(".text\n"
	".globl dlsym\n"
	".type dlsym,@function\n"
	"dlsym:\n"
	"	.cfi_startproc\n"
	"	movq (%rsp), %rdx\n"
	"	pushq %rdi\n"
	"	.cfi_adjust_cfa_offset 8\n"
	"	pushq %rsi\n"
	"	.cfi_adjust_cfa_offset 8\n"
	"	subq $8, %rsp\n"
	"	.cfi_adjust_cfa_offset 8\n"
	"	call cprof_dlsym_pick\n"
	"	addq $8, %rsp\n"
	"	.cfi_adjust_cfa_offset -8\n"
	"	popq %rsi\n"
	"	.cfi_adjust_cfa_offset -8\n"
	"	popq %rdi\n"
	"	.cfi_adjust_cfa_offset -8\n"
	"	testq %rax, %rax\n"
	"	jnz 1f\n"
	"	movq cprof_real_dlsym_p(%rip), %rax\n"
	"	testq %rax, %rax\n"
	"	jz 1f\n"
	"	jmp *%rax\n"
	"1:	ret\n"
	"	.cfi_endproc\n"
	".size dlsym, .-dlsym\n"
	".globl dlvsym\n"
	".type dlvsym,@function\n"
	"dlvsym:\n"
	"	.cfi_startproc\n"
	"	movq (%rsp), %rcx\n"
	"	pushq %rdi\n"
	"	.cfi_adjust_cfa_offset 8\n"
	"	pushq %rsi\n"
	"	.cfi_adjust_cfa_offset 8\n"
	"	pushq %rdx\n"
	"	.cfi_adjust_cfa_offset 8\n"
	"	call cprof_dlvsym_pick\n"
	"	popq %rdx\n"
	"	.cfi_adjust_cfa_offset -8\n"
	"	popq %rsi\n"
	"	.cfi_adjust_cfa_offset -8\n"
	"	popq %rdi\n"
	"	.cfi_adjust_cfa_offset -8\n"
	"	testq %rax, %rax\n"
	"	jnz 1f\n"
	"	movq cprof_real_dlvsym_p(%rip), %rax\n"
	"	testq %rax, %rax\n"
	"	jz 1f\n"
	"	jmp *%rax\n"
	"1:	ret\n"
	"	.cfi_endproc\n"
	".size dlvsym, .-dlvsym\n");
#else
#error "dlsym interposition is written for x86_64"
#endif

/* The dynamic section's addresses: glibc has made most of them absolute in place, the vDSO has not. */
static uintptr_t dyn_ptr(uintptr_t base, uintptr_t p)
{
	return p < base ? p + base : p;
}

/* The address of the defined dynamic symbol name in the object loaded at base with dynamic section dyn
 * (any version), or NULL. Reads only the object's mapped hash and symbol tables. */
static void *elf_lookup_dyn(uintptr_t base, const ElfW(Dyn) *dyn, const char *name)
{
	const ElfW(Sym) *symtab = NULL;
	const char *strtab = NULL;
	const uint32_t *gnu = NULL, *sysv = NULL;
	const ElfW(Dyn) *d;
	uint32_t h = 5381, i, n;
	const unsigned char *c;

	for (d = dyn; d && d->d_tag != DT_NULL; d++) {
		if (d->d_tag == DT_SYMTAB)
			symtab = (const ElfW(Sym) *)dyn_ptr(base, d->d_un.d_ptr);
		else if (d->d_tag == DT_STRTAB)
			strtab = (const char *)dyn_ptr(base, d->d_un.d_ptr);
		else if (d->d_tag == DT_GNU_HASH)
			gnu = (const uint32_t *)dyn_ptr(base, d->d_un.d_ptr);
		else if (d->d_tag == DT_HASH)
			sysv = (const uint32_t *)dyn_ptr(base, d->d_un.d_ptr);
	}
	if (symtab == NULL || strtab == NULL)
		return NULL;
#define DEFINED(s) ((s)->st_shndx != SHN_UNDEF && (s)->st_value != 0 && strcmp(strtab + (s)->st_name, name) == 0)
	if (gnu) {
		uint32_t nbuckets = gnu[0], symoffset = gnu[1], bloom_size = gnu[2];
		const uint32_t *buckets = (const uint32_t *)((const ElfW(Addr) *)(gnu + 4) + bloom_size);
		const uint32_t *chain = buckets + nbuckets;

		for (c = (const unsigned char *)name; *c; c++)
			h = h * 33 + *c;
		if (nbuckets == 0)
			return NULL;
		i = buckets[h % nbuckets];
		if (i < symoffset)
			return NULL;
		for (;; i++) {
			uint32_t h2 = chain[i - symoffset];

			if ((h | 1) == (h2 | 1) && DEFINED(&symtab[i]))
				return (void *)(base + symtab[i].st_value);
			if (h2 & 1)
				return NULL;
		}
	}
	if (sysv) {
		for (n = sysv[1], i = 0; i < n; i++)
			if (DEFINED(&symtab[i]))
				return (void *)(base + symtab[i].st_value);
	}
#undef DEFINED
	return NULL;
}

static void *elf_lookup(const struct link_map *m, const char *name)
{
	return elf_lookup_dyn(m->l_addr, m->l_ld, name);
}

/* dl_iterate_phdr: our own object's range, and (when libc was not found by name) the first other object
 * that defines dlsym and dlvsym. */
struct scan {
	uintptr_t self;
	void *dlsym_p, *dlvsym_p;
};

static int scan_object(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct scan *sc = arg;
	const ElfW(Dyn) *dyn = NULL;
	uintptr_t lo = UINTPTR_MAX, hi = 0;
	int i;

	(void)size;
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type == PT_DYNAMIC)
			dyn = (const ElfW(Dyn) *)(info->dlpi_addr + ph->p_vaddr);
		if (ph->p_type != PT_LOAD)
			continue;
		if (info->dlpi_addr + ph->p_vaddr < lo)
			lo = info->dlpi_addr + ph->p_vaddr;
		if (info->dlpi_addr + ph->p_vaddr + ph->p_memsz > hi)
			hi = info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
	}
	if (sc->self >= lo && sc->self < hi) {
		self_lo = lo;
		self_hi = hi;
	} else if (sc->dlsym_p == NULL && dyn != NULL) {
		void *s = elf_lookup_dyn(info->dlpi_addr, dyn, "dlsym"), *v = elf_lookup_dyn(info->dlpi_addr, dyn, "dlvsym");

		if (s && v) {
			sc->dlsym_p = s;
			sc->dlvsym_p = v;
		}
	}
	return 0;
}

/* Finds glibc's dlsym and dlvsym and our own object; once, at load (and again if a lookup comes first). */
static __attribute__((constructor)) void dl_setup(void)
{
	struct scan sc = { .self = (uintptr_t)&dl_setup };
	struct link_map *libc = NULL;
	Dl_info info;
	void *h;

	if (atomic_load(&dl_ready) != 0)
		return;
	if (!dladdr1((void *)&dl_setup, &info, (void **)&self_map, RTLD_DL_LINKMAP) || self_map == NULL)
		goto fail;
	/* libc by its name (dlopen is not interposed); failing that, the first object defining both */
	h = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);
	if (h != NULL) {
		if (dlinfo(h, RTLD_DI_LINKMAP, &libc) == 0 && libc != NULL) {
			sc.dlsym_p = elf_lookup(libc, "dlsym");
			sc.dlvsym_p = elf_lookup(libc, "dlvsym");
			/* the list is in load order: the objects loaded at start (preloads first, libc among the needed
			 * ones), then those a dlopen added */
			for (const struct link_map *l = libc->l_next; l != NULL && !after_libc; l = l->l_next)
				after_libc = l == self_map;
		}
		dlclose(h);
	}
	if (sc.dlsym_p == NULL || sc.dlvsym_p == NULL)
		sc.dlsym_p = sc.dlvsym_p = NULL;
	dl_iterate_phdr(scan_object, &sc);
	if (sc.dlsym_p == NULL || sc.dlvsym_p == NULL || self_hi == 0)
		goto fail;
	cprof_real_dlsym_p = sc.dlsym_p;
	cprof_real_dlvsym_p = sc.dlvsym_p;
	atomic_store(&dl_ready, 1);
	return;
fail:
	/* cannot happen with glibc; then every lookup fails, so say so loudly */
	pr_warn("cannot find glibc's dlsym: dlsym lookups fail in this process");
	atomic_store(&dl_ready, -1);
}

int cprof_loaded_after_libc(void)
{
	if (atomic_load(&dl_ready) == 0)
		dl_setup();
	return after_libc;
}

/* The library whose functions a hooked name belongs to (the hook forwards there), or NULL when no hook has
 * such a name: a handle lookup is redirected only on that library's own handle. */
static const char *hook_soname(const char *name)
{
	if (strncmp(name, "cublasLt", 8) == 0)
		return "libcublasLt.so.13";
	if (strncmp(name, "cublas", 6) == 0)
		return "libcublas.so.13";
	if (strncmp(name, "cuda", 4) == 0 || strncmp(name, "__cuda", 6) == 0)
		return "libcudart.so.13";
	if (name[0] == 'c' && name[1] == 'u' && name[2] >= 'A' && name[2] <= 'Z')
		return "libcuda.so.1"; /* the driver: cuLaunchKernel */
	return NULL;
}

/* 1 when handle is the library soname (its file may carry a longer version: libcudart.so.13.0.96). */
static int handle_is(void *handle, const char *soname)
{
	struct link_map *m = NULL;
	const char *base;
	size_t n = strlen(soname);

	if (handle == RTLD_DEFAULT || handle == RTLD_NEXT || dlinfo(handle, RTLD_DI_LINKMAP, &m) != 0 || m == NULL ||
	    m->l_name == NULL)
		return 0;
	base = strrchr(m->l_name, '/');
	base = base ? base + 1 : m->l_name;
	return strncmp(base, soname, n) == 0 && (base[n] == '\0' || base[n] == '.');
}

/* The hook for (handle, name), or NULL to let glibc answer. Never calls glibc's dlsym for a name that is
 * not a hook's, so the common lookup costs a few compares. */
static void *pick(void *handle, const char *name, const char *version, uintptr_t caller)
{
	const char *soname;
	void *hook, *real;

	if (unlikely(atomic_load_explicit(&dl_ready, memory_order_acquire) == 0))
		dl_setup();
	if (atomic_load_explicit(&dl_ready, memory_order_relaxed) != 1 || name == NULL)
		return NULL;
	soname = hook_soname(name);
	if (soname == NULL)
		return NULL;
	if (caller >= self_lo && caller < self_hi)
		return NULL; /* cprof's own lookup: the real function */
	hook = elf_lookup(self_map, name);
	if (hook == NULL || !handle_is(handle, soname))
		return NULL;
	/* only a function the library has: otherwise the program gets glibc's answer (and its error) */
	real = version ? ((void *(*)(void *, const char *, const char *))cprof_real_dlvsym_p)(handle, name, version)
		       : ((void *(*)(void *, const char *))cprof_real_dlsym_p)(handle, name);
	return real ? hook : NULL;
}

CPROF_HIDDEN void *cprof_dlsym_pick(void *handle, const char *name, uintptr_t caller);
CPROF_HIDDEN void *cprof_dlvsym_pick(void *handle, const char *name, const char *version, uintptr_t caller);

void *cprof_dlsym_pick(void *handle, const char *name, uintptr_t caller)
{
	return pick(handle, name, NULL, caller);
}

void *cprof_dlvsym_pick(void *handle, const char *name, const char *version, uintptr_t caller)
{
	return pick(handle, name, version ? version : "", caller);
}

/* Kernel names: host stub or cudaKernel_t -> its name, filled at registration, interned (strings.c) at its first launch, read lock-free. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define PR_FMT "cprof: kernels"
#include "common/log.h"
#include "preload/cprof.h"

/* Open addressing, never shrinks. PyTorch registers tens of thousands of kernels; pages of the table
 * are only touched where keys land. */
#define KMAP_BITS 18
#define KMAP_SIZE (1u << KMAP_BITS)

struct kname {
	char *name;
	_Atomic(struct cprof_istr *) str; /* interned at the first launch: PyTorch registers tens of thousands of
					   * kernels and launches a few hundred of them */
};

struct kslot {
	_Atomic(const void *) key;
	struct kname *val;
};

static struct kslot *kmap;
static size_t kmap_used;
static pthread_mutex_t kmap_lock = PTHREAD_MUTEX_INITIALIZER;

static inline uint32_t khash(const void *p)
{
	uint64_t x = (uintptr_t)p;

	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	return (uint32_t)x & (KMAP_SIZE - 1);
}

static struct kname *lookup(const void *key)
{
	uint32_t i = khash(key), n;

	if (kmap == NULL)
		return NULL;
	for (n = 0; n < KMAP_SIZE; n++, i = (i + 1) & (KMAP_SIZE - 1)) {
		const void *k = atomic_load_explicit(&kmap[i].key, memory_order_acquire);

		if (k == key)
			return kmap[i].val;
		if (k == NULL)
			return NULL;
	}
	return NULL;
}

/* Caller holds kmap_lock. The value is written before the key is published. */
static int insert_locked(const void *key, struct kname *val)
{
	uint32_t i = khash(key), n;

	if (kmap == NULL) {
		void *m = mmap(NULL, sizeof(struct kslot) * KMAP_SIZE, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (m == MAP_FAILED)
			return -1;
		kmap = m;
	}
	if (kmap_used >= KMAP_SIZE * 3 / 4)
		return -1; /* full: later kernels get their names from dladdr at launch, uncached */
	for (n = 0; n < KMAP_SIZE; n++, i = (i + 1) & (KMAP_SIZE - 1)) {
		const void *k = atomic_load_explicit(&kmap[i].key, memory_order_relaxed);

		if (k == key) {
			kmap[i].val = val;
			return 0;
		}
		if (k == NULL) {
			kmap[i].val = val;
			atomic_store_explicit(&kmap[i].key, key, memory_order_release);
			kmap_used++;
			return 0;
		}
	}
	return -1;
}

static struct kname *kname_new(const char *name)
{
	struct kname *k = calloc(1, sizeof(*k));

	if (k == NULL)
		return NULL;
	k->name = strdup(name);
	if (k->name == NULL) {
		free(k);
		return NULL;
	}
	return k;
}

void cprof_kernel_register(const void *key, const char *name)
{
	struct kname *k;

	if (key == NULL || name == NULL)
		return;
	pthread_mutex_lock(&kmap_lock);
	k = lookup(key);
	if (k == NULL || strcmp(k->name, name) != 0) {
		k = kname_new(name);
		if (k && insert_locked(key, k) < 0) {
			free(k->name);
			free(k);
		}
	}
	pthread_mutex_unlock(&kmap_lock);
}

void cprof_kernel_alias(const void *alias, const void *key)
{
	struct kname *k;

	if (alias == NULL || key == NULL || alias == key)
		return;
	pthread_mutex_lock(&kmap_lock);
	k = lookup(key);
	if (k)
		insert_locked(alias, k);
	pthread_mutex_unlock(&kmap_lock);
}

/* A launch of something never registered through our hook: name it from the symbol table. */
static struct kname *name_unknown(const void *key)
{
	Dl_info info;
	char buf[64];
	const char *name;
	struct kname *k;

	if (dladdr(key, &info) && info.dli_sname && info.dli_saddr == key)
		name = info.dli_sname;
	else {
		snprintf(buf, sizeof(buf), "kernel@%p", key);
		name = buf;
	}
	pthread_mutex_lock(&kmap_lock);
	k = lookup(key);
	if (k == NULL) {
		k = kname_new(name);
		if (k && insert_locked(key, k) < 0) {
			/* table full: leak this one entry rather than lose the name */
		}
	}
	pthread_mutex_unlock(&kmap_lock);
	return k;
}

uint32_t cprof_kernel_name_id(const void *key)
{
	struct kname *k = lookup(key);
	struct cprof_istr *str;

	if (unlikely(k == NULL)) {
		if (key == NULL)
			return 0;
		k = name_unknown(key);
		if (k == NULL)
			return 0;
	}
	/* the name travels once per process, the first time the kernel is launched (strings.c); two threads
	 * interning it at once get the one entry */
	str = atomic_load_explicit(&k->str, memory_order_acquire);
	if (unlikely(str == NULL)) {
		str = cprof_intern_entry(CPROF_STR_KERNEL, k->name, strlen(k->name));
		if (str == NULL)
			return 0;
		atomic_store_explicit(&k->str, str, memory_order_release);
	}
	return cprof_intern_id(str);
}

void cprof_kernels_lock(int lock)
{
	if (lock)
		pthread_mutex_lock(&kmap_lock);
	else
		pthread_mutex_unlock(&kmap_lock);
}

/* The one string interner (kernel and API names, module paths, Python names, NVTX messages): text -> per-process id, lock-free to read. */
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#define PR_FMT "cprof: strings"
#include "common/log.h"
#include "preload/cprof.h"

#define SMAP_BITS 16
#define SMAP_SIZE (1u << SMAP_BITS)

static _Atomic(struct cprof_istr *) *smap;
static size_t smap_used;
static pthread_mutex_t smap_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic uint32_t next_id = 1;
__thread int cprof_in_strings __attribute__((tls_model("initial-exec")));
/* entries live as long as the process, in pages of their own: no malloc under smap_lock, which a signal handler's
 * call may take while its thread was inside malloc (until 2026-12-06 each entry was malloc'd) */
#define ARENA_CHUNK (256u << 10)
static uint8_t *arena;
static size_t arena_left;

/* Under smap_lock. */
static struct cprof_istr *arena_entry(size_t len)
{
	size_t need = (sizeof(struct cprof_istr) + len + 1 + 7) & ~(size_t)7;
	void *m;

	if (need > arena_left) {
		m = mmap(NULL, ARENA_CHUNK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (m == MAP_FAILED)
			return NULL;
		arena = m;
		arena_left = ARENA_CHUNK;
	}
	m = arena;
	arena += need;
	arena_left -= need;
	return m;
}

static uint32_t string_id_new(void)
{
	return atomic_fetch_add(&next_id, 1);
}

/* How full the table may get for a kind: the strings a program makes up as it goes (NVTX messages with
 * counters in them, Python names) stop at 5/8, so kernel, API and module names always have room */
static size_t kind_limit(uint16_t kind)
{
	return kind == CPROF_STR_NVTX || kind == CPROF_STR_PYFILE || kind == CPROF_STR_PYFUNC ? SMAP_SIZE * 5 / 8
											    : SMAP_SIZE * 3 / 4;
}

static uint64_t fnv(uint16_t kind, const char *s, size_t len)
{
	uint64_t h = 1469598103934665603ull ^ kind;
	size_t i;

	for (i = 0; i < len; i++)
		h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
	return h ? h : 1;
}

static int same(const struct cprof_istr *e, uint64_t h, uint16_t kind, const char *s, size_t len)
{
	return e->hash == h && e->kind == kind && e->len == len && memcmp(e->text, s, len) == 0;
}

static struct cprof_istr *find(uint64_t h, uint16_t kind, const char *s, size_t len, uint32_t *slot)
{
	uint32_t i = (uint32_t)h & (SMAP_SIZE - 1), n;

	for (n = 0; n < SMAP_SIZE; n++, i = (i + 1) & (SMAP_SIZE - 1)) {
		struct cprof_istr *e = atomic_load_explicit(&smap[i], memory_order_acquire);

		if (e == NULL) {
			*slot = i;
			return NULL;
		}
		if (same(e, h, kind, s, len))
			return e;
	}
	*slot = UINT32_MAX;
	return NULL;
}

/* Once per process generation the string goes to the collector (a fork child sends its own). */
uint32_t cprof_intern_id(struct cprof_istr *e)
{
	uint32_t gen = atomic_load_explicit(&cprof_generation, memory_order_relaxed);

	/* acquire: marked means queued (cprof_strings_add_once), so what this thread queues next that names
	 * the id (a stack, an event) reaches the collector after the string */
	if (unlikely(atomic_load_explicit(&e->queued_gen, memory_order_acquire) != gen) &&
	    cprof_strings_add_once(e, gen) < 0)
		return 0;
	return e->id;
}

struct cprof_istr *cprof_intern_entry(uint16_t kind, const char *s, size_t len)
{
	struct cprof_istr *e;
	uint64_t h;
	uint32_t slot;

	if (s == NULL)
		return NULL;
	if (len > CPROF_WIRE_MAX_STRING - 8)
		len = CPROF_WIRE_MAX_STRING - 8;
	h = fnv(kind, s, len);
	if (likely(smap != NULL)) {
		e = find(h, kind, s, len, &slot);
		if (likely(e != NULL))
			return e;
	}
	/* a signal handler's call that interrupted this thread here would wait for itself: its new string is not kept */
	if (cprof_lock_unless_held(&smap_lock, &cprof_in_strings) < 0)
		return NULL;
	if (smap == NULL) {
		void *m = mmap(NULL, sizeof(*smap) * SMAP_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (m == MAP_FAILED) {
			e = NULL;
			goto out;
		}
		smap = m;
	}
	e = find(h, kind, s, len, &slot);
	if (e == NULL && smap_used >= kind_limit(kind)) {
		/* full for its kind (40960 or 49152 distinct strings, e.g. NVTX messages with counters in them):
		 * later new strings of the kind all become one placeholder, which the quarter kept free has room for */
		static const char full[] = "(not kept: too many distinct strings)";

		s = full;
		len = sizeof(full) - 1;
		h = fnv(kind, s, len);
		e = find(h, kind, s, len, &slot);
	}
	if (e == NULL) {
		if (slot == UINT32_MAX || (e = arena_entry(len)) == NULL) {
			e = NULL;
			goto out;
		}
		e->hash = h;
		e->kind = kind;
		e->len = (uint16_t)len;
		e->id = string_id_new();
		atomic_init(&e->queued_gen, 0);
		e->next_queued = NULL;
		memcpy(e->text, s, len);
		e->text[len] = '\0';
		atomic_store_explicit(&smap[slot], e, memory_order_release);
		smap_used++;
	}
out:
	cprof_unlock_held(&smap_lock, &cprof_in_strings);
	return e;
}

uint32_t cprof_intern(uint16_t kind, const char *s, size_t len)
{
	struct cprof_istr *e = cprof_intern_entry(kind, s, len);

	return e ? cprof_intern_id(e) : 0;
}

void cprof_strings_lock(int lock)
{
	if (lock)
		pthread_mutex_lock(&smap_lock);
	else
		pthread_mutex_unlock(&smap_lock);
}

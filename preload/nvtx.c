/* NVTX v3 injection: the program's annotations (ranges, marks, names) become timestamped events in its ring. */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <wchar.h>

#define NVTX_NO_IMPL /* the types and ids only: the program's own NVTX copy calls us through its tables */
#include <nvtx3/nvToolsExt.h>

#define PR_FMT "cprof: nvtx"
#include "common/log.h"
#include "preload/cprof.h"

/* Push/pop levels are per domain and thread (NVTX's contract). The first domains count in a fixed array in
 * static TLS (a dlopen-ed injection gets little of it); the next NVTX_MORE in a per-thread page mapped at the
 * thread's first push in one of them. A domain past those, or on a thread whose page cannot be had, shares the
 * last fixed slot: its levels may be off, so its events say -2 (not tracked) and the collector pairs them by domain
 * name alone. Elsewhere the collector uses the levels to stay in step when events were lost. (Until 2026-12-06 every
 * domain past the 30th shared that slot: a capture window opened in one did not close when another's ranges
 * interleaved with it. Then the page was a heap array grown with realloc at a push: a push from a signal handler
 * that interrupted malloc could deadlock; mmap takes no lock of the program's.) */
#define NVTX_SLOTS  32
#define SHARED_SLOT (NVTX_SLOTS - 1)
static __thread int32_t nvtx_depth[NVTX_SLOTS] __attribute__((tls_model("initial-exec")));
static __thread int32_t *nvtx_depth_more __attribute__((tls_model("initial-exec")));
#define NVTX_MORE   (4096 / sizeof(int32_t)) /* one page */
static pthread_key_t depth_more_key;
static pthread_once_t depth_more_once = PTHREAD_ONCE_INIT;
static _Atomic int depth_more_ready; /* the key was made (cprof_nvtx_init), never in a push */

#define NVTX_MAGIC 0x78747663u /* "cvtx": the handle came from us */
#define NVTX_WIDE_MAX 1024     /* bytes of UTF-8 kept of a wide message */

/* A registered string, or a domain's name; interned again in each process generation (a fork child has
 * its own collector stream and string table there). */
struct nvtxStringRegistration_st {
	uint32_t magic;
	_Atomic uint32_t id;
	_Atomic uint32_t gen;
	uint32_t len;
	char text[];
};

struct nvtxDomainRegistration_st {
	uint32_t magic;
	unsigned slot;
	struct nvtxStringRegistration_st *name;
	struct nvtxDomainRegistration_st *next;
};

static pthread_mutex_t domains_lock = PTHREAD_MUTEX_INITIALIZER;
static struct nvtxDomainRegistration_st *domains;
static unsigned ndomains;
/* when a domain cannot be allocated it still gets a handle: not NULL, which would mean the default domain */
static struct nvtxDomainRegistration_st lost_domain = { .magic = NVTX_MAGIC, .slot = SHARED_SLOT };
static _Atomic uint64_t next_range_id;
static _Atomic int warned;

static void warn_once(void)
{
	if (!atomic_exchange(&warned, 1))
		pr_warn("out of memory: some annotations are recorded without their text or domain");
}

/* a fork while another thread creates a domain must not leave the child's lock taken */
static void domains_lock_fork(void)
{
	pthread_mutex_lock(&domains_lock);
}

static void domains_unlock_fork(void)
{
	pthread_mutex_unlock(&domains_lock);
}

__attribute__((constructor)) static void nvtx_ctor(void)
{
	pthread_atfork(domains_lock_fork, domains_unlock_fork, domains_unlock_fork);
}

static struct nvtxStringRegistration_st *text_new(const char *s, size_t len)
{
	struct nvtxStringRegistration_st *t = malloc(sizeof(*t) + len + 1);

	if (t == NULL) {
		warn_once();
		return NULL;
	}
	t->magic = NVTX_MAGIC;
	atomic_init(&t->id, 0);
	atomic_init(&t->gen, 0);
	t->len = (uint32_t)len;
	memcpy(t->text, s, len);
	t->text[len] = '\0';
	return t;
}

static uint32_t text_id(struct nvtxStringRegistration_st *t)
{
	uint32_t gen = atomic_load_explicit(&cprof_generation, memory_order_relaxed), id;

	if (t == NULL || t->magic != NVTX_MAGIC)
		return 0;
	if (likely(atomic_load_explicit(&t->gen, memory_order_acquire) == gen))
		return atomic_load_explicit(&t->id, memory_order_relaxed);
	id = cprof_intern(CPROF_STR_NVTX, t->text, t->len);
	if (id) {
		atomic_store_explicit(&t->id, id, memory_order_relaxed);
		atomic_store_explicit(&t->gen, gen, memory_order_release);
	}
	return id;
}

/* wchar_t is UTF-32 on Linux; invalid code points become U+FFFD, the text is cut at a character boundary */
static size_t wide_to_utf8(const wchar_t *w, char *out, size_t cap)
{
	size_t n = 0;

	for (; *w; w++) {
		uint32_t c = (uint32_t)*w;
		char b[4];
		size_t k;

		if ((c >= 0xd800 && c < 0xe000) || c > 0x10ffff)
			c = 0xfffd;
		if (c < 0x80) {
			b[0] = (char)c;
			k = 1;
		} else if (c < 0x800) {
			b[0] = (char)(0xc0 | (c >> 6));
			b[1] = (char)(0x80 | (c & 0x3f));
			k = 2;
		} else if (c < 0x10000) {
			b[0] = (char)(0xe0 | (c >> 12));
			b[1] = (char)(0x80 | ((c >> 6) & 0x3f));
			b[2] = (char)(0x80 | (c & 0x3f));
			k = 3;
		} else {
			b[0] = (char)(0xf0 | (c >> 18));
			b[1] = (char)(0x80 | ((c >> 12) & 0x3f));
			b[2] = (char)(0x80 | ((c >> 6) & 0x3f));
			b[3] = (char)(0x80 | (c & 0x3f));
			k = 4;
		}
		if (n + k > cap)
			break;
		memcpy(out + n, b, k);
		n += k;
	}
	return n;
}

static inline uint32_t ascii_id(const char *s)
{
	return s ? cprof_intern(CPROF_STR_NVTX, s, strlen(s)) : 0;
}

static uint32_t wide_id(const wchar_t *w)
{
	char buf[NVTX_WIDE_MAX];

	return w ? cprof_intern(CPROF_STR_NVTX, buf, wide_to_utf8(w, buf, sizeof(buf))) : 0;
}

static inline unsigned slot_of(nvtxDomainHandle_t d)
{
	return d && d->magic == NVTX_MAGIC ? d->slot : 0;
}

/* runs on the exiting thread: a later destructor's NVTX call there maps a new page, not the unmapped one */
static void depth_more_free(void *p)
{
	nvtx_depth_more = NULL;
	munmap(p, NVTX_MORE * sizeof(int32_t));
}

static void depth_more_key_make(void)
{
	if (pthread_key_create(&depth_more_key, depth_more_free) == 0)
		atomic_store(&depth_more_ready, 1);
}

/* From the library's constructor: a key made that early is one of glibc's first 32, whose values live in the thread
 * itself, so a push's pthread_setspecific allocates nothing (a later key's first value on a thread is calloc'd) */
void cprof_nvtx_init(void)
{
	pthread_once(&depth_more_once, depth_more_key_make);
}

/* A later domain's count on this thread: its page mapped when grow is set (a push), else NULL when the thread has
 * none yet. Nothing here may take a lock a signal handler's push could find held (malloc's). */
static __attribute__((noinline, cold)) int32_t *depth_more(unsigned slot, int grow)
{
	size_t i = slot - SHARED_SLOT;
	int32_t *p;

	if (i >= NVTX_MORE)
		return NULL;
	if (nvtx_depth_more != NULL)
		return &nvtx_depth_more[i];
	if (!grow || !atomic_load(&depth_more_ready))
		return NULL;
	p = mmap(NULL, NVTX_MORE * sizeof(int32_t), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		warn_once();
		return NULL;
	}
	/* unmapped at the thread's exit (the key is one of the first, cprof_nvtx_init: its value is kept in the thread
	 * itself, no allocation); the fork child's copy is its own */
	if (pthread_setspecific(depth_more_key, p) != 0) {
		munmap(p, NVTX_MORE * sizeof(int32_t));
		return NULL;
	}
	nvtx_depth_more = p;
	return &p[i];
}

/* The domain's count on this thread; *shared set where it has none of its own (the last fixed slot's, untracked) */
static inline int32_t *depth_of(nvtxDomainHandle_t d, int grow, int *shared)
{
	unsigned slot = slot_of(d);
	int32_t *dp;

	*shared = 0;
	if (likely(slot < SHARED_SLOT))
		return &nvtx_depth[slot];
	if (d != &lost_domain) {
		dp = depth_more(slot, grow);
		if (dp != NULL)
			return dp;
	}
	*shared = 1;
	return &nvtx_depth[SHARED_SLOT];
}

/* the level as the collector gets it */
static inline int wire_level(int shared, int level)
{
	return shared ? NVTX_NO_PUSH_POP_TRACKING : level;
}

/* The attributes a caller filled, as far as the version and size it declared reach. */
static void from_attrs(struct cprof_wire_api *ev, const nvtxEventAttributes_t *a)
{
	if (a == NULL || a->version < 1 || a->size < offsetof(nvtxEventAttributes_t, message) + sizeof(a->message))
		return;
	ev->arg[CPROF_ARG_NVTX_CATEGORY] = a->category;
	if (a->colorType == NVTX_COLOR_ARGB)
		ev->arg[CPROF_ARG_NVTX_COLOR] = a->color;
	switch (a->payloadType) {
	case NVTX_PAYLOAD_TYPE_UNSIGNED_INT64:
	case NVTX_PAYLOAD_TYPE_INT64:
	case NVTX_PAYLOAD_TYPE_DOUBLE:
		ev->bytes = a->payload.ullValue;
		break;
	case NVTX_PAYLOAD_TYPE_UNSIGNED_INT32:
	case NVTX_PAYLOAD_TYPE_INT32:
	case NVTX_PAYLOAD_TYPE_FLOAT:
		ev->bytes = a->payload.uiValue;
		break;
	}
	switch (a->messageType) {
	case NVTX_MESSAGE_TYPE_ASCII:
		ev->name = ascii_id(a->message.ascii);
		break;
	case NVTX_MESSAGE_TYPE_UNICODE:
		ev->name = wide_id(a->message.unicode);
		break;
	case NVTX_MESSAGE_TYPE_REGISTERED:
		ev->name = text_id(a->message.registered);
		break;
	}
}

/* Call only when cprof_active(): the event goes to this thread's ring, never blocking. */
static inline __attribute__((always_inline)) void emit(struct cprof_wire_api *ev, unsigned api, nvtxDomainHandle_t d,
						      int ret)
{
	ev->start_ns = ev->end_ns = cprof_tick(); /* ticks, as every ring event (cprof_tick_ns) */
	ev->api = (uint16_t)api;
	ev->ret = ret;
	if (d && d->magic == NVTX_MAGIC)
		ev->arg[CPROF_ARG_NVTX_DOMAIN] = text_id(d->name);
	cprof_record(ev);
}

/* ---- ranges pushed and popped on a thread ---- */

/* PyTorch's op ranges read "aten::mm, seq = 3, op_id = 17": unique per call, they would fill the string table; the
 * op's name alone is kept and the range marked as an op. Where the decorations begin; NULL for any other range. */
static const char *op_decorations(const char *s)
{
	const char *op = s ? strstr(s, ", op_id = ") : NULL, *seq;

	if (op == NULL)
		return NULL;
	seq = strstr(s, ", seq = ");
	return seq && seq < op ? seq : op;
}

/* The text a capture matches: the op's name, as the report names the range ("ProfilerStep#3" of emit_nvtx's and
 * --torch-ops' "ProfilerStep#3, op_id = 17"; --steps and nvtx:NAME never opened on them until 2026-12-06). In buf
 * when cut. */
static const char *capture_text(const char *s, char *buf, size_t size)
{
	const char *end = op_decorations(s);
	size_t n;

	if (end == NULL)
		return s;
	n = (size_t)(end - s) < size ? (size_t)(end - s) : size - 1;
	memcpy(buf, s, n);
	buf[n] = '\0';
	return buf;
}

static inline int level_push(nvtxDomainHandle_t d, int *shared)
{
	int32_t *dp = depth_of(d, 1, shared);

	if (unlikely(*dp == INT32_MAX))
		return -1;
	return (*dp)++;
}

static int push_ex(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
	int shared, level = level_push(d, &shared);

	/* a registered string is the form nsys's NVTX capture matches by default: programs written for it use it */
	if (unlikely(cprof_capture_mode >= CPROF_CAPTURE_NVTX) && a &&
	    (a->messageType == NVTX_MESSAGE_TYPE_ASCII ||
	     (a->messageType == NVTX_MESSAGE_TYPE_REGISTERED && a->message.registered &&
	      a->message.registered->magic == NVTX_MAGIC))) {
		char buf[256];

		cprof_capture_nvtx_push(a->messageType == NVTX_MESSAGE_TYPE_ASCII ? capture_text(a->message.ascii, buf, sizeof(buf))
										   : a->message.registered->text,
					d, d && d->magic == NVTX_MAGIC && d->name ? d->name->text : NULL, level);
	}

	if (cprof_active()) {
		struct cprof_wire_api ev = { 0 };

		from_attrs(&ev, a);
		emit(&ev, CPROF_API_nvtxRangePush, d, wire_level(shared, level));
	}
	return level;
}

static int range_push_ex(const nvtxEventAttributes_t *a)
{
	return push_ex(NULL, a);
}

static uint32_t push_text_id(struct cprof_wire_api *ev, const char *s)
{
	const char *end = op_decorations(s);

	if (end == NULL)
		return ascii_id(s);
	ev->arg[CPROF_ARG_NVTX_CATEGORY] = CPROF_NVTX_CATEGORY_TORCH_OP;
	return cprof_intern(CPROF_STR_NVTX, s, (size_t)(end - s));
}

static int range_push_a(const char *message)
{
	int shared, level = level_push(NULL, &shared);

	if (unlikely(cprof_capture_mode >= CPROF_CAPTURE_NVTX)) {
		char buf[256];

		cprof_capture_nvtx_push(capture_text(message, buf, sizeof(buf)), NULL, NULL, level);
	}

	if (cprof_active()) {
		struct cprof_wire_api ev = { 0 };

		ev.name = push_text_id(&ev, message);
		emit(&ev, CPROF_API_nvtxRangePush, NULL, level);
	}
	return level;
}

static int range_push_w(const wchar_t *message)
{
	int shared, level = level_push(NULL, &shared);

	if (cprof_active()) {
		struct cprof_wire_api ev = { 0 };

		ev.name = wide_id(message);
		emit(&ev, CPROF_API_nvtxRangePush, NULL, level);
	}
	return level;
}

/* Returns the level of the range ended, negative when none was open. An unmatched pop still goes to the
 * collector, which counts it (a range opened before profiling began, or unbalanced annotations). */
static int pop(nvtxDomainHandle_t d)
{
	int shared;
	int32_t *dp = depth_of(d, 0, &shared);
	int level = *dp > 0 ? --(*dp) : -1;

	if (cprof_active()) {
		struct cprof_wire_api ev = { 0 };

		emit(&ev, CPROF_API_nvtxRangePop, d, wire_level(shared, level));
	}
	if (unlikely(cprof_capture_mode >= CPROF_CAPTURE_NVTX))
		cprof_capture_nvtx_pop(d, level);
	return level;
}

static int range_pop(void)
{
	return pop(NULL);
}

static int domain_range_push_ex(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
	return push_ex(d, a);
}

static int domain_range_pop(nvtxDomainHandle_t d)
{
	return pop(d);
}

/* ---- ranges started and ended anywhere, paired by id ---- */

static nvtxRangeId_t start_range(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a, const char *ascii, const wchar_t *wide)
{
	nvtxRangeId_t id = atomic_fetch_add_explicit(&next_range_id, 1, memory_order_relaxed) + 1;
	struct cprof_wire_api ev = { 0 };

	if (cprof_active()) {
		if (a)
			from_attrs(&ev, a);
		else
			ev.name = ascii ? ascii_id(ascii) : wide_id(wide);
		ev.ptr = id;
		emit(&ev, CPROF_API_nvtxRangeStart, d, 0);
	}
	return id;
}

static nvtxRangeId_t range_start_ex(const nvtxEventAttributes_t *a)
{
	return start_range(NULL, a, NULL, NULL);
}

static nvtxRangeId_t range_start_a(const char *message)
{
	return start_range(NULL, NULL, message, NULL);
}

static nvtxRangeId_t range_start_w(const wchar_t *message)
{
	return start_range(NULL, NULL, NULL, message);
}

static nvtxRangeId_t domain_range_start_ex(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
	return start_range(d, a, NULL, NULL);
}

static void end_range(nvtxDomainHandle_t d, nvtxRangeId_t id)
{
	struct cprof_wire_api ev = { 0 };

	if (cprof_active()) {
		ev.ptr = id;
		emit(&ev, CPROF_API_nvtxRangeEnd, d, 0);
	}
}

static void range_end(nvtxRangeId_t id)
{
	end_range(NULL, id);
}

static void domain_range_end(nvtxDomainHandle_t d, nvtxRangeId_t id)
{
	end_range(d, id);
}

/* ---- marks ---- */

static void mark(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a, const char *ascii, const wchar_t *wide)
{
	struct cprof_wire_api ev = { 0 };

	if (!cprof_active())
		return;
	if (a)
		from_attrs(&ev, a);
	else
		ev.name = ascii ? ascii_id(ascii) : wide_id(wide);
	emit(&ev, CPROF_API_nvtxMark, d, 0);
}

static void mark_ex(const nvtxEventAttributes_t *a)
{
	mark(NULL, a, NULL, NULL);
}

static void mark_a(const char *message)
{
	mark(NULL, NULL, message, NULL);
}

static void mark_w(const wchar_t *message)
{
	mark(NULL, NULL, NULL, message);
}

static void domain_mark_ex(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
	mark(d, a, NULL, NULL);
}

/* ---- names of threads, streams, devices ---- */

static void name_object(unsigned api, uint64_t ptr, uint64_t stream, const char *ascii, const wchar_t *wide)
{
	struct cprof_wire_api ev = { 0 };

	if (!cprof_active() || (ascii == NULL && wide == NULL))
		return;
	ev.name = ascii ? ascii_id(ascii) : wide_id(wide);
	ev.ptr = ptr;
	ev.stream = stream;
	emit(&ev, api, NULL, 0);
}

static void name_os_thread_a(uint32_t tid, const char *s)
{
	name_object(CPROF_API_nvtxNameOsThread, tid, 0, s, NULL);
}

static void name_os_thread_w(uint32_t tid, const wchar_t *s)
{
	name_object(CPROF_API_nvtxNameOsThread, tid, 0, NULL, s);
}

/* CUstream and cudaStream_t are the same handle, CUdevice and the runtime's device the same ordinal */
static void name_stream_a(void *stream, const char *s)
{
	name_object(CPROF_API_nvtxNameCudaStream, 0, (uintptr_t)stream, s, NULL);
}

static void name_stream_w(void *stream, const wchar_t *s)
{
	name_object(CPROF_API_nvtxNameCudaStream, 0, (uintptr_t)stream, NULL, s);
}

static void name_device_a(int device, const char *s)
{
	name_object(CPROF_API_nvtxNameCudaDevice, (uint32_t)device, 0, s, NULL);
}

static void name_device_w(int device, const wchar_t *s)
{
	name_object(CPROF_API_nvtxNameCudaDevice, (uint32_t)device, 0, NULL, s);
}

/* ---- domains and registered strings: handles live as long as the process ---- */

/* The same name gives the same domain, so its push/pop levels are one count. */
static nvtxDomainHandle_t domain_create(const char *text, size_t len)
{
	struct nvtxDomainRegistration_st *d;
	struct cprof_wire_api ev = { 0 };

	pthread_mutex_lock(&domains_lock);
	for (d = domains; d; d = d->next)
		if (d->name->len == len && memcmp(d->name->text, text, len) == 0)
			break;
	if (d == NULL && (d = malloc(sizeof(*d))) != NULL) {
		d->magic = NVTX_MAGIC;
		d->name = text_new(text, len);
		if (d->name == NULL) {
			free(d);
			d = NULL;
		} else {
			d->slot = ndomains + 1 < UINT_MAX ? ndomains + 1 : UINT_MAX; /* past SHARED_SLOT: depth_more's */
			ndomains++;
			d->next = domains;
			domains = d;
		}
	}
	pthread_mutex_unlock(&domains_lock);
	if (d == NULL) {
		warn_once();
		return &lost_domain;
	}
	if (cprof_active()) {
		ev.name = text_id(d->name);
		ev.ptr = d->slot;
		emit(&ev, CPROF_API_nvtxDomainCreate, d, 0);
	}
	return d;
}

static nvtxDomainHandle_t domain_create_a(const char *name)
{
	return domain_create(name ? name : "", name ? strlen(name) : 0);
}

static nvtxDomainHandle_t domain_create_w(const wchar_t *name)
{
	char buf[NVTX_WIDE_MAX];

	return domain_create(buf, name ? wide_to_utf8(name, buf, sizeof(buf)) : 0);
}

static void domain_destroy(nvtxDomainHandle_t d)
{
	(void)d; /* handles may still be in flight on other threads; a domain is a few bytes */
}

static nvtxStringHandle_t register_string(const char *text, size_t len)
{
	struct nvtxStringRegistration_st *t = text_new(text, len);

	if (t && cprof_active())
		text_id(t); /* interned now, so the annotations that use it stay cheap */
	return t;
}

static nvtxStringHandle_t domain_register_string_a(nvtxDomainHandle_t d, const char *s)
{
	(void)d;
	return s ? register_string(s, strlen(s)) : NULL;
}

static nvtxStringHandle_t domain_register_string_w(nvtxDomainHandle_t d, const wchar_t *s)
{
	char buf[NVTX_WIDE_MAX];

	(void)d;
	return s ? register_string(buf, wide_to_utf8(s, buf, sizeof(buf))) : NULL;
}

static void initialize(const void *reserved)
{
	(void)reserved;
	cprof_active(); /* nvtxInitialize asks for the start-up cost now rather than at the first annotation */
}

/* ---- attaching to one NVTX instance (each DSO built with the NVTX headers has its own) ---- */

#define FN(f) ((NvtxFunctionPointer)(f))

static const NvtxFunctionPointer core_fns[NVTX_CBID_CORE_SIZE] = {
	[NVTX_CBID_CORE_MarkEx] = FN(mark_ex),
	[NVTX_CBID_CORE_MarkA] = FN(mark_a),
	[NVTX_CBID_CORE_MarkW] = FN(mark_w),
	[NVTX_CBID_CORE_RangeStartEx] = FN(range_start_ex),
	[NVTX_CBID_CORE_RangeStartA] = FN(range_start_a),
	[NVTX_CBID_CORE_RangeStartW] = FN(range_start_w),
	[NVTX_CBID_CORE_RangeEnd] = FN(range_end),
	[NVTX_CBID_CORE_RangePushEx] = FN(range_push_ex),
	[NVTX_CBID_CORE_RangePushA] = FN(range_push_a),
	[NVTX_CBID_CORE_RangePushW] = FN(range_push_w),
	[NVTX_CBID_CORE_RangePop] = FN(range_pop),
	[NVTX_CBID_CORE_NameOsThreadA] = FN(name_os_thread_a),
	[NVTX_CBID_CORE_NameOsThreadW] = FN(name_os_thread_w),
};

static const NvtxFunctionPointer core2_fns[NVTX_CBID_CORE2_SIZE] = {
	[NVTX_CBID_CORE2_DomainMarkEx] = FN(domain_mark_ex),
	[NVTX_CBID_CORE2_DomainRangeStartEx] = FN(domain_range_start_ex),
	[NVTX_CBID_CORE2_DomainRangeEnd] = FN(domain_range_end),
	[NVTX_CBID_CORE2_DomainRangePushEx] = FN(domain_range_push_ex),
	[NVTX_CBID_CORE2_DomainRangePop] = FN(domain_range_pop),
	[NVTX_CBID_CORE2_DomainRegisterStringA] = FN(domain_register_string_a),
	[NVTX_CBID_CORE2_DomainRegisterStringW] = FN(domain_register_string_w),
	[NVTX_CBID_CORE2_DomainCreateA] = FN(domain_create_a),
	[NVTX_CBID_CORE2_DomainCreateW] = FN(domain_create_w),
	[NVTX_CBID_CORE2_DomainDestroy] = FN(domain_destroy),
	[NVTX_CBID_CORE2_Initialize] = FN(initialize),
};

static const NvtxFunctionPointer cuda_fns[NVTX_CBID_CUDA_SIZE] = {
	[NVTX_CBID_CUDA_NameCuDeviceA] = FN(name_device_a),
	[NVTX_CBID_CUDA_NameCuDeviceW] = FN(name_device_w),
	[NVTX_CBID_CUDA_NameCuStreamA] = FN(name_stream_a),
	[NVTX_CBID_CUDA_NameCuStreamW] = FN(name_stream_w),
};

static const NvtxFunctionPointer cudart_fns[NVTX_CBID_CUDART_SIZE] = {
	[NVTX_CBID_CUDART_NameCudaDeviceA] = FN(name_device_a),
	[NVTX_CBID_CUDART_NameCudaDeviceW] = FN(name_device_w),
	[NVTX_CBID_CUDART_NameCudaStreamA] = FN(name_stream_a),
	[NVTX_CBID_CUDART_NameCudaStreamW] = FN(name_stream_w),
};

/* Slots the instance does not have (an older NVTX) stay as they are; slots we leave NULL become no-ops. */
static int attach(const NvtxExportTableCallbacks *cb, NvtxCallbackModule module, const NvtxFunctionPointer *fns,
		  unsigned n)
{
	NvtxFunctionTable table = NULL;
	unsigned size = 0, i;

	if (!cb->GetModuleFunctionTable(module, &table, &size) || table == NULL)
		return -ENOENT;
	for (i = 1; i < size && i < n; i++)
		if (fns[i] && table[i])
			*table[i] = fns[i];
	return 0;
}

CPROF_EXPORT int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get_export_table)
{
	const NvtxExportTableCallbacks *cb;
	const NvtxExportTableVersionInfo *vi;

	/* not profiling (no collector, setuid): NVTX turns every call into a no-op, as without a tool */
	/* paused (--capture-range) still takes the annotations: an NVTX range may open the window */
	if (get_export_table == NULL || (!cprof_active() && atomic_load(&cprof_state) != CPROF_ST_PAUSED))
		return 0;
	cb = get_export_table(NVTX_ETID_CALLBACKS);
	if (cb == NULL || cb->struct_size < sizeof(*cb) || cb->GetModuleFunctionTable == NULL) {
		pr_warn("this NVTX has no callback table; its annotations are not recorded");
		return 0;
	}
	vi = get_export_table(NVTX_ETID_VERSIONINFO);
	if (vi && vi->struct_size >= sizeof(*vi) && vi->SetInjectionNvtxVersion)
		vi->SetInjectionNvtxVersion(NVTX_VERSION);
	/* CORE is what every annotation needs; the others are optional in older NVTX copies */
	if (attach(cb, NVTX_CB_MODULE_CORE, core_fns, NVTX_CBID_CORE_SIZE) < 0) {
		pr_warn("this NVTX has no core table; its annotations are not recorded");
		return 0;
	}
	attach(cb, NVTX_CB_MODULE_CORE2, core2_fns, NVTX_CBID_CORE2_SIZE);
	attach(cb, NVTX_CB_MODULE_CUDA, cuda_fns, NVTX_CBID_CUDA_SIZE);
	attach(cb, NVTX_CB_MODULE_CUDART, cudart_fns, NVTX_CBID_CUDART_SIZE);
	return 1;
}

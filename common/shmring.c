/* The shared-memory ring between a process's flusher and cprofd's intake (common/shmring.h). */
#include <errno.h>
#include <string.h>

#include "common/shmring.h"
#include "common/wire.h"

void cprof_shmring_init(struct cprof_shmring *r, void *map, uint32_t size)
{
	r->hdr = map;
	r->data = (uint8_t *)map + CPROF_SHMRING_DATA;
	r->size = size;
	memset(r->hdr, 0, sizeof(*r->hdr));
	r->hdr->magic = CPROF_SHMRING_MAGIC;
	r->hdr->size = size;
}

static void copy_in(struct cprof_shmring *r, uint64_t at, const void *buf, size_t len)
{
	size_t off = (size_t)(at & (r->size - 1)), first = r->size - off < len ? r->size - off : len;

	memcpy(r->data + off, buf, first);
	memcpy(r->data, (const uint8_t *)buf + first, len - first);
}

static void copy_out(const struct cprof_shmring *r, uint64_t at, void *buf, size_t len)
{
	size_t off = (size_t)(at & (r->size - 1)), first = r->size - off < len ? r->size - off : len;

	memcpy(buf, r->data + off, first);
	memcpy((uint8_t *)buf + first, r->data, len - first);
}

int cprof_shmring_put(struct cprof_shmring *r, const void *buf, size_t len)
{
	uint64_t head = atomic_load_explicit(&r->hdr->head, memory_order_relaxed);
	uint64_t tail = atomic_load_explicit(&r->hdr->tail, memory_order_acquire);

	/* a consumer's tail past our head (it cannot be, unless something wrote it) frees nothing */
	if (tail > head || head - tail + len > r->size)
		return -EAGAIN;
	copy_in(r, head, buf, len);
	atomic_store_explicit(&r->hdr->head, head + len, memory_order_release);
	return 0;
}

int cprof_shmring_attach(struct cprof_shmring *r, void *map, uint32_t size)
{
	struct cprof_shmring_hdr *h = map;

	if (size < CPROF_SHMRING_MIN || size > CPROF_SHMRING_MAX || (size & (size - 1)) ||
	    h->magic != CPROF_SHMRING_MAGIC || h->size != size)
		return -EINVAL;
	r->hdr = h;
	r->data = (uint8_t *)map + CPROF_SHMRING_DATA;
	r->size = size;
	r->tail = atomic_load_explicit(&h->tail, memory_order_relaxed); /* 0 in a fresh ring; read this once only */
	return 0;
}

uint64_t cprof_shmring_avail(const struct cprof_shmring *r)
{
	uint64_t head = atomic_load_explicit(&r->hdr->head, memory_order_acquire);

	return head < r->tail || head - r->tail > r->size ? 0 : head - r->tail;
}

size_t cprof_shmring_take(struct cprof_shmring *r, uint8_t *out, size_t room, uint64_t max, int *corrupt)
{
	uint64_t tail = r->tail, head = atomic_load_explicit(&r->hdr->head, memory_order_acquire), end;
	size_t got = 0;

	*corrupt = 0;
	/* the producer's memory is the program's: a head behind the tail or more than the data ahead is no ring */
	if (head < tail || head - tail > r->size) {
		*corrupt = 1;
		return 0;
	}
	end = head - tail > max ? tail + max : head;
	while (end - tail >= sizeof(struct cprof_wire_hdr) && room - got >= sizeof(struct cprof_wire_hdr)) {
		struct cprof_wire_hdr h;

		/* the header is read once, into out, and checked there: a producer that rewrites it meanwhile changes
		 * nothing of what was checked */
		copy_out(r, tail, out + got, sizeof(h));
		memcpy(&h, out + got, sizeof(h));
		if (h.magic != CPROF_WIRE_MAGIC || h.len < sizeof(h) || h.len > CPROF_WIRE_MAX_FRAME || h.len > head - tail) {
			*corrupt = 1;
			break;
		}
		if (h.len > room - got || h.len > end - tail)
			break;
		copy_out(r, tail + sizeof(h), out + got + sizeof(h), h.len - sizeof(h));
		got += h.len;
		tail += h.len;
	}
	if (!*corrupt && head != tail && head - tail < sizeof(struct cprof_wire_hdr))
		*corrupt = 1; /* a producer publishes whole frames only */
	r->tail = tail;
	atomic_store_explicit(&r->hdr->tail, tail, memory_order_release);
	return got;
}

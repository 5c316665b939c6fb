/* The shared-memory ring a process's flusher writes its frames into and cprofd's intake reads: the wire's data path without a syscall a frame. */
#ifndef CPROF_COMMON_SHMRING_H
#define CPROF_COMMON_SHMRING_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#define CPROF_SHMRING_MAGIC 0x474e5243u /* "CRNG" */
#define CPROF_SHMRING_DATA  4096u       /* the data starts one page in: the header's fields on lines of their own */
#define CPROF_SHMRING_MIN   (64u << 10)
#define CPROF_SHMRING_MAX   (64u << 20)

/* At the start of the memfd. The producer (one flusher) writes head, the consumer (cprofd's intake) tail and
 * attached; each reads the other's. Byte offsets in the data grow without wrapping; a frame may straddle the
 * data's end. */
struct cprof_shmring_hdr {
	uint32_t magic;
	uint32_t size;                   /* bytes of data, a power of two */
	_Atomic uint32_t attached;       /* the consumer mapped it: frames may go here from the producer's next KICK */
	uint32_t pad0[13];
	_Atomic uint64_t head;           /* producer: the end of the last whole frame published */
	uint64_t pad1[7];
	_Atomic uint64_t tail;           /* consumer: the end of what it took */
	uint64_t pad2[7];
};
_Static_assert(sizeof(struct cprof_shmring_hdr) == 192, "shmring header layout");
_Static_assert(sizeof(struct cprof_shmring_hdr) <= CPROF_SHMRING_DATA, "shmring header fits its page");

/* One side's view: the mapping and the data's size; the consumer keeps its own copy of the size and of its tail,
 * never re-read from the memory the producer can write. */
struct cprof_shmring {
	struct cprof_shmring_hdr *hdr;
	uint8_t *data;
	uint32_t size;
	uint64_t tail; /* consumer: where it took up to (hdr->tail is what it tells the producer) */
};

/* A fresh header for size bytes of data at map (map_len = CPROF_SHMRING_DATA + size). */
void cprof_shmring_init(struct cprof_shmring *r, void *map, uint32_t size);
/* Producer: one whole frame of len bytes in, published; -EAGAIN when there is no room (nothing written).
 * Async-signal-safe. */
int cprof_shmring_put(struct cprof_shmring *r, const void *buf, size_t len);
/* Consumer: the consumer's view of a mapping (size is what it mapped); -EINVAL when the header disagrees. */
int cprof_shmring_attach(struct cprof_shmring *r, void *map, uint32_t size);
/* Consumer: bytes published and not taken (0 when the head makes no sense: the take says so). */
uint64_t cprof_shmring_avail(const struct cprof_shmring *r);
/* Consumer: copies whole frames (each checked by its wire header, as copied) into out, at most room bytes and
 * at most max bytes of the ring, and releases them to the producer. Returns the bytes copied; *corrupt set when
 * the ring cannot be read any further (a head behind the tail or past the data, a header that is no frame's):
 * what was copied before stays good. */
size_t cprof_shmring_take(struct cprof_shmring *r, uint8_t *out, size_t room, uint64_t max, int *corrupt);

#endif

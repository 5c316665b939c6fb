/* Building and validating wire frames; every length is checked against the bytes actually present. */
#include <errno.h>
#include <string.h>

#include "common/wire.h"

static const char *const wire_errors[] = {
	[CPROF_WIRE_OK] = "ok",
	[CPROF_WIRE_SHORT] = "truncated frame",
	[CPROF_WIRE_BAD_MAGIC] = "bad magic",
	[CPROF_WIRE_BAD_VERSION] = "unsupported wire version",
	[CPROF_WIRE_BAD_TYPE] = "unknown message type",
	[CPROF_WIRE_BAD_LENGTH] = "bad frame length",
	[CPROF_WIRE_BAD_PAYLOAD] = "malformed payload",
};

const char *cprof_wire_strerror(int err)
{
	if (err < 0 || err >= (int)(sizeof(wire_errors) / sizeof(wire_errors[0])))
		return "unknown error";
	return wire_errors[err];
}

void cprof_wire_hdr_init(struct cprof_wire_hdr *h, uint16_t type, uint32_t pid, uint32_t seq,
			 uint32_t count, uint32_t len)
{
	h->magic = CPROF_WIRE_MAGIC;
	h->version = CPROF_WIRE_VERSION;
	h->type = type;
	h->len = len;
	h->pid = pid;
	h->seq = seq;
	h->count = count;
}

static int nul_terminated(const uint8_t *p, size_t n)
{
	return n == 0 || p[n - 1] == '\0';
}

static int check_hello(const struct cprof_wire_hdr *h, const uint8_t *payload, size_t plen)
{
	const struct cprof_wire_hello *hello = (const void *)payload;
	size_t need;
	size_t i, nuls = 0;

	if (plen < sizeof(*hello) || h->count != 1)
		return CPROF_WIRE_BAD_PAYLOAD;
	need = sizeof(*hello) + (size_t)hello->exe_len + hello->host_len + hello->argv_len;
	if (need != plen)
		return CPROF_WIRE_BAD_PAYLOAD;
	if (hello->exe_len == 0 || hello->host_len == 0)
		return CPROF_WIRE_BAD_PAYLOAD;
	if (!nul_terminated(hello->data, hello->exe_len) ||
	    !nul_terminated(hello->data + hello->exe_len, hello->host_len) ||
	    !nul_terminated(hello->data + hello->exe_len + hello->host_len, hello->argv_len))
		return CPROF_WIRE_BAD_PAYLOAD;
	for (i = 0; i < hello->argv_len; i++)
		nuls += hello->data[hello->exe_len + hello->host_len + i] == '\0';
	if (nuls != hello->argc)
		return CPROF_WIRE_BAD_PAYLOAD;
	if (hello->pid != h->pid)
		return CPROF_WIRE_BAD_PAYLOAD;
	return CPROF_WIRE_OK;
}

static int check_strings(const struct cprof_wire_hdr *h, const uint8_t *payload, size_t plen)
{
	size_t off = 0;
	uint32_t i;

	for (i = 0; i < h->count; i++) {
		const struct cprof_wire_string *s = (const void *)(payload + off);
		size_t rec;

		if (plen - off < sizeof(*s))
			return CPROF_WIRE_BAD_PAYLOAD;
		rec = (sizeof(*s) + s->len + 3) & ~(size_t)3;
		if (rec > plen - off || s->id == 0 || s->kind == 0)
			return CPROF_WIRE_BAD_PAYLOAD;
		off += rec;
	}
	return off == plen ? CPROF_WIRE_OK : CPROF_WIRE_BAD_PAYLOAD;
}

static int check_stacks(const struct cprof_wire_hdr *h, const uint8_t *payload, size_t plen)
{
	size_t off = 0;
	uint32_t i;

	if (h->count == 0)
		return CPROF_WIRE_BAD_LENGTH;
	for (i = 0; i < h->count; i++) {
		const struct cprof_wire_stack *st = (const void *)(payload + off);
		size_t rec;

		if (plen - off < sizeof(*st))
			return CPROF_WIRE_BAD_PAYLOAD;
		rec = sizeof(*st) + ((size_t)st->nnative + st->npy) * sizeof(struct cprof_wire_frame);
		if (rec > plen - off || st->id == 0 || st->nnative > CPROF_STACK_MAX_NATIVE ||
		    st->npy > CPROF_STACK_MAX_PY || st->nnative + st->npy == 0)
			return CPROF_WIRE_BAD_PAYLOAD;
		off += rec;
	}
	return off == plen ? CPROF_WIRE_OK : CPROF_WIRE_BAD_PAYLOAD;
}

static int check_fixed(const struct cprof_wire_hdr *h, size_t plen, size_t rec, uint32_t max_count)
{
	if (h->count == 0 || h->count > max_count || plen != (size_t)h->count * rec)
		return CPROF_WIRE_BAD_LENGTH;
	return CPROF_WIRE_OK;
}

/* The header's own fields only (the frame behind it may not be there yet). */
static int hdr_plausible(const uint8_t *at)
{
	struct cprof_wire_hdr h;

	memcpy(&h, at, sizeof(h));
	return h.magic == CPROF_WIRE_MAGIC && h.version == CPROF_WIRE_VERSION && h.type != 0 && h.type < CPROF_MSG__MAX &&
	       h.len >= sizeof(h) && h.len <= CPROF_WIRE_MAX_FRAME;
}

const void *cprof_wire_find_magic(const void *p, size_t n)
{
	static const uint8_t m[4] = { CPROF_WIRE_MAGIC & 0xff, (CPROF_WIRE_MAGIC >> 8) & 0xff,
				      (CPROF_WIRE_MAGIC >> 16) & 0xff, CPROF_WIRE_MAGIC >> 24 };
	const uint8_t *b = p, *end = b + n;

	while (end - b >= 4) {
		b = memchr(b, m[0], (size_t)(end - b) - 3);
		if (b == NULL)
			return NULL;
		if (b[1] == m[1] && b[2] == m[2] && b[3] == m[3])
			return b;
		b++;
	}
	return NULL;
}

size_t cprof_wire_torn(const void *buf, size_t avail)
{
	const uint8_t *b = buf, *p;
	struct cprof_wire_hdr h;
	size_t lim;

	if (avail < sizeof(h) || !hdr_plausible(b))
		return 0;
	memcpy(&h, b, sizeof(h));
	/* a candidate starts inside the claimed frame and its whole header is readable */
	lim = h.len < avail ? h.len : avail;
	for (p = b + 1; (size_t)(p - b) < lim; p++) {
		p = cprof_wire_find_magic(p, lim - (size_t)(p - b));
		if (p == NULL || (size_t)(p - b) + sizeof(h) > avail)
			return 0;
		if (hdr_plausible(p))
			return (size_t)(p - b);
	}
	return 0;
}

int cprof_wire_check(const void *buf, size_t avail, size_t *frame_len)
{
	const struct cprof_wire_hdr *h = buf;
	const uint8_t *payload;
	size_t plen;

	if (avail < sizeof(*h)) {
		/* a wrong magic is known as soon as 4 bytes are there */
		if (avail >= 4 && h->magic != CPROF_WIRE_MAGIC)
			return CPROF_WIRE_BAD_MAGIC;
		return CPROF_WIRE_SHORT;
	}
	if (h->magic != CPROF_WIRE_MAGIC)
		return CPROF_WIRE_BAD_MAGIC;
	if (h->version != CPROF_WIRE_VERSION)
		return CPROF_WIRE_BAD_VERSION;
	if (h->type == 0 || h->type >= CPROF_MSG__MAX)
		return CPROF_WIRE_BAD_TYPE;
	if (h->len < sizeof(*h) || h->len > CPROF_WIRE_MAX_FRAME)
		return CPROF_WIRE_BAD_LENGTH;
	if (avail < h->len)
		return CPROF_WIRE_SHORT;
	payload = (const uint8_t *)buf + sizeof(*h);
	plen = h->len - sizeof(*h);
	*frame_len = h->len;

	switch (h->type) {
	case CPROF_MSG_HELLO:
		return check_hello(h, payload, plen);
	case CPROF_MSG_STRINGS:
		if (h->count == 0)
			return CPROF_WIRE_BAD_LENGTH;
		return check_strings(h, payload, plen);
	case CPROF_MSG_STACKS:
		return check_stacks(h, payload, plen);
	case CPROF_MSG_API:
		return check_fixed(h, plen, sizeof(struct cprof_wire_api), CPROF_WIRE_API_PER_FRAME);
	case CPROF_MSG_LOST:
		return check_fixed(h, plen, sizeof(struct cprof_wire_lost), 1);
	case CPROF_MSG_COST:
		return check_fixed(h, plen, sizeof(struct cprof_wire_cost), 1);
	case CPROF_MSG_COUNTS:
		return check_fixed(h, plen, sizeof(struct cprof_wire_count), CPROF_WIRE_COUNTS_PER_FRAME);
	case CPROF_MSG_BYE:
		return check_fixed(h, plen, sizeof(struct cprof_wire_bye), 1);
	case CPROF_MSG_RUN_END:
		return check_fixed(h, plen, sizeof(struct cprof_wire_run_end), 1);
	case CPROF_MSG_GPU:
		return check_fixed(h, plen, sizeof(struct cprof_wire_gpu), CPROF_WIRE_GPU_PER_FRAME);
	case CPROF_MSG_RING:
		return check_fixed(h, plen, sizeof(struct cprof_wire_ring), 1);
	case CPROF_MSG_KICK:
		return plen == 0 ? CPROF_WIRE_OK : CPROF_WIRE_BAD_LENGTH;
	case CPROF_MSG_CRASH:
		if (h->count > CPROF_WIRE_CRASH_MAX_THREADS ||
		    plen != sizeof(struct cprof_wire_crash) + (size_t)h->count * sizeof(struct cprof_wire_crash_thread))
			return CPROF_WIRE_BAD_LENGTH;
		return CPROF_WIRE_OK;
	case CPROF_MSG_STATUS: {
		int err = check_fixed(h, plen, sizeof(struct cprof_wire_status), 1);
		const struct cprof_wire_status *st = (const void *)payload;

		if (err == CPROF_WIRE_OK && memchr(st->text, '\0', sizeof(st->text)) == NULL)
			return CPROF_WIRE_BAD_PAYLOAD;
		return err;
	}
	}
	return CPROF_WIRE_BAD_TYPE;
}

static size_t put_str(uint8_t *dst, size_t room, const char *s)
{
	size_t n = strlen(s) + 1;

	if (n > room)
		return 0;
	memcpy(dst, s, n);
	return n;
}

size_t cprof_wire_build_hello(void *frame, uint32_t seq, const struct cprof_wire_hello *fixed,
			      const char *exe, const char *host, const char *const *argv, int argc)
{
	struct cprof_wire_hdr *h = frame;
	struct cprof_wire_hello *hello = (void *)((uint8_t *)frame + sizeof(*h));
	size_t room = CPROF_WIRE_MAX_PAYLOAD - sizeof(*hello);
	uint8_t *p = hello->data;
	size_t n;
	int i;

	*hello = *fixed;
	hello->flags &= ~CPROF_HELLO_ARGV_TRUNCATED;
	hello->argc = 0;
	hello->argv_len = 0;
	/* exe and host are cut to 1 KiB each so argv keeps most of the room */
	if (exe == NULL)
		exe = "";
	if (host == NULL)
		host = "";
	n = strlen(exe);
	n = n > 1023 ? 1023 : n;
	memcpy(p, exe, n);
	p[n] = '\0';
	hello->exe_len = n + 1;
	p += n + 1;
	room -= n + 1;
	n = strlen(host);
	n = n > 255 ? 255 : n;
	memcpy(p, host, n);
	p[n] = '\0';
	hello->host_len = n + 1;
	p += n + 1;
	room -= n + 1;
	for (i = 0; i < argc && argv && argv[i]; i++) {
		size_t w = put_str(p, room, argv[i]);

		if (w == 0) {
			hello->flags |= CPROF_HELLO_ARGV_TRUNCATED;
			break;
		}
		p += w;
		room -= w;
		hello->argv_len += w;
		hello->argc++;
	}
	n = p - (uint8_t *)frame;
	cprof_wire_hdr_init(h, CPROF_MSG_HELLO, fixed->pid, seq, 1, n);
	return n;
}

int cprof_wire_strings_add(void *frame, size_t *len, uint32_t id, uint16_t kind, const char *s)
{
	struct cprof_wire_hdr *h = frame;
	struct cprof_wire_string *rec;
	size_t n = strlen(s), recsz;

	if (n > CPROF_WIRE_MAX_STRING - 4)
		n = CPROF_WIRE_MAX_STRING - 4; /* very long template names are cut, not lost */
	recsz = (sizeof(*rec) + n + 3) & ~(size_t)3;
	if (*len + recsz > CPROF_WIRE_MAX_FRAME)
		return -ENOSPC;
	rec = (void *)((uint8_t *)frame + *len);
	rec->id = id;
	rec->len = n;
	rec->kind = kind;
	memcpy(rec + 1, s, n);
	memset((uint8_t *)(rec + 1) + n, 0, recsz - sizeof(*rec) - n);
	*len += recsz;
	h->count++;
	h->len = *len;
	return 0;
}

const char *cprof_wire_hello_exe(const struct cprof_wire_hello *h)
{
	return (const char *)h->data;
}

const char *cprof_wire_hello_host(const struct cprof_wire_hello *h)
{
	return (const char *)h->data + h->exe_len;
}

const char *cprof_wire_hello_argv(const struct cprof_wire_hello *h)
{
	return (const char *)h->data + h->exe_len + h->host_len;
}

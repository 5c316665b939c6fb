/* Sorting for the model: a stable radix sort of arrays whose elements begin with a uint64_t key (the arrays by start, sweeps' events by time), by a signed key anywhere in the element or of an index, and a qsort that leaves an array already in order alone. */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "report/model/model.h"

/* Digits of the key less the smallest key, as few passes as digits of at most 13 bits allow (times of a
 * run span ~2^33 ns: three passes; a phase's ~2^26: two), all digits counted in one read of the keys; a
 * pass whose digit is the same in every element is skipped. Elements of 16 bytes or less move themselves;
 * bigger ones are sorted as (key, index) pairs and then permuted in place along their cycles. */
#define MAX_DIGIT 13

static inline uint64_t key_at(const char *a, size_t elem, size_t i)
{
	uint64_t k;

	memcpy(&k, a + i * elem, sizeof(k));
	return k;
}

/* LSD passes over elements of size elem in a, with scratch b of the same size; the result ends in a */
static int radix_direct(char *a, size_t n, size_t elem, uint64_t min, uint64_t span)
{
	int bits = span ? 64 - __builtin_clzll(span) : 0, passes = (bits + MAX_DIGIT - 1) / MAX_DIGIT, digit, p;
	size_t *count, i, nb;
	char *b, *src = a, *dst;
	uint64_t mask;

	if (passes == 0)
		return 0;
	digit = (bits + passes - 1) / passes;
	nb = (size_t)1 << digit;
	mask = nb - 1;
	count = calloc((size_t)passes * nb, sizeof(*count));
	b = malloc(n * elem);
	if (count == NULL || b == NULL) {
		free(count);
		free(b);
		return -ENOMEM;
	}
	dst = b;
	for (i = 0; i < n; i++) {
		uint64_t k = key_at(a, elem, i) - min;

		for (p = 0; p < passes; p++)
			count[(size_t)p * nb + ((k >> (p * digit)) & mask)]++;
	}
	for (p = 0; p < passes; p++) {
		size_t *c = count + (size_t)p * nb, sum = 0;
		int shift = p * digit;

		for (i = 0; i < nb; i++) {
			size_t x = c[i];

			if (x == n)
				break; /* one digit for all: this pass keeps the order */
			c[i] = sum;
			sum += x;
		}
		if (i < nb)
			continue;
		/* constant sizes let the compiler move the common elements without a call each */
		if (elem == 16) {
			for (i = 0; i < n; i++) {
				size_t d = ((key_at(src, 16, i) - min) >> shift) & mask;

				memcpy(dst + c[d]++ * 16, src + i * 16, 16);
			}
		} else if (elem == 8) {
			for (i = 0; i < n; i++) {
				size_t d = ((key_at(src, 8, i) - min) >> shift) & mask;

				memcpy(dst + c[d]++ * 8, src + i * 8, 8);
			}
		} else {
			for (i = 0; i < n; i++) {
				size_t d = ((key_at(src, elem, i) - min) >> shift) & mask;

				memcpy(dst + c[d]++ * elem, src + i * elem, elem);
			}
		}
		{
			char *t = src;

			src = dst;
			dst = t;
		}
	}
	if (src != a)
		memcpy(a, src, n * elem);
	free(count);
	free(b);
	return 0;
}

struct kv {
	uint64_t key;
	uint64_t idx;
};

int cprof_radix_sort(void *arr, size_t n, size_t elem)
{
	char *a = arr, tmp[256];
	uint64_t min, max;
	struct kv *kv;
	size_t i;
	int ret;

	if (n < 2)
		return 0;
	min = max = key_at(a, elem, 0);
	for (i = 1; i < n; i++) {
		uint64_t k = key_at(a, elem, i);

		min = k < min ? k : min;
		max = k > max ? k : max;
	}
	if (elem <= sizeof(struct kv))
		return radix_direct(a, n, elem, min, max - min);
	if (elem > sizeof(tmp) || (kv = malloc(n * sizeof(*kv))) == NULL)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		kv[i] = (struct kv){ key_at(a, elem, i), i };
	if ((ret = radix_direct((char *)kv, n, sizeof(*kv), min, max - min)) < 0) {
		free(kv);
		return ret;
	}
	/* position j gets the element that was at kv[j].idx */
	for (i = 0; i < n; i++) {
		size_t j = i;

		if (kv[i].idx == i)
			continue;
		memcpy(tmp, a + i * elem, elem);
		for (;;) {
			size_t k = kv[j].idx;

			kv[j].idx = j;
			if (k == i) {
				memcpy(a + j * elem, tmp, elem);
				break;
			}
			memcpy(a + j * elem, a + k * elem, elem);
			j = k;
		}
	}
	free(kv);
	return 0;
}

/* signed to unsigned, order kept */
static uint64_t biased(int64_t v)
{
	return (uint64_t)v ^ ((uint64_t)1 << 63);
}

int cprof_radix_sort_keyed(struct cprof_keyed *kd, size_t n)
{
	struct kv *t;
	size_t i;
	int ret;

	if (n < 2)
		return 0;
	if ((t = malloc(n * sizeof(*t))) == NULL)
		return -ENOMEM;
	/* by duration, then (stable) by key: (key, duration) order */
	for (i = 0; i < n; i++)
		t[i] = (struct kv){ biased(kd[i].d), biased(kd[i].key) };
	if ((ret = cprof_radix_sort(t, n, sizeof(*t))) == 0) {
		for (i = 0; i < n; i++)
			t[i] = (struct kv){ t[i].idx, t[i].key };
		ret = cprof_radix_sort(t, n, sizeof(*t));
	}
	if (ret == 0)
		for (i = 0; i < n; i++)
			kd[i] = (struct cprof_keyed){ (int64_t)(t[i].key ^ ((uint64_t)1 << 63)),
						      (int64_t)(t[i].idx ^ ((uint64_t)1 << 63)) };
	free(t);
	return ret;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int cprof_radix_sort_doubles(double *d, size_t n)
{
	size_t i;

	/* a non-negative double's bits sort as the number does (durations); anything else by comparison */
	for (i = 0; i < n; i++)
		if (!(d[i] >= 0) || signbit(d[i]))
			break;
	if (i < n) {
		qsort(d, n, sizeof(*d), cmp_double);
		return 0;
	}
	_Static_assert(sizeof(double) == sizeof(uint64_t), "a double is 64 bits");
	return cprof_radix_sort(d, n, sizeof(*d));
}

/* the k-th smallest of n keys, by their digits from the top: each pass counts the digit of the keys that share
 * the digits found so far, and keeps the one bucket the k-th falls in; nothing is moved */
static inline uint64_t bits_of(const double *d, size_t i)
{
	uint64_t u;

	memcpy(&u, &d[i], sizeof(u));
	return u;
}

static uint64_t select_bits(const double *d, size_t n, size_t k, uint64_t min, uint64_t span)
{
	size_t count[1 << 11], i, b;
	uint64_t prefix = 0;
	int shift = span ? 64 - __builtin_clzll(span) : 0;

	while (shift > 0) {
		int digit = shift < 11 ? shift : 11, above = shift;

		shift -= digit;
		memset(count, 0, sizeof(count[0]) << digit);
		for (i = 0; i < n; i++) {
			uint64_t v = bits_of(d, i) - min;

			/* above == 64 only on the first pass, when every key has the empty prefix */
			if (above == 64 || (v >> above) == prefix)
				count[(v >> shift) & (((uint64_t)1 << digit) - 1)]++;
		}
		for (b = 0; k >= count[b]; b++)
			k -= count[b];
		prefix = (prefix << digit) | b;
	}
	return min + prefix;
}

int cprof_median_doubles(const double *d, size_t n, double *med)
{
	uint64_t min = UINT64_MAX, max = 0, a, b, le = 0;
	size_t i;

	if (n == 0)
		return -EINVAL;
	/* a non-negative double's bits order as the number does (durations); anything else is sorted */
	for (i = 0; i < n; i++) {
		uint64_t u = bits_of(d, i);

		if (!(d[i] >= 0) || signbit(d[i]))
			return -EINVAL;
		min = u < min ? u : min;
		max = u > max ? u : max;
	}
	a = select_bits(d, n, n % 2 ? n / 2 : n / 2 - 1, min, max - min);
	b = a;
	if (n % 2 == 0) {
		/* the next one up: a again when a repeats past the middle, else the least key above it */
		b = UINT64_MAX;
		for (i = 0; i < n; i++) {
			uint64_t u = bits_of(d, i);

			le += u <= a;
			if (u > a && u < b)
				b = u;
		}
		if (le > n / 2 - 1 + 1)
			b = a;
	}
	{
		double x, y;

		memcpy(&x, &a, sizeof(x));
		memcpy(&y, &b, sizeof(y));
		*med = n % 2 ? x : (x + y) / 2;
	}
	return 0;
}

/* signed keys, biased so that unsigned order is theirs, with the element each came from */
static int radix_pairs(struct kv *kv, size_t n)
{
	uint64_t min = UINT64_MAX, max = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		min = kv[i].key < min ? kv[i].key : min;
		max = kv[i].key > max ? kv[i].key : max;
	}
	return radix_direct((char *)kv, n, sizeof(*kv), min, max - min);
}

int cprof_radix_sort_at(void *arr, size_t n, size_t elem, size_t off)
{
	char *a = arr, *b;
	struct kv *kv;
	size_t i;
	int ret;

	if (n < 2)
		return 0;
	if ((kv = malloc(n * sizeof(*kv))) == NULL)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		int64_t k;

		memcpy(&k, a + i * elem + off, sizeof(k));
		kv[i] = (struct kv){ biased(k), i };
	}
	if ((ret = radix_pairs(kv, n)) < 0 || (b = malloc(n * elem)) == NULL) {
		free(kv);
		return ret < 0 ? ret : -ENOMEM;
	}
	for (i = 0; i < n; i++)
		memcpy(b + i * elem, a + kv[i].idx * elem, elem);
	memcpy(a, b, n * elem);
	free(b);
	free(kv);
	return 0;
}

int cprof_radix_sort_ix(uint32_t *ix, size_t n, int64_t (*key)(const void *ctx, uint32_t i), const void *ctx)
{
	struct kv *kv;
	size_t i;
	int ret;

	if (n < 2)
		return 0;
	if ((kv = malloc(n * sizeof(*kv))) == NULL)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		kv[i] = (struct kv){ biased(key(ctx, ix[i])), ix[i] };
	if ((ret = radix_pairs(kv, n)) == 0)
		for (i = 0; i < n; i++)
			ix[i] = (uint32_t)kv[i].idx;
	free(kv);
	return ret;
}

int cprof_radix_sort_ix_by(uint32_t *ix, size_t n, const void *arr, size_t elem,
			   int64_t (*major)(const void *ctx, uint32_t i), int64_t (*minor)(const void *ctx, uint32_t i),
			   const void *ctx)
{
	const char *a = arr;
	size_t i;
	int ret;

	/* ascending indices into an array by start are in (start, index) order already: the comparators' last
	 * two keys then need no pass of their own */
	for (i = 1; i < n; i++)
		if (ix[i - 1] >= ix[i] || key_at(a, elem, ix[i - 1]) > key_at(a, elem, ix[i]))
			return -EINVAL;
	if ((minor && (ret = cprof_radix_sort_ix(ix, n, minor, ctx)) < 0) ||
	    (ret = cprof_radix_sort_ix(ix, n, major, ctx)) < 0)
		return ret;
	return 0;
}

void cprof_sort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
	const char *a = base;
	size_t i;

	for (i = 1; i < n; i++)
		if (cmp(a + (i - 1) * size, a + i * size) > 0)
			break;
	if (i < n)
		qsort(base, n, size, cmp);
}

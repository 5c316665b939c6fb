/* Lower bounds searched from where the last look-ups ended (cprof_lower_pk, cprof_calls_corr_lower): the model's
 * correlation ids are looked up in time order, where each thread's ids grow, threads interleaved. */
#ifndef CPROF_REPORT_GALLOP_H
#define CPROF_REPORT_GALLOP_H

#include <stddef.h>
#include <stdint.h>

/* one place per thread of look-ups that interleave (the preload numbers each thread's ids apart, so one place
 * alone jumped between them: a longer search than a plain binary one); a zeroed one is ready */
#define CPROF_HINTS 4
struct cprof_hint {
	size_t at[CPROF_HINTS];
	uint32_t used[CPROF_HINTS];
	uint32_t clock;
};

/* The first i in [0, n) with !below(ctx, i) (below: true then false along the array), as a binary search
 * finds it: galloped from the nearest hint at or before it, then halved. An answer far from that hint (another
 * thread's ids) takes the place used longest ago. */
static inline size_t cprof_gallop(size_t n, struct cprof_hint *h, int (*below)(const void *ctx, size_t i),
				  const void *ctx)
{
	size_t lo, hi, step = 1, from, dist;
	int j, best = -1, lowest = 0, slot;

	for (j = 0; j < CPROF_HINTS; j++) {
		size_t p = h->at[j] < n ? h->at[j] : n;

		h->at[j] = p;
		if ((p == 0 || below(ctx, p - 1)) && (best < 0 || p > h->at[best]))
			best = j;
		if (p < h->at[lowest])
			lowest = j;
	}
	if (best < 0)
		best = lowest;
	from = h->at[best];
	if (from < n && below(ctx, from)) {
		lo = from + 1;
		while (lo + step - 1 < n && below(ctx, lo + step - 1)) {
			lo += step;
			step <<= 1;
		}
		hi = lo + step - 1 < n ? lo + step - 1 : n;
	} else {
		hi = from;
		while (hi >= step && !below(ctx, hi - step)) {
			hi -= step;
			step <<= 1;
		}
		lo = hi >= step ? hi - step + 1 : 0;
	}
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (below(ctx, mid))
			lo = mid + 1;
		else
			hi = mid;
	}
	dist = lo > from ? lo - from : from - lo;
	slot = best;
	if (dist > 64)
		for (j = 0, slot = 0; j < CPROF_HINTS; j++)
			if (h->used[j] < h->used[slot])
				slot = j;
	h->at[slot] = lo;
	h->used[slot] = ++h->clock;
	return lo;
}

#endif

/* SPDX-License-Identifier: MIT */
/*
 * The highest value per time slot, in one pass and fixed memory, for a
 * span not known in advance: CG_SERIES_SLOTS slots of 2^shift ns from a
 * base time; a time past the last slot merges neighbours pairwise (the
 * maximum of a merged slot is the larger of the two), so the slots always
 * cover everything seen, at between half and all of their resolution.
 */
#ifndef CG_PEAK_SERIES_H
#define CG_PEAK_SERIES_H

#include <stdbool.h>
#include <stdint.h>

#define CG_SERIES_SLOTS 256u

struct cg_peak_series {
	uint64_t base; /* the time of the first value */
	uint64_t max[CG_SERIES_SLOTS];
	uint32_t shift;
	uint32_t last;  /* the slot of the last value */
	uint64_t value; /* the last value, carried into the slots after it */
	bool any;
};

/* Called for a slot past the last: carries the last value through, merges as needed. */
void cg_series_move(struct cg_peak_series *s, uint64_t t);

/* The value after an event at t (never before the last one's). */
static inline void cg_series_add(struct cg_peak_series *s, uint64_t t, uint64_t value)
{
	if (!s->any || t < s->base || ((t - s->base) >> s->shift) != s->last)
		cg_series_move(s, t);
	if (value > s->max[s->last])
		s->max[s->last] = value;
	s->value = value;
}

/*
 * Reduces the slots to n cells over [base, end] (end: the last time of the
 * trace, so that every series of one trace shares the cells), each the
 * highest of the slots it covers; a slot without events holds the value
 * carried into it.
 */
void cg_series_cells(const struct cg_peak_series *s, uint64_t base, uint64_t end, uint64_t *out,
		     unsigned n);

#endif

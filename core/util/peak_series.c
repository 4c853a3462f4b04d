/* SPDX-License-Identifier: MIT */
#include "peak_series.h"

#include <string.h>

/* Halves the resolution: slot i takes slots 2i and 2i+1. */
static void halve(struct cg_peak_series *s)
{
	for (unsigned i = 0; i < CG_SERIES_SLOTS / 2; i++) {
		uint64_t a = s->max[2 * i], b = s->max[2 * i + 1];
		s->max[i] = a > b ? a : b;
	}
	memset(s->max + CG_SERIES_SLOTS / 2, 0, sizeof(s->max) / 2);
	s->shift++;
	s->last /= 2;
}

void cg_series_move(struct cg_peak_series *s, uint64_t t)
{
	if (!s->any) {
		memset(s, 0, sizeof(*s));
		s->base = t;
		s->any = true;
		return;
	}
	/* Times come in order; an earlier one (a caller's bug) counts in the last slot. */
	if (t < s->base)
		return;
	uint64_t k;
	while ((k = (t - s->base) >> s->shift) >= CG_SERIES_SLOTS)
		halve(s);
	/* The slots up to the new one held the last value until then. */
	for (uint64_t i = s->last + 1; i <= k; i++)
		if (s->value > s->max[i])
			s->max[i] = s->value;
	if (k > s->last)
		s->last = (uint32_t)k;
}

void cg_series_cells(const struct cg_peak_series *s, uint64_t base, uint64_t end, uint64_t *out,
		     unsigned n)
{
	memset(out, 0, n * sizeof(*out));
	if (!s->any || !n)
		return;
	double span = (double)(end > base ? end - base : 0) + 1;
	double width = (double)((uint64_t)1 << s->shift);
	for (unsigned c = 0; c < n; c++) {
		/* The cell's times, and the slots they fall in. */
		double t0 = (double)base + span * c / n, t1 = (double)base + span * (c + 1) / n;
		if (t1 <= (double)s->base)
			continue; /* before the series' first value: nothing was live */
		double a = (t0 - (double)s->base) / width, b = (t1 - (double)s->base) / width;
		uint64_t i0 = a < 0 ? 0 : (uint64_t)a, i1 = (uint64_t)b;
		/* The cell ends where slot i1 begins: that slot is the next cell's. */
		if ((double)i1 == b && i1 > i0)
			i1--;
		uint64_t v = 0;
		if (i0 > s->last)
			v = s->value;
		for (uint64_t i = i0; i <= i1 && i <= s->last; i++)
			v = s->max[i] > v ? s->max[i] : v;
		if (i1 > s->last && s->value > v)
			v = s->value;
		out[c] = v;
	}
}

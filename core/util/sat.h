/* SPDX-License-Identifier: MIT */
/* Saturating u64 arithmetic: sums of sizes and durations stop at 2^64 - 1, never wrap. */
#ifndef CG_SAT_H
#define CG_SAT_H

#include <stdint.h>

static inline uint64_t cg_sat_add(uint64_t a, uint64_t b)
{
	return a + b < a ? UINT64_MAX : a + b;
}

static inline uint64_t cg_sat_sub(uint64_t a, uint64_t b)
{
	return a > b ? a - b : 0;
}

#endif

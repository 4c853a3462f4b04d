/* SPDX-License-Identifier: MIT */
/*
 * The one deterministic PRNG of the tests and benchmarks (Marsaglia's
 * xorshift64): the same seed gives the same workload on every machine, so
 * a failure or a timing can be run again. Header-only, as bench/ includes
 * it too (bench/meson.build adds tests/lib to its include path).
 */
#ifndef CG_TEST_XORSHIFT_H
#define CG_TEST_XORSHIFT_H

#include <stdint.h>

/* The seed the programs start from (any non-zero value would do). */
#define XORSHIFT_SEED 0x9e3779b97f4a7c15ull

/* The next value of *state, which must not be 0. */
static inline uint64_t xorshift64(uint64_t *state)
{
	uint64_t x = *state;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return *state = x;
}

#endif

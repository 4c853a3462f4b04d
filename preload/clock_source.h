/* SPDX-License-Identifier: MIT */
/*
 * Whether the hooks may stamp events with the CPU's time-stamp counter:
 * only where the kernel's own clock is the TSC, read the same way on
 * every CPU (clock_source.c). Once per process image, at its first
 * session's start.
 */
#ifndef CG_CLOCK_SOURCE_H
#define CG_CLOCK_SOURCE_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

bool cg_clock_source_tsc(void);

/* A clock_gettime clock in nanoseconds. */
static inline uint64_t cg_clock_ns(clockid_t id)
{
	struct timespec t;
	clock_gettime(id, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* CLOCK_MONOTONIC: the clock the TSC is checked against, and the fallback stamp. */
static inline uint64_t cg_clock_mono_ns(void)
{
	return cg_clock_ns(CLOCK_MONOTONIC);
}

/* Another clock's value paired with the CLOCK_MONOTONIC time it was read at. */
struct cg_clock_pair {
	uint64_t value;
	uint64_t mono_ns; /* the midpoint of two CLOCK_MONOTONIC reads around the value's */
	uint64_t width_ns; /* their distance: the pairing is good to half of it */
};

/*
 * The tightest bracket of `tries`: one try's reads take a few tens of ns,
 * but a thread preempted between them widens its bracket by milliseconds.
 * Pairing with the midpoint keeps a quiet try unbiased, where pairing with
 * either read would be late or early by a whole clock read.
 */
static inline struct cg_clock_pair cg_clock_pair_read(uint64_t (*read)(void), int tries)
{
	struct cg_clock_pair best = {0, 0, UINT64_MAX};
	for (int i = 0; i < tries; i++) {
		uint64_t a = cg_clock_mono_ns(), v = read(), b = cg_clock_mono_ns();
		if (b - a < best.width_ns)
			best = (struct cg_clock_pair){v, a + (b - a) / 2, b - a};
	}
	return best;
}

#endif

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

/* CLOCK_MONOTONIC in nanoseconds: the clock the TSC is checked against, and the fallback stamp. */
static inline uint64_t cg_clock_mono_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

#endif

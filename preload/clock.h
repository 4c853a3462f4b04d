/* SPDX-License-Identifier: MIT */
/* One monotonic clock for all threads, relative to the session's start. */
#ifndef CG_CLOCK_H
#define CG_CLOCK_H

#include <stdint.h>
#include <time.h>

extern uint64_t cg_clock_origin;

static inline uint64_t cg_clock_raw(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* Nanoseconds since the session started. */
static inline uint64_t cg_clock_now(void)
{
	uint64_t t = cg_clock_raw();
	return t > cg_clock_origin ? t - cg_clock_origin : 0;
}

#endif

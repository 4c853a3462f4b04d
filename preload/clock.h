/* SPDX-License-Identifier: MIT */
/*
 * One clock for all threads, relative to the session's start. Hooks stamp
 * events with raw ticks: the TSC where the kernel's own clock is the TSC
 * on every CPU (clock_source.c; under kvm-clock half of clock_gettime's
 * cost), else CLOCK_MONOTONIC nanoseconds. The writer turns ticks into
 * nanoseconds against anchors (ticks, ns) it takes at each drain, so no
 * calibration delays start-up.
 */
#ifndef CG_CLOCK_H
#define CG_CLOCK_H

#include <stdbool.h>
#include <stdint.h>
#if defined(__x86_64__)
#include <x86intrin.h>
#endif

#include "clock_source.h"

extern uint64_t cg_clock_origin;
extern bool cg_clock_tsc;

static inline uint64_t cg_clock_raw(void)
{
	return cg_clock_mono_ns();
}

/* Nanoseconds since the session started. */
static inline uint64_t cg_clock_now(void)
{
	uint64_t t = cg_clock_raw();
	return t > cg_clock_origin ? t - cg_clock_origin : 0;
}

/*
 * An event's stamp. Before a real call (a free): stores retire in order,
 * so nothing the free publishes is visible before the counter was read,
 * and a plain rdtsc is enough. After a real call (an allocation): the
 * fence makes every earlier load complete first, so the stamp follows
 * whatever free handed this address over.
 */
static inline uint64_t cg_clock_ticks_before(void)
{
#if defined(__x86_64__)
	if (cg_clock_tsc)
		return __rdtsc();
#endif
	return cg_clock_now();
}

static inline uint64_t cg_clock_ticks(void)
{
#if defined(__x86_64__)
	if (cg_clock_tsc) {
		_mm_lfence();
		return __rdtsc();
	}
#endif
	return cg_clock_now();
}

/* Chooses the tick source and sets the origin; at each session start. */
void cg_clock_start(void);

/* Writer side: a new anchor pair, then conversions of ticks up to it. */
struct cg_clock_map {
	uint64_t t0, n0; /* previous anchor */
	uint64_t t1, n1; /* latest anchor */
	uint64_t mult;   /* ns per tick, 32.32 fixed point */
	bool measured;   /* mult comes from two anchors, not a guess */
};

void cg_clock_map_start(struct cg_clock_map *m);
void cg_clock_map_anchor(struct cg_clock_map *m);
/* Inline: the writer converts every event's stamp. */
static inline uint64_t cg_clock_map_ns(const struct cg_clock_map *m, uint64_t ticks)
{
	if (!cg_clock_tsc)
		return ticks;
	if (ticks >= m->t1)
		return m->n1 + (uint64_t)(((unsigned __int128)(ticks - m->t1) * m->mult) >> 32);
	uint64_t back = (uint64_t)(((unsigned __int128)(m->t1 - ticks) * m->mult) >> 32);
	return back < m->n1 ? m->n1 - back : 0;
}

#endif

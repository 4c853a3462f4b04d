/* SPDX-License-Identifier: MIT */
/*
 * A thread's events into its ring (ring.h): the stamps every event takes
 * and the push, inline as they run on every allocation. What the hooks
 * (hooks.h, device.h, spans.h, stack.h, modules.h) have in common; the
 * ring is mapped on the thread's first event.
 */
#ifndef CG_PUSH_H
#define CG_PUSH_H

#include <stdbool.h>
#include <stdint.h>

#include "clock.h"
#include "event.h"
#include "ring.h"
#include "thread.h"

/* Strictly increasing per thread, from the one monotonic clock. */
static inline uint64_t cg_push_ticks(uint64_t t)
{
	if (t <= cg_self.last_ts)
		t = cg_self.last_ts + 1;
	cg_self.last_ts = t;
	return t;
}

/* A stamp taken after the real call returned (allocations, spans), or before it (frees). */
static inline uint64_t cg_stamp(bool before)
{
	return cg_push_ticks(before ? cg_clock_ticks_before() : cg_clock_ticks());
}

/* A full ring waits for room while the session records. */
bool cg_push_keep_waiting(void);
/* A thread's first event maps its ring; false when none can be. */
bool cg_push_claim(void);

/*
 * Pushes a ready event (ts stamped, span and category filled) to the
 * thread's ring, with the slot of its stack (stack.h, event.h; 0 none).
 */
static inline void cg_push(const struct cg_event *e, uint32_t stack)
{
	if (__builtin_expect(!cg_self.ring, 0) && !cg_push_claim())
		return;
	cg_ring_push(cg_self.ring, e, stack, cg_push_keep_waiting);
}

/* n slots at once (ring.h: cg_ring_push_n); false when nothing was pushed. */
bool cg_push_n(const struct cg_event *ev, unsigned n);
/* The calling thread's ring, mapped on first use; NULL when none can be. */
struct cg_ring *cg_push_ring(void);

#endif

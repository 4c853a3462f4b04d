/* SPDX-License-Identifier: MIT */
#include "inherit.h"

#include <stdatomic.h>

#include "live.h"
#include "ring.h"

static void apply(const struct cg_event *e)
{
	struct cg_live v;
	switch (e->kind & CG_EV_KIND_MASK) {
	case CG_EV_ALLOC:
		cg_live_insert(e->addr, &(struct cg_live){e->size, e->category, CG_PROBE_HOST,
							  UINT64_MAX});
		break;
	case CG_EV_DEV_ALLOC:
		cg_live_insert(cg_live_key(e),
			       &(struct cg_live){e->size, e->category, e->step, UINT64_MAX});
		break;
	case CG_EV_FREE:
	case CG_EV_DEV_FREE:
		cg_live_remove(cg_live_key(e), &v);
		break;
	default:
		/*
		 * Not freed: the parent's writer may have handled this one
		 * already, and freed what it carries; the child leaks it.
		 */
		break;
	}
}

/* The ring whose next pending event is the earliest, and the stamp of the next-earliest. */
static struct cg_ring *earliest(uint64_t *next_ts)
{
	struct cg_ring *best = NULL;
	uint64_t best_ts = UINT64_MAX;
	*next_ts = UINT64_MAX;
	for (struct cg_ring *r = cg_rings_first(); r; r = r->next) {
		uint64_t tail = atomic_load_explicit(&r->tail, memory_order_relaxed);
		if (tail == atomic_load_explicit(&r->head, memory_order_relaxed))
			continue;
		uint64_t ts = r->ev[tail % CG_RING_EVENTS].ts;
		if (ts < best_ts) {
			*next_ts = best_ts;
			best_ts = ts;
			best = r;
		} else if (ts < *next_ts) {
			*next_ts = ts;
		}
	}
	return best;
}

void cg_inherit_pending(void)
{
	/* Runs of one ring up to the next ring's head of line, as the writer's drain takes them. */
	uint64_t next_ts;
	for (struct cg_ring *r; (r = earliest(&next_ts));) {
		uint64_t tail = atomic_load_explicit(&r->tail, memory_order_relaxed);
		uint64_t head = atomic_load_explicit(&r->head, memory_order_relaxed);
		do {
			const struct cg_event *e = &r->ev[tail % CG_RING_EVENTS];
			apply(e);
			tail += cg_event_slots(e);
		} while (tail < head && r->ev[tail % CG_RING_EVENTS].ts <= next_ts);
		atomic_store_explicit(&r->tail, tail, memory_order_relaxed);
	}
}

/* SPDX-License-Identifier: MIT */
/*
 * Per-thread probe state in initial-exec TLS: no allocation and no lock to
 * reach it, which matters inside malloc. The guard keeps the probe's own
 * work (and anything a hook calls) out of the trace and makes re-entry
 * from a signal handler a plain pass-through.
 */
#ifndef CG_THREAD_H
#define CG_THREAD_H

#include <stdbool.h>
#include <stdint.h>

#define CG_MAX_SPAN_DEPTH 64

struct cg_ring;

struct cg_thread {
	int guard;
	int nest; /* inside wrapped device API calls (probe.h: cg_probe_nest_*) */
	struct cg_ring *ring;
	uint64_t last_ts;
	int depth; /* open annotation spans; past CG_MAX_SPAN_DEPTH they are not tracked */
	uint32_t span[CG_MAX_SPAN_DEPTH];
	uint8_t step[CG_MAX_SPAN_DEPTH];
	uint64_t start[CG_MAX_SPAN_DEPTH];
	/* The thread's name for the trace ("" until known) and whether a span_start carried it. */
	char name[64];
	bool name_sent;
	/* The writer is held for this thread's fork (session.c), by this ticket. */
	bool fork_held;
	uint32_t fork_ticket;
};

extern __thread struct cg_thread cg_self __attribute__((tls_model("initial-exec")));

/* Innermost span of the calling thread, 1 (the root) when none. */
static inline uint32_t cg_thread_span(void)
{
	int d = cg_self.depth;
	if (d > CG_MAX_SPAN_DEPTH)
		d = CG_MAX_SPAN_DEPTH;
	return d > 0 ? cg_self.span[d - 1] : 1;
}

#endif

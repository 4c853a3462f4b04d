/* SPDX-License-Identifier: MIT */
/*
 * Memory per training update (cgtrace.h, struct cgtrace_steps;
 * docs/steps.md), built as the memory analysis applies records and span
 * events: rows opened and closed as the clock (update_clock.h) says,
 * each device's figures kept per row. Marked and inferred updates are
 * both built until the first mark, which settles it.
 *
 * Time in no phase (a gap) is held apart until it ends: given to the
 * update (and its no-phase row) when a phase or the next update follows,
 * left out when the trace ends in it, so the last inferred update ends
 * when its phases last closed.
 */
#ifndef CG_STEPS_H
#define CG_STEPS_H

#include <stdint.h>

#include "cgtrace.h"
#include "memory_stream.h"

struct cg_steps;

/*
 * The steps handed out, with what freeing them needs: their big arrays
 * come from growable vectors (bigmem.h) and go back by their capacities.
 */
struct cg_steps_owned {
	struct cgtrace_steps pub;
	size_t rows_cap;
	size_t *figs_cap; /* by device, as pub.figures */
};

int cg_steps_new(const struct cgtrace_steps_options *o, struct cg_steps **out);
/* A memory record applied (a stream hook's, or a replay's). 0 or -ENOMEM. */
int cg_steps_record(struct cg_steps *b, const struct cg_stream_seen *x);
/* A span event s applied (the stream hook's). 0 or -ENOMEM. */
int cg_steps_span(struct cg_steps *b, const struct cg_stream *s, const struct cg_span_ev *ev,
		  int changed);
/*
 * After the analysis finished (s: its clock, its live entries for
 * growth, its document's names): the steps, the builder spent. trace_end:
 * the trace's last time, where open rows end.
 */
int cg_steps_finish(struct cg_steps *b, const struct cg_stream *s, uint64_t trace_end,
		    struct cgtrace_steps **out);
void cg_steps_free(struct cg_steps *b);

/* Hooks for a read that builds steps alone; user: the builder. */
extern const struct cg_stream_hooks cg_steps_hooks;

#endif

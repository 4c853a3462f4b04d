/* SPDX-License-Identifier: MIT */
/*
 * Where each moment of a trace falls in training (docs/steps.md), said
 * once for every command: fed the span events in time order, it knows the
 * update open now and the phase now, and says what each event changed.
 *
 * Updates come from marks: a span with cgprobe_update opens update N and
 * its end ends it; a mark while one is open ends that one first, as the
 * probe counts them. Without marks they are inferred: an update runs from
 * the start of one forward step (none other open) to the start of the
 * next; the last one ends when its phases last all closed. Both are kept
 * while a trace is read, since marks may come late; readers prefer marks
 * once any was seen. The phase now is the innermost phase open on any
 * thread: the one opened last among those still open.
 */
#ifndef CG_UPDATE_CLOCK_H
#define CG_UPDATE_CLOCK_H

#include <stdbool.h>
#include <stdint.h>

#include "span_events.h"
#include "vec.h"

/* What an event changed (cg_uclock_apply's bits). */
enum {
	CG_UC_MARKED = 1,   /* the marked update ended, or began, or both */
	CG_UC_INFERRED = 2, /* an inferred update ended and the next began */
	CG_UC_PHASE = 4,    /* the phase now changed */
	CG_UC_QUIET = 8,    /* every phase closed: the inferred update may end here */
};

struct cg_uclock {
	/* The marked update open now: its span, number, start; 0: none. */
	uint32_t m_span;
	uint64_t m_update, m_start;
	uint64_t m_last;  /* the last marked update begun; 0: none yet */
	uint64_t m_count; /* marked updates begun */
	bool marked;     /* a mark was seen: marks decide */
	/*
	 * Inferred: the forward steps open, the update open now (0: none yet),
	 * numbered from i_base + 1: a trace of one captured update N (meta's
	 * capture_step) has update N, as its marks would say.
	 */
	struct cg_vec forwards; /* uint32_t span ids */
	uint64_t i_base, i_count;
	uint64_t i_update, i_start;
	uint64_t i_quiet; /* when its phases last all closed */
	bool i_quiet_set;
	/* The phases open, in start order: { span id, phase } pairs of uint32_t. */
	struct cg_vec phases;
	uint64_t last_ts; /* the last event's time */
};

/* The event applied: CG_UC_* bits, or -ENOMEM. */
int cg_uclock_apply(struct cg_uclock *c, const struct cg_span_ev *ev);
void cg_uclock_free(struct cg_uclock *c);

static inline uint32_t cg_uclock_phase(const struct cg_uclock *c)
{
	return c->phases.len ? ((const uint32_t *)c->phases.p)[2 * c->phases.len - 1] : 0;
}

/*
 * A moment as the clock saw it: the marked update open (0: none), the
 * last marked one begun, the inferred one open, the phase. Which updates
 * count is decided at the end (cg_moment_resolve).
 */
struct cg_moment_raw {
	uint64_t ts, m_update, m_last, i_update;
	uint32_t phase;
};

static inline struct cg_moment_raw cg_uclock_now(const struct cg_uclock *c, uint64_t ts)
{
	return (struct cg_moment_raw){ts, c->m_update, c->m_last, c->i_update,
				      cg_uclock_phase(c)};
}

/*
 * The update a moment falls in once the trace is read: marked ones when
 * any was seen, else inferred, the last of which ended at its last quiet
 * moment (trace_end: when none came). *after gets the last update begun
 * when the moment is in none (0: before the first).
 */
uint64_t cg_moment_update(const struct cg_uclock *c, const struct cg_moment_raw *m,
			  uint64_t *after);
/* The updates the trace has: the marked ones begun, else the inferred ones. */
static inline uint64_t cg_uclock_count(const struct cg_uclock *c)
{
	return c->marked ? c->m_count : c->i_count;
}
/* When the last inferred update ended: its last quiet moment, else the trace's end. */
uint64_t cg_uclock_inferred_end(const struct cg_uclock *c, uint64_t trace_end);

#endif

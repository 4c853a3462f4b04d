/* SPDX-License-Identifier: MIT */
/*
 * Growth (docs/steps.md): allocations made in one update after warm-up
 * (or after it, before the next began) and still live at the end of
 * every later update. Frees that might
 * count are kept while a trace is read: those of allocations made before
 * the latest update began, dropped again when an update ends, since what
 * an update outlived no longer counts once a later one ends without it.
 * At the end, those freed after the last update ended and the
 * allocations still live are placed in their updates and summed.
 */
#ifndef CG_STEPS_GROWTH_H
#define CG_STEPS_GROWTH_H

#include <stdbool.h>
#include <stdint.h>

#include "cgtrace.h"
#include "memory_stream.h"
#include "vec.h"

struct cg_growth {
	struct cg_vec cand; /* struct cg_growth_cand */
	uint64_t since;     /* allocations before this time may count (the latest update's start) */
	bool any;           /* an update began */
};

/* An update began at ts. */
static inline void cg_growth_update(struct cg_growth *g, uint64_t ts)
{
	g->since = ts;
	g->any = true;
}
/* An update ended: frees so far come before its end. */
static inline void cg_growth_clear(struct cg_growth *g)
{
	g->cand.len = 0;
}
/* A memory record applied; 0 or -ENOMEM. */
int cg_growth_record(struct cg_growth *g, const struct cg_stream_seen *x);

/* The update rows the growth is placed in: time order, their numbers, the warm-up. */
struct cg_growth_rows {
	const struct cgtrace_step_row *rows;
	const uint32_t *update_rows; /* the indices of the update rows in rows, in order */
	size_t n;
	uint64_t warmup;
	const char *const *dev_names; /* by device number */
};

/* The growth summed into out->growth; 0 or -ENOMEM. The candidates go. */
int cg_growth_finish(struct cg_growth *g, const struct cg_stream *s, const struct cg_growth_rows *r,
		     struct cgtrace_steps *out);
void cg_growth_fini(struct cg_growth *g);

#endif

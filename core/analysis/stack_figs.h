/* SPDX-License-Identifier: MIT */
/*
 * Per (stack, device) figures, counted as the memory analysis applies
 * records: allocations, their bytes, temporaries. What was live at a peak
 * and at the end is read off the analysis's entries, which carry their
 * figure's index (sites.c).
 */
#ifndef CG_STACK_FIGS_H
#define CG_STACK_FIGS_H

#include <stdint.h>

#include "u64map.h"
#include "vec.h"

struct cg_stack_fig {
	uint64_t id; /* the stack id; 0: allocations without one */
	uint64_t count, total, temporary;
	uint32_t next; /* index + 1 of the same stack's figure on another device; 0: none */
	uint16_t dev;
};

/*
 * Figures by stack id: writers number stacks 1, 2, 3 ..., so ids index an
 * array (no hash on the way); sparse ids go to a map instead, so that
 * memory stays bounded by the distinct stacks.
 */
struct cg_stack_figs {
	struct cg_vec figs;   /* struct cg_stack_fig */
	struct cg_vec direct; /* uint32_t by id: index + 1 of the id's first figure */
	struct cg_map far;    /* id - 1 -> index of the id's first figure, for ids past direct */
};

/* cg_stack_fig_at past its common case. */
int cg_stack_fig_slow(struct cg_stack_figs *f, uint64_t id, uint16_t dev, uint32_t *out);

/* The index of (id, dev)'s figure, made when new; 0 or -ENOMEM. */
static inline int cg_stack_fig_at(struct cg_stack_figs *f, uint64_t id, uint16_t dev,
				  uint32_t *out)
{
	/* Once per alloc: an id of the array whose first figure is this device's, no call. */
	if (id < f->direct.len) {
		uint32_t k = ((const uint32_t *)f->direct.p)[id];
		if (k && ((const struct cg_stack_fig *)f->figs.p)[k - 1].dev == dev) {
			*out = k - 1;
			return 0;
		}
	}
	return cg_stack_fig_slow(f, id, dev, out);
}
void cg_stack_figs_free(struct cg_stack_figs *f);
/* Drops the index by id, keeping the figures: cg_stack_fig_at must not be called again. */
void cg_stack_figs_unindex(struct cg_stack_figs *f);

#endif

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

/*
 * 32 bytes, a framework's trace has 10^5 to 10^6: the temporaries (2^46
 * at most, fewer than the records of any trace), whether the allocations
 * were live before the recording began (cgprobe_preexisting: a fork
 * child's inherited heap, a capture window's opening one), whether the
 * same stack has a figure on another device or pre-existing (in next, the
 * rare case), and the device share a word.
 */
struct cg_stack_fig {
	uint64_t id; /* the stack id; 0: allocations without one */
	uint64_t count, total;
	uint64_t temp_dev; /* temporaries << 18 | pre-existing << 17 | has a next << 16 | device */
};

#define CG_FIG_HAS_NEXT (1ull << 16)
#define CG_FIG_PRE (1ull << 17)
#define CG_FIG_TEMP_SHIFT 18
/* A figure's key beside its id: its device, and whether its allocations were pre-existing. */
#define CG_FIG_KEY(dev, pre) ((uint32_t)(dev) | ((pre) ? (uint32_t)CG_FIG_PRE : 0u))

static inline uint32_t cg_stack_fig_key(const struct cg_stack_fig *g)
{
	return (uint32_t)(g->temp_dev & (0xffffu | CG_FIG_PRE));
}

static inline uint16_t cg_stack_fig_dev(const struct cg_stack_fig *g)
{
	return (uint16_t)g->temp_dev;
}

static inline uint64_t cg_stack_fig_temporary(const struct cg_stack_fig *g)
{
	return g->temp_dev >> CG_FIG_TEMP_SHIFT;
}

static inline void cg_stack_fig_add_temporary(struct cg_stack_fig *g)
{
	if (g->temp_dev >> CG_FIG_TEMP_SHIFT != UINT64_MAX >> CG_FIG_TEMP_SHIFT)
		g->temp_dev += 1ull << CG_FIG_TEMP_SHIFT;
}

/*
 * Figures by stack id: writers number stacks 1, 2, 3 ..., so ids index an
 * array (no hash on the way); sparse ids go to a map instead, so that
 * memory stays bounded by the distinct stacks.
 */
struct cg_stack_figs {
	struct cg_vec figs;   /* struct cg_stack_fig */
	struct cg_vec direct; /* uint32_t by id: index + 1 of the id's first figure */
	struct cg_map far;    /* id - 1 -> index of the id's first figure, for ids past direct */
	struct cg_map next;   /* a figure with CG_FIG_HAS_NEXT -> the same stack's on another device */
};

/* cg_stack_fig_at past its common case. */
int cg_stack_fig_slow(struct cg_stack_figs *f, uint64_t id, uint32_t key, uint32_t *out);

/* The index of (id, key)'s figure (key: CG_FIG_KEY), made when new; 0 or -ENOMEM. */
static inline int cg_stack_fig_at(struct cg_stack_figs *f, uint64_t id, uint32_t key,
				  uint32_t *out)
{
	/* Once per alloc: an id of the array whose first figure is this key's, no call. */
	if (id < f->direct.len) {
		uint32_t k = ((const uint32_t *)f->direct.p)[id];
		if (k && cg_stack_fig_key(&((const struct cg_stack_fig *)f->figs.p)[k - 1]) == key) {
			*out = k - 1;
			return 0;
		}
	}
	return cg_stack_fig_slow(f, id, key, out);
}
void cg_stack_figs_free(struct cg_stack_figs *f);
/* Drops the index by id, keeping the figures: cg_stack_fig_at must not be called again. */
void cg_stack_figs_unindex(struct cg_stack_figs *f);

#endif

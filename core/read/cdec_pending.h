/* SPDX-License-Identifier: MIT */
/*
 * The compact decoder's STACK and TREE items waiting for the record that
 * takes them (docs/stacks.md). A stack block brings tens of thousands at
 * once, which the records of the next block take one by one, in about the
 * order they came: so they are kept in arrival order, a taken one marked,
 * and found by binary search while the ids arrive ascending (as writers
 * number them), by a scan otherwise; an id outside the pending ones' span
 * is turned away at once, which is what most records' stacks are.
 */
#ifndef CG_CDEC_PENDING_H
#define CG_CDEC_PENDING_H

#include <stdbool.h>
#include <stdint.h>

struct cg_pending_stack {
	uint64_t id;
	const uint64_t *frames;
	uint32_t n;
	bool tree;       /* a TREE item: the frames hang from parent */
	bool taken;
	uint64_t parent; /* 0: from none */
};

struct cg_pending {
	struct cg_pending_stack *v;
	uint32_t n, cap; /* in arrival order, taken ones among them */
	uint32_t head;   /* v[0..head) are all taken */
	uint32_t live;   /* not taken */
	bool unsorted;   /* an id came at or below the one before */
};

uint32_t cg_pending_find(const struct cg_pending *p, uint64_t id);
/* Whether an item for id waits: inline, as most records' stacks meet none waiting. */
static inline bool cg_pending_has(const struct cg_pending *p, uint64_t id)
{
	return p->live && cg_pending_find(p, id) != UINT32_MAX;
}
/* Adds an item (its id not waiting); 0 or -ENOMEM. */
int cg_pending_add(struct cg_pending *p, const struct cg_pending_stack *s);
/* Takes id's item into *out; false (out zeroed) when none waits. */
bool cg_pending_take(struct cg_pending *p, uint64_t id, struct cg_pending_stack *out);
void cg_pending_free(struct cg_pending *p);

#endif

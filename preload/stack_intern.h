/* SPDX-License-Identifier: MIT */
/*
 * The writer's table of call stacks, a tree (docs/stacks.md): a node per
 * (parent node, return address), numbered 1, 2, ... as they are made,
 * outermost frame first, and a node's number is the trace's id of the
 * stack from it out to the root. So a stack whose callers' stacks are
 * known costs a node per frame they do not share, and the same stack sent
 * by several threads is one stack.
 *
 * Stacks arrive as the hooks send them into their slots (stack.h,
 * event.h); a ring's words (ring.h: stack_names) say what each of its
 * slots names now, for the events that follow in that ring. A stack's
 * nodes are made by its first record, which carries their definition:
 * the ids of one definition are consecutive, and any stack defined
 * before is a parent a reader already knows.
 *
 * Writer thread only; the memory is reserved address space, mapped when a
 * trace opens and touched as the tables fill, so nothing is allocated
 * while the writer runs. Caps: CG_INTERN_NODES_MAX nodes a trace (a
 * million stacks of 32 frames sharing none), 8 M distinct stacks, 8 M
 * distinct return addresses, past which a new stack's records carry no
 * stack.
 */
#ifndef CG_STACK_INTERN_H
#define CG_STACK_INTERN_H

#include <stddef.h>
#include <stdint.h>

#define CG_INTERN_NODES_MAX ((1u << 25) - 1)

/* A new trace: the table emptied (reserved the first time). Before the writer starts. */
int cg_intern_reset(void);
/*
 * A CG_EV_STACK: slot (1 to CG_STACK_SLOTS) of the ring whose words are
 * names now names these n frames (innermost first).
 */
void cg_intern_define(uint32_t *names, uint32_t slot, const uint64_t *frames, uint32_t n);

struct cg_stack_use {
	uint64_t id;     /* the trace id, 0 for none */
	uint64_t parent; /* with frames: the stack they hang from, 0 for none */
	/*
	 * The stack's first record only: the frames its definition adds,
	 * innermost first, defining stacks id - n_frames + 1 ... id. Valid
	 * until the next call.
	 */
	const uint64_t *frames;
	uint32_t n_frames;
};
/* The stack a record names through slot of the ring whose words are names (0: none). */
struct cg_stack_use cg_intern_use(uint32_t *names, uint32_t slot);
/*
 * A dlclose unmapped code (CG_EV_UNLOAD): the same addresses may be other
 * code now, so stacks defined from here on share no node with those
 * before, and their first records come after the new modules' (docs/stacks.md,
 * resolving).
 */
void cg_intern_unload(void);
/*
 * The definition the last cg_intern_use gave could not be written: its
 * stacks are never named, nor any stack through them.
 */
void cg_intern_failed(uint64_t id);

/*
 * The frames of stack id (a trace id cg_intern_use gave), innermost first,
 * at most max of them: their count, 0 for none. A node's parent is found
 * by a walk of the links where it is not the node made before it, so this
 * is for a question asked now and then (include/cgprobe.h:
 * cgprobe_memory_site), not per record.
 */
uint32_t cg_intern_frames(uint64_t id, uint64_t *frames, uint32_t max);

struct cg_intern_stats {
	uint64_t nodes;     /* the tree's, that is the stacks defined */
	uint64_t addresses; /* distinct return addresses */
	uint64_t links;     /* nodes whose parent is not the node made before them */
	uint64_t sent;      /* stacks the hooks sent (cg_intern_define) */
	uint64_t resident;  /* bytes of the tables resident now */
};
void cg_intern_stats(struct cg_intern_stats *out);

#endif

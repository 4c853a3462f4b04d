/* SPDX-License-Identifier: MIT */
/*
 * A light document's stack depths (CGTRACE_READ_NO_STACKS), the one thing
 * its rules need of a stack, while the ids come as writers number them:
 * 1, 2, 3, ... with no gap, each definition's right after the one before.
 * A tree definition's ids then run on from its first id's depth by one,
 * so a depth is kept per definition, not per id: a bit per id marks where
 * a definition begins, a count per 64 ids finds its number, and 2 bytes
 * per definition hold its first depth (a hybrid Python stack is often
 * deeper than 255). A framework's 3.7 M ids in 702 k definitions take
 * 2.1 MB, rather than 3.7 MB and a map of the deep ones.
 */
#ifndef CG_STACK_DEPTHS_H
#define CG_STACK_DEPTHS_H

#include <stdbool.h>
#include <stdint.h>

#include "vec.h"

struct cg_stack_depths {
	struct cg_vec starts; /* uint64_t words: bit id set where a definition's ids begin */
	struct cg_vec rank;   /* uint32_t by word: the definitions that begin in the words before */
	struct cg_vec base;   /* uint16_t by definition: its first id's depth */
	uint64_t last;        /* the last id defined; 0: none */
};

/* Whether ids first.. (n) at depth may be added: right after the last, below 2^32. */
bool cg_stack_depths_next(const struct cg_stack_depths *s, uint64_t first, uint64_t n, uint32_t depth);
/* Ids first.. (n, cg_stack_depths_next true) at depths depth, depth + 1, ...; 0 or -ENOMEM. */
int cg_stack_depths_put(struct cg_stack_depths *s, uint64_t first, uint64_t n, uint32_t depth);
/* The depth of id, -1 when not defined. */
long cg_stack_depths_find(const struct cg_stack_depths *s, uint64_t id);
/* Calls each(arg, first, n, depth) per definition in order until it returns nonzero; that, or 0. */
int cg_stack_depths_each(const struct cg_stack_depths *s,
			 int (*each)(void *arg, uint64_t first, uint64_t n, uint32_t depth), void *arg);
void cg_stack_depths_free(struct cg_stack_depths *s);

#endif

/* SPDX-License-Identifier: MIT */
/*
 * The writer's table of call stacks: every stack the hooks sent
 * (stack.h), interned by its frames, so that a stack several threads sent
 * under different transport ids has one trace id. Trace ids count from 1
 * in the order stacks are first used by a record. Writer thread only; the
 * memory is reserved address space, mapped when a trace opens, so nothing
 * is allocated while the writer runs.
 */
#ifndef CG_STACK_INTERN_H
#define CG_STACK_INTERN_H

#include <stdint.h>

/* A new trace: the table emptied (reserved the first time). Before the writer starts. */
int cg_intern_reset(void);
/* A CG_EV_STACK's definition: transport id tid has these n frames. */
void cg_intern_define(uint32_t tid, uint64_t hash, const uint64_t *frames, uint32_t n);

struct cg_stack_use {
	uint64_t id;            /* the trace id, 0 for none */
	const uint64_t *frames; /* set on the stack's first use only: the record defines it */
	uint32_t n_frames;
};
/* The stack a record names through transport id tid (0: none). */
struct cg_stack_use cg_intern_use(uint32_t tid);
/*
 * A dlclose unmapped code (CG_EV_UNLOAD): the same addresses may be other
 * code now, so stacks defined from here on are new stacks, whose first
 * records come after the new modules' (docs/stacks.md, resolving).
 */
void cg_intern_unload(void);
/* The definition of a first use could not be written: the stack is never named again. */
void cg_intern_failed(uint64_t id);

#endif

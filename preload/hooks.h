/* SPDX-License-Identifier: MIT */
/*
 * What each wrapper records around the real call: a stamped event in the
 * thread's ring, nothing shared, no lock. A free is stamped before the real
 * free and an allocation after the real allocator returns, so an address
 * reused by another thread always sorts after its free. The writer thread
 * matches frees to allocations (see writer.c).
 */
#ifndef CG_HOOKS_H
#define CG_HOOKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "event.h"
#include "options.h"
#include "push.h"
#include "stack.h"
#include "state.h"
#include "thread.h"

/*
 * The category of memory allocated now at [addr, addr + size): parameter
 * inside marked parameters (params.h), else from the open steps (spans.h).
 */
uint8_t cg_hook_category(uint64_t addr, uint64_t size);

/*
 * After a successful allocation of size bytes at p. Inline in each
 * exported allocator, so that the unwind starts in the exported
 * function's frame: the hook's own frame was one more for libunwind to
 * step through (about 75 instructions of its fast path) and for the probe
 * to drop, at every allocation (docs/recording-cost.md).
 */
static inline __attribute__((always_inline)) void cg_hook_alloc(void *p, size_t size, uint8_t op)
{
	if (size < cg_opt.min_bytes || !cg_recording())
		return;
	/* Before the stamp: a new stack's definition goes first, stamped before the allocation. */
	uint32_t stack = cg_stack_depth && !cg_outside_window ? cg_stack_capture(false) : 0;
	uint8_t cat = cg_hook_category((uint64_t)(uintptr_t)p, size);
	struct cg_event e = {cg_stamp(false), (uint64_t)(uintptr_t)p, size, cg_thread_span(),
			     CG_EV_ALLOC, op, cat, 0};
	cg_push(&e, stack);
}

/* Before the real free of p. */
void cg_hook_free(void *p, uint8_t op);
/*
 * realloc: the free's stamp is taken before the real call; the free and
 * the allocation are recorded after it, and nothing when it failed.
 */
struct cg_realloc_state {
	uint64_t ts;
	int stamped;
};
void cg_hook_realloc_begin(void *p, struct cg_realloc_state *st);
void cg_hook_realloc_end(void *old, void *p, size_t size, uint8_t op,
			 const struct cg_realloc_state *st);
#endif

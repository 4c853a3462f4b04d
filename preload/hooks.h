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

/* After a successful allocation of size bytes at p. */
void cg_hook_alloc(void *p, size_t size, uint8_t op);
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

/* Stamps taken the way the heap hooks take them (before or after the real call). */
uint64_t cg_hook_stamp(bool before);
/*
 * Pushes a ready event (ts stamped, span and category filled) to the
 * thread's ring, with the transport id of its stack (stack.h; 0 none).
 */
void cg_hook_push(const struct cg_event *e, uint32_t stack);
/* n slots at once (ring.h: cg_ring_push_n); false when nothing was pushed. */
bool cg_hook_push_n(const struct cg_event *ev, unsigned n);
/* The calling thread's ring, mapped on first use; NULL when none can be. */
struct cg_ring *cg_hook_ring(void);

/*
 * The category of memory allocated now at [addr, addr + size): parameter
 * inside marked parameters (params.h), else from the open steps (thread.h).
 */
uint8_t cg_hook_category(uint64_t addr, uint64_t size);

#endif

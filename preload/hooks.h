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

/*
 * The category of memory allocated now at [addr, addr + size): parameter
 * inside marked parameters (params.h), else from the open steps (spans.h).
 */
uint8_t cg_hook_category(uint64_t addr, uint64_t size);

#endif

/* SPDX-License-Identifier: MIT */
/*
 * What each wrapper records around the real call. A free is stamped before
 * the real free and an allocation after the real allocator returns, so an
 * address reused by another thread always sorts after its free.
 */
#ifndef CG_HOOKS_H
#define CG_HOOKS_H

#include <stddef.h>
#include <stdint.h>

#include "event.h"

/* After a successful allocation of size bytes at p. */
void cg_hook_alloc(void *p, size_t size, uint8_t op);
/* Before the real free of p; a pointer never recorded records nothing. */
void cg_hook_free(void *p, uint8_t op);
/*
 * realloc: cg_hook_realloc_begin before the real call takes p out of the
 * table (nobody else can be handed p before the real call frees it);
 * cg_hook_realloc_end records the outcome or puts p back on failure.
 */
struct cg_realloc_state {
	uint64_t ts;
	uint64_t old_size;
	uint8_t category;
	int known;
};
void cg_hook_realloc_begin(void *p, struct cg_realloc_state *st);
void cg_hook_realloc_end(void *old, void *p, size_t size, uint8_t op,
			 const struct cg_realloc_state *st);

/* The annotation API's work. */
uint64_t cg_hook_span_begin(const char *name, uint8_t step);
int cg_hook_span_end(uint64_t id);

#endif

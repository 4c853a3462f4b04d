/* SPDX-License-Identifier: MIT */
/* A bump allocator for per-line scratch: reset costs nothing, nothing leaks. */
#ifndef CG_ARENA_H
#define CG_ARENA_H

#include <stddef.h>

struct cg_arena_chunk;

struct cg_arena {
	struct cg_arena_chunk *head;
	size_t used;
};

void cg_arena_init(struct cg_arena *a);
void cg_arena_fini(struct cg_arena *a);
/* Keeps the largest chunk for the next line. */
void cg_arena_reset(struct cg_arena *a);
/* 16-byte aligned; NULL when out of memory. */
void *cg_arena_alloc(struct cg_arena *a, size_t n);
/* A copy of the NUL-terminated s in a; NULL for NULL, or when memory runs out. */
char *cg_arena_strdup(struct cg_arena *a, const char *s);

#endif

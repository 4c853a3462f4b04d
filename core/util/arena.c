/* SPDX-License-Identifier: MIT */
#include "arena.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct cg_arena_chunk {
	struct cg_arena_chunk *next;
	size_t size;
	_Alignas(16) unsigned char data[];
};

void cg_arena_init(struct cg_arena *a)
{
	a->head = NULL;
	a->used = 0;
}

void cg_arena_fini(struct cg_arena *a)
{
	while (a->head) {
		struct cg_arena_chunk *n = a->head->next;
		free(a->head);
		a->head = n;
	}
	a->used = 0;
}

void cg_arena_reset(struct cg_arena *a)
{
	if (!a->head)
		return;
	/* The newest chunk is the largest one: keep it, drop the rest. */
	struct cg_arena_chunk *keep = a->head, *c = keep->next;
	while (c) {
		struct cg_arena_chunk *n = c->next;
		free(c);
		c = n;
	}
	keep->next = NULL;
	a->used = 0;
}

void *cg_arena_alloc(struct cg_arena *a, size_t n)
{
	n = (n + 15) & ~(size_t)15;
	if (!a->head || a->head->size - a->used < n) {
		size_t size = a->head ? a->head->size * 2 : 4096;
		while (size < n)
			size *= 2;
		if (size > SIZE_MAX - sizeof(struct cg_arena_chunk))
			return NULL;
		struct cg_arena_chunk *c = malloc(sizeof(*c) + size);
		if (!c)
			return NULL;
		c->next = a->head;
		c->size = size;
		a->head = c;
		a->used = 0;
	}
	void *p = a->head->data + a->used;
	a->used += n;
	return p;
}

char *cg_arena_strdup(struct cg_arena *a, const char *s)
{
	if (!s)
		return NULL;
	size_t n = strlen(s) + 1;
	char *p = cg_arena_alloc(a, n);
	if (p)
		memcpy(p, s, n);
	return p;
}

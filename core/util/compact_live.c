/* SPDX-License-Identifier: MIT */
/*
 * Open addressing with linear probing, a quarter to half full, and deletion by
 * shifting the following entries back, so no tombstones build up over a
 * trace's millions of alloc/free pairs.
 */
#include "compact_live.h"

#include <errno.h>
#include <stdlib.h>


/*
 * Fibonacci hashing: one multiplication, the high bits kept. Heap
 * addresses differ in their middle bits, which the product spreads
 * upwards; the space is mixed in first.
 */
static inline uint32_t slot(const struct cg_clive *t, uint32_t space, uint64_t addr)
{
	uint64_t h = (addr ^ ((uint64_t)space << 56 | space)) * 0x9e3779b97f4a7c15ull;
	return (uint32_t)(h >> 32) & t->mask;
}

void cg_clive_fini(struct cg_clive *t)
{
	free(t->e);
	t->e = NULL;
	t->mask = t->count = 0;
}

static int grow(struct cg_clive *t)
{
	uint64_t n = t->e ? ((uint64_t)t->mask + 1) * 2 : 1024;
	if (n > (1ull << 31))
		return -ENOMEM;
	struct cg_clive_ent *e = calloc((size_t)n, sizeof(*e));
	if (!e)
		return -ENOMEM;
	struct cg_clive old = *t;
	t->e = e;
	t->mask = (uint32_t)(n - 1);
	for (uint32_t i = 0; old.e && i <= old.mask; i++) {
		if (!old.e[i].space1)
			continue;
		uint32_t j = slot(t, old.e[i].space1 - 1, old.e[i].addr);
		while (e[j].space1)
			j = (j + 1) & t->mask;
		e[j] = old.e[i];
	}
	free(old.e);
	return 0;
}

/*
 * A quarter full at most while the table fits the caches, where a shorter
 * run of entries after each slot saves a mispredicted branch or two per
 * record; half full beyond, where the memory matters more.
 */
static bool full(const struct cg_clive *t)
{
	uint64_t slots = (uint64_t)t->mask + 1, n = (uint64_t)t->count + 1;
	return !t->e || n * (slots <= (1u << 20) ? 4 : 2) > slots;
}

int cg_clive_set(struct cg_clive *t, uint32_t space, uint64_t addr, uint64_t bytes,
		 uint64_t aux)
{
	if (full(t)) {
		int r = grow(t);
		if (r < 0)
			return r;
	}
	uint32_t i = slot(t, space, addr);
	for (;; i = (i + 1) & t->mask) {
		struct cg_clive_ent *e = &t->e[i];
		if (!e->space1) {
			*e = (struct cg_clive_ent){addr, bytes, aux, space + 1};
			t->count++;
			return 0;
		}
		if (e->addr == addr && e->space1 == space + 1) {
			e->bytes = bytes;
			e->aux = aux;
			return 0;
		}
	}
}

const struct cg_clive_ent *cg_clive_get(const struct cg_clive *t, uint32_t space, uint64_t addr)
{
	if (!t->e)
		return NULL;
	for (uint32_t i = slot(t, space, addr);; i = (i + 1) & t->mask) {
		const struct cg_clive_ent *e = &t->e[i];
		if (!e->space1)
			return NULL;
		if (e->addr == addr && e->space1 == space + 1)
			return e;
	}
}

bool cg_clive_take(struct cg_clive *t, uint32_t space, uint64_t addr, uint64_t *bytes)
{
	if (!t->e)
		return false;
	uint32_t i = slot(t, space, addr);
	for (;; i = (i + 1) & t->mask) {
		struct cg_clive_ent *e = &t->e[i];
		if (!e->space1)
			return false;
		if (e->addr == addr && e->space1 == space + 1)
			break;
	}
	*bytes = t->e[i].bytes;
	/* Shift back each following entry whose home slot the hole now stands between. */
	for (uint32_t j = i;;) {
		j = (j + 1) & t->mask;
		struct cg_clive_ent *e = &t->e[j];
		if (!e->space1)
			break;
		uint32_t home = slot(t, e->space1 - 1, e->addr);
		if (((j - home) & t->mask) >= ((j - i) & t->mask)) {
			t->e[i] = *e;
			i = j;
		}
	}
	t->e[i].space1 = 0;
	t->count--;
	return true;
}

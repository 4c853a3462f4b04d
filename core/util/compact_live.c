/* SPDX-License-Identifier: MIT */
/*
 * One open-addressing table per space, with linear probing and deletion by
 * shifting the following entries back, so no tombstones build up over a
 * trace's millions of alloc/free pairs. A slot is the address and its
 * bytes, 16 bytes; the caller's aux, when kept, lies in an array beside,
 * so a reader pays for no value it never stores. A framework holds
 * hundreds of thousands of allocations live at once (full(), below).
 */
#include "compact_live.h"

#include <errno.h>
#include <stdlib.h>

struct cg_clive_slot {
	uint64_t addr;
	uint64_t bytes;
};

/*
 * Fibonacci hashing: one multiplication, the high bits kept. Heap
 * addresses differ in their middle bits, which the product spreads
 * upwards.
 */
static inline uint32_t home(const struct cg_clive_space *s, uint64_t addr)
{
	return (uint32_t)((addr * 0x9e3779b97f4a7c15ull) >> 32) & s->mask;
}

void cg_clive_fini(struct cg_clive *t)
{
	for (uint32_t i = 0; i < t->n_spaces; i++) {
		free(t->spaces[i].slots);
		free(t->spaces[i].aux);
	}
	free(t->spaces);
	*t = (struct cg_clive){.keep_aux = t->keep_aux};
}

/* The space's table; NULL when absent (and not made, or out of memory). */
static struct cg_clive_space *space_of(struct cg_clive *t, uint32_t space, bool make)
{
	if (t->last < t->n_spaces && t->spaces[t->last].space == space)
		return &t->spaces[t->last];
	for (uint32_t i = 0; i < t->n_spaces; i++)
		if (t->spaces[i].space == space)
			return &t->spaces[t->last = i];
	if (!make)
		return NULL;
	struct cg_clive_space *n = realloc(t->spaces, (t->n_spaces + 1) * sizeof(*n));
	if (!n)
		return NULL;
	t->spaces = n;
	t->last = t->n_spaces++;
	n[t->last] = (struct cg_clive_space){.space = space};
	return &n[t->last];
}

static int grow(struct cg_clive_space *s, bool keep_aux)
{
	uint64_t n = s->slots ? ((uint64_t)s->mask + 1) * 2 : 1024;
	if (n > (1ull << 31))
		return -ENOMEM;
	struct cg_clive_slot *e = calloc((size_t)n, sizeof(*e));
	uint64_t *aux = keep_aux ? malloc((size_t)n * sizeof(*aux)) : NULL;
	if (!e || (keep_aux && !aux)) {
		free(e);
		free(aux);
		return -ENOMEM;
	}
	struct cg_clive_space old = *s;
	s->slots = e;
	s->aux = aux;
	s->mask = (uint32_t)(n - 1);
	for (uint32_t i = 0; old.slots && i <= old.mask; i++) {
		if (!old.slots[i].addr)
			continue;
		uint32_t j = home(s, old.slots[i].addr);
		while (e[j].addr)
			j = (j + 1) & s->mask;
		e[j] = old.slots[i];
		if (aux)
			aux[j] = old.aux[i];
	}
	free(old.slots);
	free(old.aux);
	return 0;
}

/*
 * A quarter full at most while the table fits the caches, where shorter
 * runs save a mispredicted branch or two per record; three quarters
 * beyond, where every probe misses the cache anyway and the next run of
 * slots is in the same or the next line (16-byte slots, 4 a line).
 */
static bool full(const struct cg_clive_space *s)
{
	uint64_t slots = (uint64_t)s->mask + 1, n = (uint64_t)s->count + 1;
	return !s->slots || (slots <= (1u << 16) ? n * 4 > slots : n * 4 > slots * 3);
}

/* The slot of addr (non-zero), or the empty slot where it would go. */
static uint32_t find(const struct cg_clive_space *s, uint64_t addr)
{
	uint32_t i = home(s, addr);
	while (s->slots[i].addr && s->slots[i].addr != addr)
		i = (i + 1) & s->mask;
	return i;
}

int cg_clive_set(struct cg_clive *t, uint32_t space, uint64_t addr, uint64_t bytes,
		 uint64_t aux)
{
	struct cg_clive_space *s = space_of(t, space, true);
	if (!s)
		return -ENOMEM;
	if (!addr) {
		s->count += !s->has_zero;
		s->has_zero = true;
		s->zero_bytes = bytes;
		s->zero_aux = aux;
		return 0;
	}
	if (full(s)) {
		int r = grow(s, t->keep_aux);
		if (r < 0)
			return r;
	}
	uint32_t i = find(s, addr);
	if (!s->slots[i].addr)
		s->count++;
	s->slots[i] = (struct cg_clive_slot){addr, bytes};
	if (s->aux)
		s->aux[i] = aux;
	return 0;
}

bool cg_clive_get(struct cg_clive *t, uint32_t space, uint64_t addr, uint64_t *bytes,
		  uint64_t *aux)
{
	struct cg_clive_space *s = space_of(t, space, false);
	if (!s)
		return false;
	if (!addr) {
		*bytes = s->zero_bytes;
		*aux = s->has_zero && t->keep_aux ? s->zero_aux : 0;
		return s->has_zero;
	}
	if (!s->slots)
		return false;
	uint32_t i = find(s, addr);
	if (!s->slots[i].addr)
		return false;
	*bytes = s->slots[i].bytes;
	*aux = s->aux ? s->aux[i] : 0;
	return true;
}

/* Empties slot i, shifting back each following entry whose home the hole now stands between. */
static void remove_at(struct cg_clive_space *s, uint32_t i)
{
	for (uint32_t j = i;;) {
		j = (j + 1) & s->mask;
		if (!s->slots[j].addr)
			break;
		uint32_t h = home(s, s->slots[j].addr);
		if (((j - h) & s->mask) >= ((j - i) & s->mask)) {
			s->slots[i] = s->slots[j];
			if (s->aux)
				s->aux[i] = s->aux[j];
			i = j;
		}
	}
	s->slots[i].addr = 0;
	s->count--;
}

bool cg_clive_take(struct cg_clive *t, uint32_t space, uint64_t addr, uint64_t *bytes)
{
	struct cg_clive_space *s = space_of(t, space, false);
	if (!s)
		return false;
	if (!addr) {
		if (!s->has_zero)
			return false;
		*bytes = s->zero_bytes;
		s->has_zero = false;
		s->count--;
		return true;
	}
	if (!s->slots)
		return false;
	uint32_t i = find(s, addr);
	if (!s->slots[i].addr)
		return false;
	*bytes = s->slots[i].bytes;
	remove_at(s, i);
	return true;
}

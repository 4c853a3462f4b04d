/* SPDX-License-Identifier: MIT */
/* A light document's stack depths by definition (stack_depths.h). */
#include "stack_depths.h"

#include <errno.h>
#include <string.h>

static const uint64_t *words(const struct cg_stack_depths *s)
{
	return s->starts.p;
}

bool cg_stack_depths_next(const struct cg_stack_depths *s, uint64_t first, uint64_t n, uint32_t depth)
{
	return first == s->last + 1 && n && first + n - 1 < UINT32_MAX && depth <= UINT16_MAX;
}

/* Words up to the one of id, each opened with the count of the definitions before it. */
static int open_words(struct cg_stack_depths *s, uint64_t id)
{
	size_t want = (size_t)(id >> 6) + 1, old = s->starts.len;
	if (want <= old)
		return 0;
	if (cg_vec_grow(&s->starts, sizeof(uint64_t), want) < 0 ||
	    cg_vec_grow(&s->rank, sizeof(uint32_t), want) < 0)
		return -ENOMEM;
	uint64_t *w = s->starts.p;
	uint32_t *r = s->rank.p;
	for (size_t i = old; i < want; i++) {
		w[i] = 0;
		r[i] = i ? r[i - 1] + (uint32_t)__builtin_popcountll(w[i - 1]) : 0;
	}
	s->starts.len = s->rank.len = want;
	return 0;
}

int cg_stack_depths_put(struct cg_stack_depths *s, uint64_t first, uint64_t n, uint32_t depth)
{
	/* A word's count is of the starts before it: its own start set first, the words past it after. */
	if (open_words(s, first) < 0)
		return -ENOMEM;
	((uint64_t *)s->starts.p)[first >> 6] |= 1ull << (first & 63);
	if (open_words(s, first + n - 1) < 0)
		return -ENOMEM;
	uint16_t *b = CG_VEC_PUSH(&s->base, uint16_t);
	if (!b)
		return -ENOMEM;
	*b = (uint16_t)depth;
	s->last = first + n - 1;
	return 0;
}

/* The definition holding id (1 to last): its number and first id. */
static uint64_t def_of(const struct cg_stack_depths *s, uint64_t id, uint64_t *start)
{
	const uint64_t *w = words(s);
	size_t i = (size_t)(id >> 6);
	uint64_t m = w[i] & (~0ull >> (63 - (id & 63)));
	/* Id 1 begins the first definition, so a word with a start is always found. */
	while (!m)
		m = w[--i];
	*start = (uint64_t)i * 64 + 63 - (uint64_t)__builtin_clzll(m);
	return ((const uint32_t *)s->rank.p)[i] + (uint64_t)__builtin_popcountll(m) - 1;
}

static uint32_t base_of(const struct cg_stack_depths *s, uint64_t def)
{
	return ((const uint16_t *)s->base.p)[def];
}

long cg_stack_depths_find(const struct cg_stack_depths *s, uint64_t id)
{
	if (!id || id > s->last)
		return -1;
	uint64_t start, def = def_of(s, id, &start);
	return (long)(base_of(s, def) + (id - start));
}

int cg_stack_depths_each(const struct cg_stack_depths *s,
			 int (*each)(void *arg, uint64_t first, uint64_t n, uint32_t depth), void *arg)
{
	const uint64_t *w = words(s);
	uint64_t def = 0, first = 0;
	for (size_t i = 0; i < s->starts.len; i++) {
		for (uint64_t m = w[i]; m; m &= m - 1) {
			uint64_t id = (uint64_t)i * 64 + (uint64_t)__builtin_ctzll(m);
			if (first) {
				int r = each(arg, first, id - first, base_of(s, def++));
				if (r)
					return r;
			}
			first = id;
		}
	}
	return first ? each(arg, first, s->last - first + 1, base_of(s, def)) : 0;
}

void cg_stack_depths_free(struct cg_stack_depths *s)
{
	cg_vec_free(&s->starts, sizeof(uint64_t));
	cg_vec_free(&s->rank, sizeof(uint32_t));
	cg_vec_free(&s->base, sizeof(uint16_t));
	memset(s, 0, sizeof(*s));
}

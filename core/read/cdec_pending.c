/* SPDX-License-Identifier: MIT */
/* The compact decoder's pending stack items (cdec_pending.h). */
#include "cdec_pending.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define NONE UINT32_MAX

uint32_t cg_pending_find(const struct cg_pending *p, uint64_t id)
{
	if (!p->live)
		return NONE;
	const struct cg_pending_stack *v = p->v;
	uint32_t lo = p->head, hi = p->n;
	if (p->unsorted) {
		for (uint32_t i = lo; i < hi; i++)
			if (v[i].id == id && !v[i].taken)
				return i;
		return NONE;
	}
	if (id < v[lo].id || id > v[hi - 1].id)
		return NONE;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (v[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < p->n && v[lo].id == id && !v[lo].taken ? lo : NONE;
}

/* Drops the taken items, keeping the order: they would otherwise pile up behind one that waits long. */
static void compact(struct cg_pending *p)
{
	uint32_t k = 0;
	for (uint32_t i = p->head; i < p->n; i++)
		if (!p->v[i].taken)
			p->v[k++] = p->v[i];
	p->n = k;
	p->head = 0;
}

int cg_pending_add(struct cg_pending *p, const struct cg_pending_stack *s)
{
	if (p->n > 2 * p->live + 1024)
		compact(p);
	if (p->n == p->cap) {
		uint32_t cap = p->cap ? 2 * p->cap : 64;
		struct cg_pending_stack *v = realloc(p->v, (size_t)cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		p->v = v;
		p->cap = cap;
	}
	if (p->n > p->head && s->id <= p->v[p->n - 1].id)
		p->unsorted = true;
	p->v[p->n++] = *s;
	p->v[p->n - 1].taken = false;
	p->live++;
	return 0;
}

bool cg_pending_take(struct cg_pending *p, uint64_t id, struct cg_pending_stack *out)
{
	uint32_t i = cg_pending_find(p, id);
	if (i == NONE) {
		memset(out, 0, sizeof(*out));
		return false;
	}
	*out = p->v[i];
	p->v[i].taken = true;
	p->live--;
	while (p->head < p->n && p->v[p->head].taken)
		p->head++;
	if (!p->live) {
		p->n = p->head = 0;
		p->unsorted = false;
	}
	return true;
}

void cg_pending_free(struct cg_pending *p)
{
	free(p->v);
	memset(p, 0, sizeof(*p));
}

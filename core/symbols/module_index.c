/* SPDX-License-Identifier: MIT */
/* The module entry of an address, by a segment tree over the entries' ranges (module_index.h). */
#include "module_index.h"

#include <errno.h>
#include <stdlib.h>

long cg_module_for(const struct cgtrace_module *mods, size_t n, uint64_t pc, uint64_t defined_ns)
{
	long before = -1, after = -1;
	for (size_t i = 0; i < n; i++) {
		if (pc < mods[i].start || pc >= mods[i].end)
			continue;
		if (mods[i].recorded_ns <= defined_ns)
			before = (long)i;
		else if (after < 0)
			after = (long)i;
	}
	return before >= 0 ? before : after;
}

static int by_value(const void *pa, const void *pb)
{
	uint64_t a = *(const uint64_t *)pa, b = *(const uint64_t *)pb;
	return a < b ? -1 : a > b;
}

/* The number of bounds at or below v: v's leaf is that minus one. */
static size_t bounds_upto(const uint64_t *b, size_t n, uint64_t v)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (b[mid] <= v)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * Lists entry i at the nodes covering its leaves [l, r): counts them
 * first (items NULL, first[v + 1] counted), then fills them (first[v]
 * moved on past each item written).
 */
static void place(struct cg_module_index *ix, size_t l, size_t r, uint32_t i)
{
	for (l += ix->width, r += ix->width; l < r; l >>= 1, r >>= 1) {
		if (l & 1) {
			if (ix->items)
				ix->items[ix->first[l]++] = i;
			else
				ix->first[l + 1]++;
			l++;
		}
		if (r & 1) {
			r--;
			if (ix->items)
				ix->items[ix->first[r]++] = i;
			else
				ix->first[r + 1]++;
		}
	}
}

/* Each entry with a range at its nodes, in index order: count, sum, fill, then shift back. */
static int place_all(struct cg_module_index *ix, size_t n)
{
	size_t n_bounds = ix->n_leaves + 1, nodes = 2 * ix->width;
	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < n; i++) {
			const struct cgtrace_module *m = &ix->mods[i];
			if (m->start < m->end)
				place(ix, bounds_upto(ix->bounds, n_bounds, m->start) - 1,
				      bounds_upto(ix->bounds, n_bounds, m->end) - 1, (uint32_t)i);
		}
		if (pass == 1)
			break;
		for (size_t v = 0; v < nodes; v++)
			ix->first[v + 1] += ix->first[v];
		ix->items = malloc((ix->first[nodes] ? ix->first[nodes] : 1) * sizeof(*ix->items));
		if (!ix->items)
			return -ENOMEM;
	}
	/* Filling moved each node's start to the next node's: put them back. */
	for (size_t v = nodes; v > 0; v--)
		ix->first[v] = ix->first[v - 1];
	ix->first[0] = 0;
	return 0;
}

int cg_module_index_build(struct cg_module_index *ix, const struct cgtrace_module *mods, size_t n)
{
	*ix = (struct cg_module_index){.mods = mods};
	/* Each entry is listed at most twice per level of a tree of at most 2n leaves. */
	if (n > UINT32_MAX / 128)
		return -EOVERFLOW;
	ix->bounds = malloc((2 * n + 1) * sizeof(*ix->bounds));
	if (!ix->bounds)
		return -ENOMEM;
	size_t nb = 0;
	for (size_t i = 0; i < n; i++)
		if (mods[i].start < mods[i].end) {
			ix->bounds[nb++] = mods[i].start;
			ix->bounds[nb++] = mods[i].end;
		}
	qsort(ix->bounds, nb, sizeof(*ix->bounds), by_value);
	size_t distinct = 0;
	for (size_t i = 0; i < nb; i++)
		if (distinct == 0 || ix->bounds[i] != ix->bounds[distinct - 1])
			ix->bounds[distinct++] = ix->bounds[i];
	ix->n_leaves = distinct > 1 ? distinct - 1 : 0;
	for (ix->width = 1; ix->width < ix->n_leaves; ix->width <<= 1)
		;
	ix->first = calloc(2 * ix->width + 1, sizeof(*ix->first));
	int r = ix->first ? place_all(ix, n) : -ENOMEM;
	if (r < 0)
		cg_module_index_free(ix);
	return r;
}

long cg_module_index_find(const struct cg_module_index *ix, uint64_t pc, uint64_t defined_ns)
{
	size_t k = bounds_upto(ix->bounds, ix->n_leaves + (ix->n_leaves > 0), pc);
	if (k == 0 || k > ix->n_leaves)
		return -1;
	long before = -1, after = -1;
	for (size_t v = ix->width + k - 1; v >= 1; v >>= 1)
		for (uint32_t j = ix->first[v]; j < ix->first[v + 1]; j++) {
			long i = ix->items[j];
			if (ix->mods[i].recorded_ns <= defined_ns) {
				if (i > before)
					before = i;
			} else if (after < 0 || i < after) {
				after = i;
			}
		}
	return before >= 0 ? before : after;
}

void cg_module_index_free(struct cg_module_index *ix)
{
	free(ix->bounds);
	free(ix->first);
	free(ix->items);
	*ix = (struct cg_module_index){0};
}

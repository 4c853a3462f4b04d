/* SPDX-License-Identifier: MIT */
/* The stack id index (stack_ids.h). */
#include "stack_ids.h"

#include <errno.h>
#include <string.h>

#include "doc.h"

/* Ids below this go through the array once the index is one, sparse ones through the map. */
#define DENSE_MAX (1u << 24)
/* A light document's byte for an id deeper than it holds: the depth is in the map. */
#define LIGHT_DEEP 255u
/* Ids a coarse entry covers. */
#define COARSE_SHIFT 6

static const struct cg_stack_def *def_at(const struct cgtrace_doc *d, size_t i)
{
	return CG_VEC_AT(&d->stack_defs, struct cg_stack_def, i);
}

/* The ids a definition names: a tree's one per node, a flat one's its last node's. */
static uint64_t def_last_id(const struct cg_stack_def *def)
{
	return def->tree ? def->first_id + def->n - 1 : def->first_id;
}

static uint32_t def_node_of(const struct cg_stack_def *def, uint64_t id)
{
	return def->tree ? def->first_node + (uint32_t)(id - def->first_id)
			 : def->first_node + def->n - 1;
}

/* In order: the last definition whose first id is at or before id, if it names id (*out). */
static long find_ordered(const struct cgtrace_doc *d, uint64_t id, const struct cg_stack_def **out)
{
	const uint32_t *coarse = d->stack_coarse.p;
	uint64_t b = id >> COARSE_SHIFT;
	if (!d->stack_defs.len || b >= d->stack_coarse.len)
		return -1;
	/* coarse[b]: the first definition naming an id of block b or past it. */
	size_t lo = coarse[b] ? coarse[b] - 1 : 0;
	/* Past coarse[b + 1] - 1, definitions start after block b. */
	size_t hi = b + 1 < d->stack_coarse.len ? coarse[b + 1] : d->stack_defs.len;
	if (def_at(d, lo)->first_id > id)
		return -1;
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;
		if (def_at(d, mid)->first_id <= id)
			lo = mid;
		else
			hi = mid;
	}
	const struct cg_stack_def *def = def_at(d, lo);
	if (id > def_last_id(def))
		return -1;
	*out = def;
	return (long)def_node_of(def, id);
}

static long find_dense(const struct cgtrace_doc *d, uint64_t id)
{
	uint32_t pos = UINT32_MAX, val;
	if (d->stacks_light && !d->stack_seq_off)
		return cg_stack_depths_find(&d->stack_seq, id);
	if (d->stacks_light && id < d->stack_dense.len) {
		uint8_t v = ((const uint8_t *)d->stack_dense.p)[id];
		if (v != LIGHT_DEEP)
			return v ? (long)v - 1 : -1;
		return cg_map_next(&d->stack_by_id, id, &pos, &val) ? (long)val : -1;
	}
	if (!d->stacks_light && id < d->stack_dense.len) {
		uint32_t v = ((const uint32_t *)d->stack_dense.p)[id];
		return v ? (long)v - 1 : -1;
	}
	if (id < DENSE_MAX)
		return -1;
	return cg_map_next(&d->stack_by_id, id, &pos, &val) ? (long)val : -1;
}

/* Whether id is in a skipped stack block's range: a binary search of the few ranges. */
static bool skipped(const struct cgtrace_doc *d, uint64_t id)
{
	const struct cg_id_range *v = d->stack_skipped.p;
	size_t lo = 0, hi = d->stack_skipped.len;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (v[mid].last < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < d->stack_skipped.len && v[lo].first <= id;
}

bool cg_stack_ids_known(const struct cgtrace_doc *d, uint64_t id)
{
	/* Skipping stack blocks, a document keeps the ranges of ids only (stacks.md). */
	if (d->stacks_skip)
		return skipped(d, id);
	/*
	 * A light document whose ids so far are 1 to the largest, each once
	 * (a second definition is refused), knows them without a lookup.
	 */
	if (d->stacks_light && id && id <= d->stack_last_id && d->n_stack_ids == d->stack_last_id)
		return true;
	return cg_stack_ids_find(d, id) >= 0;
}

long cg_stack_ids_find_def(const struct cgtrace_doc *d, uint64_t id, const struct cg_stack_def **def)
{
	*def = NULL;
	return d->stacks_light || d->stack_unordered ? find_dense(d, id) : find_ordered(d, id, def);
}

/* Ranges kept sorted, those that touch merged: one for a writer's ids, which run on block by block. */
int cg_stack_ids_put_skipped(struct cgtrace_doc *d, uint64_t first, uint64_t last)
{
	d->n_stack_ids += last - first + 1;
	struct cg_id_range r = {first, last}, *v = d->stack_skipped.p;
	size_t n = d->stack_skipped.len, i = n;
	while (i > 0 && v[i - 1].last + 1 >= r.first)
		i--;
	/* v[i..n) end at or past the range's start - 1: the ones from i that begin by its end + 1 merge. */
	size_t j = i;
	for (; j < n && v[j].first <= r.last + 1; j++) {
		r.first = v[j].first < r.first ? v[j].first : r.first;
		r.last = v[j].last > r.last ? v[j].last : r.last;
	}
	if (j == i) {
		if (cg_vec_grow(&d->stack_skipped, sizeof(r), n + 1) < 0)
			return -ENOMEM;
		d->stack_skipped.len = n + 1;
		v = d->stack_skipped.p;
		memmove(v + i + 1, v + i, (n - i) * sizeof(*v));
	} else {
		memmove(v + i + 1, v + j, (n - j) * sizeof(*v));
		d->stack_skipped.len = n - (j - i) + 1;
	}
	v[i] = r;
	return 0;
}

long cg_stack_ids_find(const struct cgtrace_doc *d, uint64_t id)
{
	const struct cg_stack_def *def;
	return cg_stack_ids_find_def(d, id, &def);
}

bool cg_stack_ids_all_new(const struct cgtrace_doc *d, uint64_t first)
{
	/* A light document's stack_last_id is the largest id defined, in any order. */
	return (d->stacks_light || !d->stack_unordered) && first > d->stack_last_id;
}

static size_t dense_elem(const struct cgtrace_doc *d)
{
	return d->stacks_light ? sizeof(uint8_t) : sizeof(uint32_t);
}

static int put(struct cgtrace_doc *d, uint64_t id, uint32_t val)
{
	if (id >= DENSE_MAX)
		return cg_map_put(&d->stack_by_id, id, val);
	size_t elem = dense_elem(d);
	if (id >= d->stack_dense.len) {
		/* By an eighth past the id: every entry up to len is zeroed, so resident. */
		size_t old = d->stack_dense.len, want = (size_t)id + 1 + old / 8 + 1024;
		if (want > DENSE_MAX)
			want = DENSE_MAX;
		if (cg_vec_grow(&d->stack_dense, elem, want) < 0)
			return -ENOMEM;
		memset((char *)d->stack_dense.p + old * elem, 0, (want - old) * elem);
		d->stack_dense.len = want;
	}
	if (!d->stacks_light) {
		((uint32_t *)d->stack_dense.p)[id] = val + 1;
		return 0;
	}
	/*
	 * A light document's values are depths, 1024 at most, and most stacks
	 * are shallower than 254: a byte an id, the deeper ones in the map.
	 */
	uint8_t *v = (uint8_t *)d->stack_dense.p + id;
	*v = val + 1 < LIGHT_DEEP ? (uint8_t)(val + 1) : LIGHT_DEEP;
	return *v == LIGHT_DEEP ? cg_map_put(&d->stack_by_id, id, val) : 0;
}

static int put_depths(struct cgtrace_doc *d, uint64_t first, uint64_t n, uint32_t depth);

static int replay(void *arg, uint64_t first, uint64_t n, uint32_t depth)
{
	return put_depths(arg, first, n, depth);
}

/* The first id out of order: the depths so far, by id, into the array and the map. */
static int seq_off(struct cgtrace_doc *d)
{
	d->stack_seq_off = true;
	int r = cg_stack_depths_each(&d->stack_seq, replay, d);
	cg_stack_depths_free(&d->stack_seq);
	return r;
}

int cg_stack_ids_put_depths(struct cgtrace_doc *d, uint64_t first, uint64_t n, uint32_t depth)
{
	uint64_t last = first + n - 1;
	if (last > d->stack_last_id)
		d->stack_last_id = last;
	if (!d->stack_seq_off && cg_stack_depths_next(&d->stack_seq, first, n, depth))
		return cg_stack_depths_put(&d->stack_seq, first, n, depth);
	int r = d->stack_seq_off ? 0 : seq_off(d);
	return r < 0 ? r : put_depths(d, first, n, depth);
}

static int put_depths(struct cgtrace_doc *d, uint64_t first, uint64_t n, uint32_t depth)
{
	uint64_t last = first + n - 1;
	/* A tree definition's depths run on by one: a byte each, the array grown once. */
	if (last < DENSE_MAX && depth + n < LIGHT_DEEP - 1) {
		int r = put(d, last, depth + (uint32_t)n - 1);
		uint8_t *v = (uint8_t *)d->stack_dense.p + first;
		for (uint64_t k = 0; r == 0 && k + 1 < n; k++)
			v[k] = (uint8_t)(depth + k + 1);
		return r;
	}
	for (uint64_t k = 0; k < n; k++) {
		int r = put(d, first + k, depth + (uint32_t)k);
		if (r < 0)
			return r;
	}
	return 0;
}

static int put_def(struct cgtrace_doc *d, const struct cg_stack_def *def)
{
	for (uint64_t id = def->first_id, last = def_last_id(def); id <= last; id++) {
		int r = put(d, id, def_node_of(def, id));
		if (r < 0)
			return r;
		if (id == UINT64_MAX)
			break;
	}
	return 0;
}

/* The first definition out of order: every definition so far into the array and the map. */
static int go_unordered(struct cgtrace_doc *d)
{
	d->stack_unordered = true;
	for (size_t i = 0; i < d->stack_defs.len; i++) {
		int r = put_def(d, def_at(d, i));
		if (r < 0)
			return r;
	}
	cg_vec_free(&d->stack_coarse, sizeof(uint32_t));
	return 0;
}

int cg_stack_ids_add_def(struct cgtrace_doc *d, uint32_t i)
{
	const struct cg_stack_def *def = def_at(d, i);
	uint64_t last = def_last_id(def);
	if (d->stack_unordered)
		return put_def(d, def);
	size_t want = (size_t)(last >> COARSE_SHIFT) + 1;
	/*
	 * Out of order, or ids so sparse that the coarse table would outgrow
	 * an entry per 8 ids defined: the array and the map hold them.
	 */
	if ((i && def->first_id <= d->stack_last_id) || last >> 40 ||
	    want > d->n_stack_ids / 8 + 4096)
		return go_unordered(d);
	d->stack_last_id = last;
	if (want > d->stack_coarse.len) {
		if (cg_vec_grow(&d->stack_coarse, sizeof(uint32_t), want) < 0)
			return -ENOMEM;
		/* Blocks up to the last id's: this is the first definition naming an id in or past them. */
		uint32_t *coarse = d->stack_coarse.p;
		for (size_t b = d->stack_coarse.len; b < want; b++)
			coarse[b] = i + 1;
		d->stack_coarse.len = want;
	}
	return 0;
}

void cg_stack_ids_free(struct cgtrace_doc *d)
{
	cg_stack_depths_free(&d->stack_seq);
	cg_map_free(&d->stack_by_id);
	cg_vec_free(&d->stack_dense, dense_elem(d));
	cg_vec_free(&d->stack_coarse, sizeof(uint32_t));
	cg_vec_free(&d->stack_skipped, sizeof(struct cg_id_range));
}

/* SPDX-License-Identifier: MIT */
/* Figures by stack id (stack_figs.h): an array for dense ids, a map past it. */
#include "stack_figs.h"

#include <errno.h>
#include <string.h>

/*
 * Ids below FIG_DIRECT_SPREAD times the figures so far (plus a slack) index
 * the array: a tree's ids name every node, and allocations hang from about
 * one in five, so 4 bytes an id still cost less than a map entry a figure
 * (24 to 48 bytes, and a hash on the way).
 */
#define FIG_DIRECT_SLACK 4096u
#define FIG_DIRECT_SPREAD 8u

static int fig_new(struct cg_stack_figs *f, uint64_t id, uint32_t key, uint32_t first,
		   uint32_t *out)
{
	if (f->figs.len >= UINT32_MAX - 1)
		return -E2BIG;
	struct cg_stack_fig *g = CG_VEC_PUSH(&f->figs, struct cg_stack_fig);
	if (!g)
		return -ENOMEM;
	*out = (uint32_t)(f->figs.len - 1);
	*g = (struct cg_stack_fig){.id = id, .temp_dev = key};
	if (!first)
		return 0;
	/* Linked in right after the id's first figure, which the array or the map points at. */
	struct cg_stack_fig *h = CG_VEC_AT(&f->figs, struct cg_stack_fig, first - 1);
	uint32_t pos = UINT32_MAX, after = 0;
	if (!(h->temp_dev & CG_FIG_HAS_NEXT) || !cg_map_next(&f->next, first - 1, &pos, &after)) {
		h->temp_dev |= CG_FIG_HAS_NEXT;
		return cg_map_put(&f->next, first - 1, *out);
	}
	f->next.vals[pos] = *out;
	g->temp_dev |= CG_FIG_HAS_NEXT;
	return cg_map_put(&f->next, *out, after);
}

/*
 * The ids the map held that the grown array now covers: the array is where
 * they are looked up from now on, and it must point at their figures, or
 * an id would get a second figure on the same device.
 */
static void adopt_far(struct cg_stack_figs *f)
{
	uint32_t *direct = f->direct.p;
	for (uint32_t i = 0; f->far.mask && i <= f->far.mask; i++) {
		uint64_t id = f->far.keys[i]; /* the map's key + 1, and its key is id - 1 */
		if (id && id < f->direct.len && !direct[id])
			direct[id] = f->far.vals[i] + 1;
	}
}

int cg_stack_fig_slow(struct cg_stack_figs *f, uint64_t id, uint32_t key, uint32_t *out)
{
	uint32_t first = 0, *head = NULL;
	if (id < f->direct.len) {
		head = (uint32_t *)f->direct.p + id;
	} else if (id < FIG_DIRECT_SPREAD * (uint64_t)f->figs.len + FIG_DIRECT_SLACK) {
		/* By an eighth past the id: every entry up to len is written (zeroed) and resident. */
		size_t old = f->direct.len, want = (size_t)id + 1 + old / 8 + 1024;
		if (cg_vec_grow(&f->direct, sizeof(uint32_t), want) < 0)
			return -ENOMEM;
		memset((uint32_t *)f->direct.p + old, 0, (want - old) * sizeof(uint32_t));
		f->direct.len = want;
		adopt_far(f);
		head = (uint32_t *)f->direct.p + id;
	} else {
		uint32_t pos = UINT32_MAX, val;
		while (!first && cg_map_next(&f->far, id - 1, &pos, &val))
			if (CG_VEC_AT(&f->figs, struct cg_stack_fig, val)->id == id)
				first = val + 1;
	}
	if (head)
		first = *head;
	for (uint32_t k = first; k;) {
		const struct cg_stack_fig *g = CG_VEC_AT(&f->figs, struct cg_stack_fig, k - 1);
		if (cg_stack_fig_key(g) == key) {
			*out = k - 1;
			return 0;
		}
		uint32_t pos = UINT32_MAX, next;
		k = g->temp_dev & CG_FIG_HAS_NEXT && cg_map_next(&f->next, k - 1, &pos, &next)
			? next + 1
			: 0;
	}
	int r = fig_new(f, id, key, first, out);
	if (r < 0 || first)
		return r;
	if (head) {
		*head = *out + 1;
		return 0;
	}
	return cg_map_put(&f->far, id - 1, *out);
}

void cg_stack_figs_unindex(struct cg_stack_figs *f)
{
	cg_vec_free(&f->direct, sizeof(uint32_t));
	cg_map_free(&f->far);
}

void cg_stack_figs_free(struct cg_stack_figs *f)
{
	cg_stack_figs_unindex(f);
	cg_vec_free(&f->figs, sizeof(struct cg_stack_fig));
	cg_map_free(&f->next);
}

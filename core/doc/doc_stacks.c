/* SPDX-License-Identifier: MIT */
/*
 * The stack table and the module list: each stack once, by id, its frames
 * and the module strings in an arena so that the public views' pointers
 * never move. Memory is the distinct stacks and modules, never a record's.
 */
#include "doc_stacks.h"

#include <errno.h>
#include <string.h>

#include "doc.h"
#include "doc_rules.h"
#include "export.h"

/*
 * Writers number stacks 1, 2, ... in first-use order, and a packed alloc
 * of a streamed read looks its id up: ids below this go through an array
 * (4 bytes an id), sparse ones through the map.
 */
#define CG_STACK_DENSE_MAX (1u << 22)

static long find(const struct cgtrace_doc *d, uint64_t id)
{
	if (id < d->stack_dense.len) {
		uint32_t v = ((const uint32_t *)d->stack_dense.p)[id];
		return v ? (long)v - 1 : -1;
	}
	if (id < CG_STACK_DENSE_MAX)
		return -1;
	uint32_t pos = UINT32_MAX, val;
	return cg_map_next(&d->stack_by_id, id, &pos, &val) ? (long)val : -1;
}

static int index_stack(struct cgtrace_doc *d, uint64_t id, uint32_t at)
{
	if (id >= CG_STACK_DENSE_MAX)
		return cg_map_put(&d->stack_by_id, id, at);
	if (id >= d->stack_dense.len) {
		size_t old = d->stack_dense.len, want = (size_t)id + 1 + old / 2;
		if (want > CG_STACK_DENSE_MAX)
			want = CG_STACK_DENSE_MAX;
		if (cg_vec_grow(&d->stack_dense, sizeof(uint32_t), want) < 0)
			return -ENOMEM;
		memset((uint32_t *)d->stack_dense.p + old, 0, (want - old) * sizeof(uint32_t));
		d->stack_dense.len = want;
	}
	((uint32_t *)d->stack_dense.p)[id] = at + 1;
	return 0;
}

bool cg_doc_stack_known(const struct cgtrace_doc *d, uint64_t id)
{
	return find(d, id) >= 0;
}

static int add_stack(struct cgtrace_doc *d, const struct cg_rec_memory *m, uint64_t rec,
                     uint32_t *out)
{
	if (d->stacks.len >= UINT32_MAX - 1)
		return -E2BIG;
	size_t n = m->n_stack_frames;
	uint64_t *frames = cg_arena_alloc(&d->stack_mem, n * sizeof(*frames));
	struct cg_doc_stack *s = frames ? CG_VEC_PUSH(&d->stacks, struct cg_doc_stack) : NULL;
	if (!s)
		return -ENOMEM;
	memcpy(frames, m->stack_frames, n * sizeof(*frames));
	*s = (struct cg_doc_stack){
	    .s = {.id = m->stack, .frames = frames, .n_frames = n, .defined_ns = m->timestamp_ns},
	    .rec = rec,
	};
	*out = (uint32_t)d->stacks.len;
	return index_stack(d, m->stack, *out - 1);
}

/* A NUL-terminated copy in the arena; NULL stays NULL. */
static int copy_str(struct cgtrace_doc *d, struct cg_sv s, const char **out)
{
	*out = NULL;
	if (!s.p)
		return 0;
	char *p = cg_arena_alloc(&d->stack_mem, (size_t)s.n + 1);
	if (!p)
		return -ENOMEM;
	memcpy(p, s.p, s.n);
	p[s.n] = '\0';
	*out = p;
	return 0;
}

static int add_modules(struct cgtrace_doc *d, const struct cg_rec_memory *m, uint64_t rec)
{
	for (uint32_t i = 0; i < m->n_modules; i++) {
		const struct cg_modv *v = &m->modules[i];
		struct cg_doc_module o = {
		    .m = {.base = v->base,
		          .start = v->start,
		          .end = v->end,
		          .recorded_ns = m->timestamp_ns},
		    .rec = rec,
		};
		if (copy_str(d, v->path, &o.m.path) < 0 ||
		    copy_str(d, v->build_id, &o.m.build_id) < 0)
			return -ENOMEM;
		struct cg_doc_module *slot = CG_VEC_PUSH(&d->modules, struct cg_doc_module);
		if (!slot)
			return -ENOMEM;
		*slot = o;
	}
	return 0;
}

int cg_doc_stacks_add(struct cgtrace_doc *d, const struct cg_rec_memory *m, uint64_t rec,
                      uint32_t *stack, char *err, size_t errlen)
{
	*stack = 0;
	long at = m->stack ? find(d, m->stack) : -1;
	int r = cg_rule_stack(m, at >= 0, err, errlen);
	if (r < 0)
		return r;
	if (m->n_stack_frames)
		r = add_stack(d, m, rec, stack);
	else if (at >= 0)
		*stack = (uint32_t)at + 1;
	return r < 0 ? r : add_modules(d, m, rec);
}

int cg_doc_stacks_set_mem(struct cgtrace_doc *d, size_t rec, uint32_t stack)
{
	size_t old = d->mem_stacks.len;
	int r = cg_vec_grow(&d->mem_stacks, sizeof(uint32_t), rec + 1);
	if (r < 0)
		return r;
	uint32_t *v = d->mem_stacks.p;
	memset(v + old, 0, (rec + 1 - old) * sizeof(*v));
	v[rec] = stack;
	d->mem_stacks.len = rec + 1;
	return 0;
}

uint32_t cg_doc_mem_stack(const struct cgtrace_doc *d, size_t i)
{
	return i < d->mem_stacks.len ? ((const uint32_t *)d->mem_stacks.p)[i] : 0;
}

void cg_doc_stacks_free(struct cgtrace_doc *d)
{
	cg_vec_free(&d->stacks, sizeof(struct cg_doc_stack));
	cg_vec_free(&d->modules, sizeof(struct cg_doc_module));
	cg_vec_free(&d->mem_stacks, sizeof(uint32_t));
	cg_map_free(&d->stack_by_id);
	cg_vec_free(&d->stack_dense, sizeof(uint32_t));
	cg_arena_fini(&d->stack_mem);
}

CG_EXPORT size_t cgtrace_doc_stack_count(const struct cgtrace_doc *d)
{
	return d->stacks.len;
}

CG_EXPORT const struct cgtrace_stack *cgtrace_doc_stack(const struct cgtrace_doc *d, uint64_t id)
{
	long at = id ? find(d, id) : -1;
	return at < 0 ? NULL : &CG_VEC_AT(&d->stacks, struct cg_doc_stack, at)->s;
}

CG_EXPORT const struct cgtrace_stack *cgtrace_doc_stack_at(const struct cgtrace_doc *d, size_t i)
{
	return i < d->stacks.len ? &CG_VEC_AT(&d->stacks, struct cg_doc_stack, i)->s : NULL;
}

CG_EXPORT size_t cgtrace_doc_module_count(const struct cgtrace_doc *d)
{
	return d->modules.len;
}

CG_EXPORT const struct cgtrace_module *cgtrace_doc_module(const struct cgtrace_doc *d, size_t i)
{
	return i < d->modules.len ? &CG_VEC_AT(&d->modules, struct cg_doc_module, i)->m : NULL;
}

/* SPDX-License-Identifier: MIT */
/*
 * The stack table and the module list. Stacks are kept as a tree, a node
 * per frame on its parent (docs/stacks.md), so memory is the trace's
 * definitions, never a record's and never a whole stack per id: a torch
 * run's 603 k stacks of 32 frames are 2.8 M nodes. The public views, each
 * stack's frames in one array, are made only when asked for.
 */
#include "doc_stacks.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "doc.h"
#include "doc_pycodes.h"
#include "doc_rules.h"
#include "export.h"
#include "stack_ids.h"

static long find(const struct cgtrace_doc *d, uint64_t id)
{
	return cg_stack_ids_find(d, id);
}

int cg_doc_stacks_skipped(struct cgtrace_doc *d, uint64_t first, uint64_t last)
{
	return cg_stack_ids_put_skipped(d, first, last);
}

bool cg_doc_stack_known(const struct cgtrace_doc *d, uint64_t id)
{
	return cg_stack_ids_known(d, id);
}

static uint32_t node_at(const struct cgtrace_doc *d, uint32_t i)
{
	return ((const uint32_t *)d->stack_nodes.p)[i];
}

static uint64_t node_frame(const struct cgtrace_doc *d, uint32_t i)
{
	return ((const uint64_t *)d->stack_addrs.p)[node_at(d, i) & ~CG_NODE_FIRST];
}

/* Node i's parent: its index + 1, 0 for none. */
static uint32_t node_parent(const struct cgtrace_doc *d, uint32_t i)
{
	return node_at(d, i) & CG_NODE_FIRST ? node_at(d, i - 1) : i;
}

/* The index of address in stack_addrs, added when new; -ENOMEM. */
static long addr_index(struct cgtrace_doc *d, uint64_t addr)
{
	uint32_t pos = UINT32_MAX, val;
	while (cg_map_next(&d->stack_addr_map, addr, &pos, &val))
		if (((const uint64_t *)d->stack_addrs.p)[val] == addr)
			return val;
	uint64_t *slot = CG_VEC_PUSH(&d->stack_addrs, uint64_t);
	if (!slot)
		return -ENOMEM;
	*slot = addr;
	val = (uint32_t)d->stack_addrs.len - 1;
	return cg_map_put(&d->stack_addr_map, addr, val) < 0 ? -ENOMEM : (long)val;
}

/* The number of frames of stack id (0: not defined). */
static uint32_t depth_of(const struct cgtrace_doc *d, uint64_t id)
{
	const struct cg_stack_def *def;
	long v = id ? cg_stack_ids_find_def(d, id, &def) : -1;
	if (v < 0)
		return 0;
	if (d->stacks_light)
		return (uint32_t)v;
	if (!def)
		def = cg_doc_node_def(d, (uint32_t)v + 1);
	/* A tree's nodes run on from its parent's depth; a flat one's id is its last node. */
	return def->tree ? def->base + (uint32_t)v - def->first_node + 1 : def->n;
}

#define FAIL(...) (snprintf(err, errlen, __VA_ARGS__), -EBADMSG)

/*
 * The rules of a tree definition (docs/stacks.md): its n ids all new, the
 * first of them 1 or more, its parent defined before and the frames 1024
 * at most in all. *parent_depth: the parent's frames.
 */
static int tree_rules(const struct cgtrace_doc *d, const struct cg_rec_memory *m,
		      uint32_t *parent_depth, char *err, size_t errlen)
{
	uint64_t id = m->stack, n = m->n_stack_frames, p = m->cgprobe_stack_parent;
	if (id < n)
		return FAIL("stack %llu with %llu new frames: its stacks would start below 1",
			    (unsigned long long)id, (unsigned long long)n);
	/* In id order, ids past the last defined are new: no lookup each. */
	uint64_t first = id - n + 1;
	bool fresh = cg_stack_ids_all_new(d, first);
	for (uint64_t k = first; !fresh && k < id; k++)
		if (find(d, k) >= 0)
			return FAIL("stack %llu defined twice", (unsigned long long)k);
	*parent_depth = p ? depth_of(d, p) : 0;
	if (p && !*parent_depth)
		return FAIL("stack %llu not defined", (unsigned long long)p);
	if (*parent_depth + n > CG_STACK_FRAMES_MAX)
		return FAIL("stack %llu has more than %u frames", (unsigned long long)id,
			    CG_STACK_FRAMES_MAX);
	return 0;
}

/* A light document's definition: each id's depth, nothing else. */
static int add_light(struct cgtrace_doc *d, const struct cg_rec_memory *m, uint32_t parent_depth)
{
	uint32_t n = m->n_stack_frames;
	if (!m->has_stack_parent) {
		d->n_stack_ids++;
		return cg_stack_ids_put_depths(d, m->stack, 1, n);
	}
	d->n_stack_ids += n;
	return cg_stack_ids_put_depths(d, m->stack - n + 1, n, parent_depth + 1);
}

/*
 * A definition's nodes, outermost first (the frames are innermost first),
 * and its ids: every node of a tree definition, the last of a flat one.
 */
static int add_nodes(struct cgtrace_doc *d, const struct cg_rec_memory *m, uint64_t rec,
		     uint32_t parent_depth, uint32_t *out)
{
	uint32_t n = m->n_stack_frames;
	uint64_t first = m->has_stack_parent ? m->stack - n + 1 : m->stack;
	uint32_t parent = m->cgprobe_stack_parent ? (uint32_t)find(d, m->cgprobe_stack_parent) + 1
						  : 0;
	/* Frame indices stay below it too: a node adds an address at most. */
	if (d->stack_nodes.len + n + 1 >= CG_NODE_FIRST || d->stack_defs.len >= UINT32_MAX - 1)
		return -E2BIG;
	struct cg_stack_def *def = CG_VEC_PUSH(&d->stack_defs, struct cg_stack_def);
	if (!def || cg_vec_grow(&d->stack_nodes, sizeof(uint32_t), d->stack_nodes.len + n + 1) < 0)
		return -ENOMEM;
	uint32_t *nodes = d->stack_nodes.p;
	nodes[d->stack_nodes.len++] = parent;
	if (rec != UINT64_MAX) {
		size_t i = d->stack_defs.len - 1, old = d->stack_def_recs.len;
		if (cg_vec_grow(&d->stack_def_recs, sizeof(uint64_t), i + 1) < 0)
			return -ENOMEM;
		uint64_t *recs = d->stack_def_recs.p;
		for (size_t k = old; k < i; k++)
			recs[k] = UINT64_MAX;
		recs[i] = rec;
		d->stack_def_recs.len = i + 1;
	}
	*def = (struct cg_stack_def){
	    .ns = m->timestamp_ns,
	    .first_id = first,
	    .first_node = (uint32_t)d->stack_nodes.len,
	    .n = n,
	    .tree = m->has_stack_parent,
	    .base = m->has_stack_parent ? parent_depth : 0,
	};
	for (uint32_t k = n; k-- > 0;) {
		long frame = addr_index(d, m->stack_frames[k]);
		if (frame < 0)
			return -ENOMEM;
		uint32_t at = (uint32_t)d->stack_nodes.len++;
		nodes[at] = (uint32_t)frame | (k + 1 == n ? CG_NODE_FIRST : 0);
		parent = at + 1;
	}
	d->n_stack_ids += m->stack - first + 1;
	*out = parent;
	return cg_stack_ids_add_def(d, (uint32_t)d->stack_defs.len - 1);
}

int cg_doc_copy_sv(struct cgtrace_doc *d, struct cg_sv s, const char **out)
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
		if (cg_doc_copy_sv(d, v->path, &o.m.path) < 0 ||
		    cg_doc_copy_sv(d, v->build_id, &o.m.build_id) < 0)
			return -ENOMEM;
		struct cg_doc_module *slot = CG_VEC_PUSH(&d->modules, struct cg_doc_module);
		if (!slot)
			return -ENOMEM;
		*slot = o;
	}
	return 0;
}

/*
 * A document that skips stack blocks unread (CGTRACE_READ_SKIP_STACKS)
 * keeps only the ranges of ids defined, so a definition's ids join them
 * too: an id named must be in one, a parent too; what needs the ids
 * defined one by one (defined twice) or their depths goes unchecked.
 */
static int add_skipping(struct cgtrace_doc *d, const struct cg_rec_memory *m, char *err,
			size_t errlen)
{
	uint64_t id = m->stack, n = m->n_stack_frames, p = m->cgprobe_stack_parent;
	int r = cg_rule_stack(m, !n && cg_stack_ids_known(d, id), err, errlen);
	if (r < 0 || !n)
		return r;
	if (m->has_stack_parent && id < n)
		return FAIL("stack %llu with %llu new frames: its stacks would start below 1",
			    (unsigned long long)id, (unsigned long long)n);
	if (m->has_stack_parent && p && !cg_stack_ids_known(d, p))
		return FAIL("stack %llu not defined", (unsigned long long)p);
	return cg_stack_ids_put_skipped(d, m->has_stack_parent ? id - n + 1 : id, id);
}

int cg_doc_stacks_add(struct cgtrace_doc *d, const struct cg_rec_memory *m, uint64_t rec,
                      uint32_t *stack, char *err, size_t errlen)
{
	*stack = 0;
	int rc = m->n_py_codes ? cg_doc_py_codes_add(d, m, rec, err, errlen) : 0;
	if (rc < 0)
		return rc;
	if (m->n_stack_frames && m->stack_frames &&
	    (rc = cg_doc_py_frames_check(d, m->stack, m->stack_frames, m->n_stack_frames, err,
					 errlen)) < 0)
		return rc;
	if (d->stacks_skip) {
		rc = add_skipping(d, m, err, errlen);
		return rc < 0 ? rc : add_modules(d, m, rec);
	}
	long at = !m->stack ? -1 : d->stacks_light ? (cg_stack_ids_known(d, m->stack) ? 0 : -1)
						 : find(d, m->stack);
	int r = cg_rule_stack(m, at >= 0, err, errlen);
	if (r < 0)
		return r;
	uint32_t parent_depth = 0;
	if (m->has_stack_parent && (r = tree_rules(d, m, &parent_depth, err, errlen)) < 0)
		return r;
	if (m->n_stack_frames && d->stacks_light)
		r = add_light(d, m, parent_depth);
	else if (m->n_stack_frames)
		r = add_nodes(d, m, rec, parent_depth, stack);
	else if (at >= 0 && !d->stacks_light)
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

const struct cg_stack_def *cg_doc_node_def(const struct cgtrace_doc *d, uint32_t node)
{
	/* The last definition whose first node is at or before it. */
	size_t lo = 0, hi = d->stack_defs.len;
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;
		if (CG_VEC_AT(&d->stack_defs, struct cg_stack_def, mid)->first_node <= node - 1)
			lo = mid;
		else
			hi = mid;
	}
	return CG_VEC_AT(&d->stack_defs, struct cg_stack_def, lo);
}

uint64_t cg_doc_def_rec(const struct cgtrace_doc *d, const struct cg_stack_def *def)
{
	size_t i = (size_t)(def - (const struct cg_stack_def *)d->stack_defs.p);
	return i < d->stack_def_recs.len ? ((const uint64_t *)d->stack_def_recs.p)[i] : UINT64_MAX;
}

uint64_t cg_doc_node_parent_id(const struct cgtrace_doc *d, uint32_t node)
{
	const struct cg_stack_def *def = cg_doc_node_def(d, node);
	return cg_doc_node_id(d, node_parent(d, def->first_node));
}

uint64_t cg_doc_node_id(const struct cgtrace_doc *d, uint32_t node)
{
	if (!node)
		return 0;
	const struct cg_stack_def *def = cg_doc_node_def(d, node);
	uint32_t k = node - 1 - def->first_node;
	if (def->tree)
		return def->first_id + k;
	return k + 1 == def->n ? def->first_id : 0;
}

size_t cg_doc_node_frames(const struct cgtrace_doc *d, uint32_t node, uint64_t *out, size_t max)
{
	size_t n = 0;
	for (uint32_t i = node; i; i = node_parent(d, i - 1), n++)
		if (n < max)
			out[n] = node_frame(d, i - 1);
	return n;
}

void cg_doc_stacks_free(struct cgtrace_doc *d)
{
	cg_doc_py_codes_free(d);
	cg_vec_free(&d->stack_nodes, sizeof(uint32_t));
	cg_vec_free(&d->stack_addrs, sizeof(uint64_t));
	cg_map_free(&d->stack_addr_map);
	cg_vec_free(&d->stack_defs, sizeof(struct cg_stack_def));
	cg_vec_free(&d->stack_def_recs, sizeof(uint64_t));
	cg_vec_free(&d->stack_def_ids, sizeof(uint32_t));
	cg_vec_free(&d->stack_views, sizeof(struct cgtrace_stack *));
	cg_map_free(&d->stack_view_map);
	cg_vec_free(&d->modules, sizeof(struct cg_doc_module));
	cg_vec_free(&d->mem_stacks, sizeof(uint32_t));
	cg_stack_ids_free(d);
	cg_arena_fini(&d->stack_mem);
}

/*
 * The public view of node (index + 1), made once and kept: a const
 * document's cache, so its making is serialised for readers on several
 * threads.
 */
static const struct cgtrace_stack *view_of(const struct cgtrace_doc *cd, uint32_t node)
{
	struct cgtrace_doc *d = (struct cgtrace_doc *)cd;
	while (atomic_flag_test_and_set_explicit(&d->stack_lock, memory_order_acquire))
		;
	const struct cgtrace_stack *out = NULL;
	uint32_t pos = UINT32_MAX, val;
	if (cg_map_next(&d->stack_view_map, node, &pos, &val)) {
		out = *CG_VEC_AT(&d->stack_views, struct cgtrace_stack *, val);
		goto done;
	}
	size_t n = cg_doc_node_frames(d, node, NULL, 0);
	struct cgtrace_stack *s = cg_arena_alloc(&d->stack_mem, sizeof(*s));
	uint64_t *frames = cg_arena_alloc(&d->stack_mem, n * sizeof(*frames));
	struct cgtrace_stack **slot =
	    s && frames ? CG_VEC_PUSH(&d->stack_views, struct cgtrace_stack *) : NULL;
	if (!slot)
		goto done;
	cg_doc_node_frames(d, node, frames, n);
	*s = (struct cgtrace_stack){.id = cg_doc_node_id(d, node), .frames = frames, .n_frames = n,
				    .defined_ns = cg_doc_node_def(d, node)->ns};
	*slot = s;
	if (cg_map_put(&d->stack_view_map, node, (uint32_t)d->stack_views.len - 1) < 0) {
		d->stack_views.len--;
		goto done;
	}
	out = s;
done:
	atomic_flag_clear_explicit(&d->stack_lock, memory_order_release);
	return out;
}

CG_EXPORT size_t cgtrace_doc_stack_count(const struct cgtrace_doc *d)
{
	return (size_t)d->n_stack_ids;
}

CG_EXPORT const struct cgtrace_stack *cgtrace_doc_stack(const struct cgtrace_doc *d, uint64_t id)
{
	long at = id && !d->stacks_light ? find(d, id) : -1;
	return at < 0 ? NULL : view_of(d, (uint32_t)at + 1);
}

/*
 * The ids defined before each definition, made on the first call (few
 * readers walk the table by position): NULL when out of memory.
 */
static const uint32_t *ids_before(const struct cgtrace_doc *cd)
{
	struct cgtrace_doc *d = (struct cgtrace_doc *)cd;
	while (atomic_flag_test_and_set_explicit(&d->stack_lock, memory_order_acquire))
		;
	if (d->stack_def_ids.len != d->stack_defs.len &&
	    cg_vec_grow(&d->stack_def_ids, sizeof(uint32_t), d->stack_defs.len) == 0) {
		uint32_t *v = d->stack_def_ids.p, n = 0;
		for (size_t i = 0; i < d->stack_defs.len; i++) {
			const struct cg_stack_def *def = CG_VEC_AT(&d->stack_defs, struct cg_stack_def, i);
			v[i] = n;
			n += def->tree ? def->n : 1;
		}
		d->stack_def_ids.len = d->stack_defs.len;
	}
	const uint32_t *out = d->stack_def_ids.len == d->stack_defs.len ? d->stack_def_ids.p : NULL;
	atomic_flag_clear_explicit(&d->stack_lock, memory_order_release);
	return out;
}

CG_EXPORT const struct cgtrace_stack *cgtrace_doc_stack_at(const struct cgtrace_doc *d, size_t i)
{
	if (i >= d->n_stack_ids || d->stacks_light)
		return NULL;
	const uint32_t *before = ids_before(d);
	if (!before)
		return NULL;
	/* The definition holding the i-th id: the last that starts at or before it. */
	size_t lo = 0, hi = d->stack_defs.len;
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;
		if (before[mid] <= i)
			lo = mid;
		else
			hi = mid;
	}
	const struct cg_stack_def *def = CG_VEC_AT(&d->stack_defs, struct cg_stack_def, lo);
	uint64_t k = i - before[lo];
	return view_of(d, def->tree ? def->first_node + (uint32_t)k + 1 : def->first_node + def->n);
}

CG_EXPORT size_t cgtrace_doc_stack_frames(const struct cgtrace_doc *d, uint64_t id,
					  uint64_t *frames, size_t max, uint64_t *defined_ns)
{
	long at = id && !d->stacks_light ? find(d, id) : -1;
	if (at < 0)
		return 0;
	if (defined_ns)
		*defined_ns = cg_doc_node_def(d, (uint32_t)at + 1)->ns;
	return cg_doc_node_frames(d, (uint32_t)at + 1, frames, max);
}

CG_EXPORT size_t cgtrace_doc_module_count(const struct cgtrace_doc *d)
{
	return d->modules.len;
}

CG_EXPORT const struct cgtrace_module *cgtrace_doc_module(const struct cgtrace_doc *d, size_t i)
{
	return i < d->modules.len ? &CG_VEC_AT(&d->modules, struct cg_doc_module, i)->m : NULL;
}

/* SPDX-License-Identifier: MIT */
/*
 * The largest allocations of a trace, kept one by one with their
 * lifetimes: a heap of at most max, the least on top, so that each alloc
 * costs a comparison unless it is among the largest so far. Frees find
 * their allocation by its live-table entry, which is unique while it lives.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cgtrace.h"
#include "doc.h"
#include "memory_stream.h"
#include "view_build.h"

int cg_vallocs_init(struct cg_vallocs *a, size_t max)
{
	memset(a, 0, sizeof(*a));
	a->max = max;
	a->slot = calloc(max ? max : 1, sizeof(*a->slot));
	a->heap = calloc(max ? max : 1, sizeof(*a->heap));
	return a->slot && a->heap ? 0 : -ENOMEM;
}

static void strings_free(struct cgtrace_view_alloc *x)
{
	free((char *)x->tensor_id);
	x->tensor_id = NULL;
}

void cg_vallocs_fini(struct cg_vallocs *a)
{
	for (size_t i = 0; i < a->n; i++)
		strings_free(&a->slot[i].a);
	free(a->slot);
	free(a->heap);
	cg_vec_free(&a->slot_of, sizeof(uint32_t));
	cg_param_ranges_free(&a->params);
	memset(a, 0, sizeof(*a));
}

/* x ranks below y: fewer bytes, or as many and later (the earlier first among equals). */
static bool below(const struct cgtrace_view_alloc *x, const struct cgtrace_view_alloc *y)
{
	return x->bytes != y->bytes ? x->bytes < y->bytes : x->alloc_ns > y->alloc_ns;
}

static bool heap_below(const struct cg_vallocs *a, size_t i, size_t j)
{
	return below(&a->slot[a->heap[i]].a, &a->slot[a->heap[j]].a);
}

static void swap(uint32_t *h, size_t i, size_t j)
{
	uint32_t t = h[i];
	h[i] = h[j];
	h[j] = t;
}

static void sift_up(struct cg_vallocs *a, size_t i)
{
	while (i && heap_below(a, i, (i - 1) / 2)) {
		swap(a->heap, i, (i - 1) / 2);
		i = (i - 1) / 2;
	}
}

static void sift_down(struct cg_vallocs *a, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;
		if (l < a->n && heap_below(a, l, m))
			m = l;
		if (r < a->n && heap_below(a, r, m))
			m = r;
		if (m == i)
			return;
		swap(a->heap, i, m);
		i = m;
	}
}

static uint32_t *slot_of(struct cg_vallocs *a, uint32_t entry, bool make)
{
	if (entry >= a->slot_of.len) {
		if (!make)
			return NULL;
		if (cg_vec_grow(&a->slot_of, sizeof(uint32_t), (size_t)entry + 1) < 0)
			return NULL;
		memset((uint32_t *)a->slot_of.p + a->slot_of.len, 0,
		       ((size_t)entry + 1 - a->slot_of.len) * sizeof(uint32_t));
		a->slot_of.len = (size_t)entry + 1;
	}
	return CG_VEC_AT(&a->slot_of, uint32_t, entry);
}

/* The kept allocation of entry, no longer tracked by it; NULL when none. */
static struct cg_vslot *untrack(struct cg_vallocs *a, uint32_t entry)
{
	uint32_t *s = entry == UINT32_MAX ? NULL : slot_of(a, entry, false);
	if (!s || !*s)
		return NULL;
	struct cg_vslot *x = &a->slot[*s - 1];
	*s = 0;
	x->entry = UINT32_MAX;
	return x;
}

static char *dup_n(const char *s, size_t n)
{
	char *d = malloc(n + 1);
	if (d) {
		memcpy(d, s, n);
		d[n] = '\0';
	}
	return d;
}

static int keep(struct cg_view_build *b, const struct cg_vrec *r, const struct cgtrace_view_alloc *c)
{
	struct cg_vallocs *a = &b->allocs;
	bool full = a->n == a->max;
	uint32_t k;
	if (!full) {
		k = (uint32_t)a->n;
		a->heap[a->n++] = k;
	} else {
		k = a->heap[0];
		untrack(a, a->slot[k].entry);
		strings_free(&a->slot[k].a);
	}
	struct cg_vslot *x = &a->slot[k];
	x->a = *c;
	char buf[24];
	struct cg_sv id = {r->tensor_id ? r->tensor_id : "", (uint32_t)r->tensor_id_len};
	if (!r->tensor_id && r->seen)
		id = cg_stream_id(r->seen, buf);
	x->a.tensor_id = dup_n(id.p, id.n);
	x->cls = r->cls;
	x->entry = r->entry;
	uint32_t *s = slot_of(a, r->entry, true);
	if (!s || !x->a.tensor_id)
		return -ENOMEM;
	*s = k + 1;
	if (full)
		sift_down(a, 0);
	else
		sift_up(a, a->n - 1);
	return 0;
}

int cg_vallocs_record(struct cg_view_build *b, const struct cg_vrec *r)
{
	struct cg_vallocs *a = &b->allocs;
	if (r->action == CGTRACE_FREE) {
		struct cg_vslot *x = untrack(a, r->entry);
		if (x) {
			x->a.freed = true;
			x->a.free_ns = r->ts;
		}
		return 0;
	}
	/* What this alloc replaced stays live to the end: its bytes were never taken back. */
	untrack(a, r->replaced);
	if (!a->max || r->entry == UINT32_MAX)
		return 0;
	/* device: the document's number until the end names the view's. */
	struct cgtrace_view_alloc c = {
		.alloc_ns = r->ts,
		.bytes = r->bytes,
		.device = r->dev,
		.category = r->category,
		.stack_id = r->stack,
	};
	if (a->n == a->max && !below(&a->slot[a->heap[0]].a, &c))
		return 0;
	return keep(b, r, &c);
}

int cg_vallocs_mark(struct cg_vallocs *a, const uint64_t *pairs, size_t n)
{
	int r = cg_param_ranges_add(&a->params, pairs, n);
	for (size_t k = 0; r == 0 && k < a->n; k++) {
		struct cg_vslot *x = &a->slot[k];
		uint64_t addr;
		if (x->entry != UINT32_MAX && x->a.category != CGTRACE_CAT_PARAMETER &&
		    cg_param_addr(x->a.tensor_id, &addr) &&
		    cg_param_ranges_has(&a->params, addr, x->a.bytes))
			x->a.category = CGTRACE_CAT_PARAMETER;
	}
	return r;
}

static int alloc_cmp(const void *x, const void *y)
{
	const struct cgtrace_view_alloc *a = x, *b = y;
	return below(b, a) ? -1 : below(a, b) ? 1 : 0;
}

/*
 * An allocation is live at a bucket's highest instant t: made by then and
 * not yet freed. A maximum reached by a record at t follows every alloc at
 * t (allocs sort first) and precedes every free; a maximum carried in from
 * before the bucket's first record (carried) precedes the records at t.
 */
static bool live_at(const struct cgtrace_view_alloc *a, uint64_t t, bool carried)
{
	if (carried)
		return a->alloc_ns < t && (!a->freed || a->free_ns >= t);
	return a->alloc_ns <= t && (!a->freed || a->free_ns > t);
}

/* The bucket's maximum is what was live when it began: no record of its own raised it. */
static bool carried_in(const struct cgtrace_view_bucket *bk, size_t k)
{
	return bk[k].max_bytes == (k ? bk[k - 1].end_bytes : 0);
}

int cg_vallocs_finish(struct cg_view_build *b, const struct cgtrace_doc *doc,
		      const size_t *dev_index)
{
	struct cgtrace_view *v = b->v;
	struct cg_vallocs *a = &b->allocs;
	struct cgtrace_view_alloc *out = calloc(a->n ? a->n : 1, sizeof(*out));
	if (!out)
		return -ENOMEM;
	size_t n = 0;
	for (size_t i = 0; i < a->n; i++) {
		struct cg_vslot *x = &a->slot[i];
		const struct cg_mem_class *c = cg_doc_class(doc, x->cls);
		/* The strings move to the view; the document's are settled now. */
		out[n] = x->a;
		x->a.tensor_id = NULL;
		if (dev_index[out[n].device] == SIZE_MAX) {
			free((char *)out[n].tensor_id);
			continue;
		}
		out[n].device = dev_index[out[n].device];
		out[n].span_id = cg_doc_str(doc, c->span_id);
		out[n].op_name = c->op_name == CG_STR_NONE ? NULL : cg_doc_str(doc, c->op_name);
		out[n].preexisting = c->preexisting;
		n++;
	}
	qsort(out, n, sizeof(*out), alloc_cmp);
	v->allocs = out;
	v->n_allocs = n;
	v->alloc_live = calloc(n ? n : 1, sizeof(*v->alloc_live));
	if (!v->alloc_live)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		const struct cgtrace_view_alloc *x = &out[i];
		const struct cgtrace_view_device *dev = &v->devices[x->device];
		struct cgtrace_view_bucket *bk = dev->buckets;
		struct cgtrace_view_alloc_live *l = &v->alloc_live[i];
		size_t to = x->freed ? cgtrace_view_bucket_of(v, x->free_ns) : v->n_buckets - 1;
		/* Live from some bucket to some later one: every bucket between holds it whole. */
		for (size_t k = cgtrace_view_bucket_of(v, x->alloc_ns); k <= to; k++)
			if (live_at(x, bk[k].max_ns, carried_in(bk, k))) {
				bk[k].drawn_bytes += x->bytes;
				bk[k].drawn_count++;
				if (l->first_bucket == l->end_bucket)
					l->first_bucket = k;
				l->end_bucket = k + 1;
			}
		l->at_peak = live_at(x, dev->peak_ns, false);
	}
	/* Equal timestamps may order an allocation's record after the maximum it shares. */
	for (size_t d = 0; d < v->n_devices; d++)
		for (size_t k = 0; k < v->n_buckets; k++) {
			struct cgtrace_view_bucket *x = &v->devices[d].buckets[k];
			if (x->drawn_bytes > x->max_bytes)
				x->drawn_bytes = x->max_bytes;
			if (x->drawn_count > x->max_live_count)
				x->drawn_count = x->max_live_count;
		}
	return 0;
}

/* SPDX-License-Identifier: MIT */
/*
 * What each span's memory records allocated and freed: counted by memory
 * class as records come (an array index, no string touched), summed by the
 * classes' span_id at the end.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cgtrace.h"
#include "doc.h"
#include "sat.h"
#include "view_build.h"

int cg_vspans_record(struct cg_view_build *b, const struct cg_vrec *r)
{
	if (r->cls >= b->cls.len) {
		size_t old = b->cls.len, want = (size_t)r->cls + 64;
		if (cg_vec_grow(&b->cls, sizeof(struct cg_vcls), want) < 0)
			return -ENOMEM;
		memset(CG_VEC_AT(&b->cls, struct cg_vcls, old), 0, (want - old) * sizeof(struct cg_vcls));
		b->cls.len = want;
	}
	struct cg_vcls *c = CG_VEC_AT(&b->cls, struct cg_vcls, r->cls);
	if (r->action == CGTRACE_ALLOC) {
		c->alloc_count++;
		c->alloc_bytes = cg_sat_add(c->alloc_bytes, r->bytes);
	} else {
		c->free_count++;
		c->free_bytes = cg_sat_add(c->free_bytes, r->bytes);
	}
	return 0;
}

/* By span_id's pool id while summing; then bytewise by the string. */
static int by_pool_id(const void *x, const void *y)
{
	const struct cgtrace_view_span_memory *a = x, *b = y;
	return a->span_id < b->span_id ? -1 : a->span_id > b->span_id;
}

static int by_name(const void *x, const void *y)
{
	const struct cgtrace_view_span_memory *a = x, *b = y;
	return strcmp(a->span_id, b->span_id);
}

int cg_vspans_finish(struct cg_view_build *b, const struct cgtrace_doc *doc)
{
	struct cgtrace_view *v = b->v;
	size_t n = 0;
	struct cgtrace_view_span_memory *out = calloc(b->cls.len ? b->cls.len : 1, sizeof(*out));
	if (!out)
		return -ENOMEM;
	for (size_t i = 0; i < b->cls.len && i < doc->classes.len; i++) {
		const struct cg_vcls *c = CG_VEC_AT(&b->cls, struct cg_vcls, i);
		if (!c->alloc_count && !c->free_count)
			continue;
		/* The pool id stands in the pointer's place until the classes are summed. */
		out[n++] = (struct cgtrace_view_span_memory){
			.span_id = (const char *)(uintptr_t)cg_doc_class(doc, (uint32_t)i)->span_id,
			.alloc_count = c->alloc_count,
			.alloc_bytes = c->alloc_bytes,
			.free_count = c->free_count,
			.free_bytes = c->free_bytes,
		};
	}
	qsort(out, n, sizeof(*out), by_pool_id);
	size_t m = 0;
	for (size_t i = 0; i < n; i++) {
		if (m && out[m - 1].span_id == out[i].span_id) {
			struct cgtrace_view_span_memory *t = &out[m - 1];
			t->alloc_count += out[i].alloc_count;
			t->alloc_bytes = cg_sat_add(t->alloc_bytes, out[i].alloc_bytes);
			t->free_count += out[i].free_count;
			t->free_bytes = cg_sat_add(t->free_bytes, out[i].free_bytes);
		} else {
			out[m++] = out[i];
		}
	}
	for (size_t i = 0; i < m; i++)
		out[i].span_id = cg_doc_str(doc, (uint32_t)(uintptr_t)out[i].span_id);
	qsort(out, m, sizeof(*out), by_name);
	v->spans = out;
	v->n_spans = m;
	return 0;
}

void cg_vspans_fini(struct cg_view_build *b)
{
	cg_vec_free(&b->cls, sizeof(struct cg_vcls));
}

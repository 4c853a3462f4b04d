/* SPDX-License-Identifier: MIT */
/* What each span's memory records allocated and freed, by the records' span_id. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cgtrace.h"
#include "sat.h"
#include "view_build.h"

int cg_vspans_record(struct cg_view_build *b, const struct cg_vrec *r)
{
	const char *id = r->span_id ? r->span_id : "";
	uint32_t k = cg_strpool_intern(&b->pool, (struct cg_sv){id, (uint32_t)strlen(id)});
	if (b->pool.err)
		return -ENOMEM;
	if (k >= b->spans.len) {
		if (cg_vec_grow(&b->spans, sizeof(struct cg_vspan), (size_t)k + 1) < 0)
			return -ENOMEM;
		memset(CG_VEC_AT(&b->spans, struct cg_vspan, b->spans.len), 0,
		       ((size_t)k + 1 - b->spans.len) * sizeof(struct cg_vspan));
		b->spans.len = (size_t)k + 1;
	}
	struct cg_vspan *s = CG_VEC_AT(&b->spans, struct cg_vspan, k);
	s->name = k;
	struct cgtrace_view_span_memory *m = &s->m;
	if (r->p->action == CGTRACE_ALLOC) {
		m->alloc_count++;
		m->alloc_bytes = cg_sat_add(m->alloc_bytes, r->p->bytes);
	} else {
		m->free_count++;
		m->free_bytes = cg_sat_add(m->free_bytes, r->p->bytes);
	}
	return 0;
}

static int span_cmp(const void *x, const void *y)
{
	const struct cgtrace_view_span_memory *a = x, *b = y;
	return strcmp(a->span_id, b->span_id);
}

int cg_vspans_finish(struct cg_view_build *b, const struct cgtrace_doc *doc)
{
	(void)doc;
	struct cgtrace_view *v = b->v;
	size_t n = 0;
	struct cgtrace_view_span_memory *out = calloc(b->spans.len ? b->spans.len : 1, sizeof(*out));
	if (!out)
		return -ENOMEM;
	for (size_t i = 0; i < b->spans.len; i++) {
		const struct cg_vspan *s = CG_VEC_AT(&b->spans, struct cg_vspan, i);
		if (!s->name)
			continue;
		/* The pool no longer grows: its strings stay where they are. */
		out[n] = s->m;
		out[n++].span_id = cg_strpool_get(&b->pool, s->name);
	}
	qsort(out, n, sizeof(*out), span_cmp);
	v->spans = out;
	v->n_spans = n;
	return 0;
}

void cg_vspans_fini(struct cg_view_build *b)
{
	cg_vec_free(&b->spans, sizeof(struct cg_vspan));
}

/* SPDX-License-Identifier: MIT */
/* A document's life: made empty, filled by doc_build.c, finished, freed. */
#include "doc_life.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "doc.h"
#include "doc_build.h"
#include "doc_rules.h"
#include "doc_stacks.h"
#include "export.h"

struct cgtrace_doc *cg_doc_new(void)
{
	struct cgtrace_doc *d = calloc(1, sizeof(*d));
	if (!d)
		return NULL;
	d->build = cg_build_new();
	if (!d->build) {
		free(d);
		return NULL;
	}
	cg_strpool_init(&d->pool);
	cg_arena_init(&d->stack_mem);
	/* Shape ids 0 and 1 are reserved for [] and [bytes]. */
	if (cg_vec_grow(&d->shapes, sizeof(uint64_t), 2) == 0) {
		((uint64_t *)d->shapes.p)[0] = 0;
		((uint64_t *)d->shapes.p)[1] = 0;
		d->shapes.len = 2;
	}
	/* Offset 0 of str_lists is the empty list. */
	uint32_t *empty = CG_VEC_PUSH(&d->str_lists, uint32_t);
	if (empty)
		*empty = 0;
	return d;
}

struct cgtrace_doc *cg_doc_new_streamed(const struct cg_doc_sink_ops *ops, const void *cfg)
{
	struct cgtrace_doc *d = cg_doc_new();
	if (d && ops->open(cfg, d, &d->sink.state) < 0) {
		cgtrace_doc_free(d);
		return NULL;
	}
	if (d)
		d->sink.ops = ops;
	return d;
}

bool cg_doc_out_of_order(const struct cgtrace_doc *d)
{
	return d->sink.ops && d->sink.ops->out_of_order(d->sink.state);
}

CG_EXPORT bool cgtrace_doc_streamed(const struct cgtrace_doc *d)
{
	return cg_doc_streamed(d);
}

CG_EXPORT void cgtrace_doc_free(struct cgtrace_doc *d)
{
	if (!d)
		return;
	if (d->sink.ops)
		d->sink.ops->free(d->sink.state);
	cg_build_free(d->build);
	cg_strpool_fini(&d->pool);
	free(d->meta.tags);
	free(d->str_ptrs);
	cg_vec_free(&d->spans, sizeof(struct cg_span));
	cg_vec_free(&d->ops, sizeof(struct cg_op));
	cg_vec_free(&d->tensors, sizeof(struct cg_tensor));
	cg_vec_free(&d->memory, sizeof(struct cg_mem));
	cg_vec_free(&d->classes, sizeof(struct cg_mem_class));
	cg_vec_free(&d->mem_shapes, sizeof(uint32_t));
	cg_vec_free(&d->devmem, sizeof(struct cg_devmem));
	cg_vec_free(&d->grads, sizeof(struct cg_grad));
	cg_vec_free(&d->edges, sizeof(struct cg_edge));
	cg_vec_free(&d->devinfo, sizeof(struct cg_devinfo));
	cg_vec_free(&d->marks, sizeof(struct cg_doc_mark));
	cg_vec_free(&d->mark_ranges, sizeof(uint64_t));
	cg_vec_free(&d->ranks, sizeof(struct cg_doc_rank));
	cg_vec_free(&d->devices, sizeof(uint32_t));
	cg_vec_free(&d->shapes, sizeof(uint64_t));
	cg_vec_free(&d->str_lists, sizeof(uint32_t));
	cg_doc_stacks_free(d);
	cg_vec_free(&d->exts, sizeof(struct cg_doc_ext));
	free(d);
}

static int tag_cmp(const void *a, const void *b)
{
	const struct cgtrace_tag *x = a, *y = b;
	return strcmp(x->key, y->key);
}

static int span_cmp(const void *a, const void *b, void *doc)
{
	const struct cg_span *x = a, *y = b;
	const struct cgtrace_doc *d = doc;
	return cg_strpool_cmp(&d->pool, x->id, y->id);
}

int cg_doc_finish(struct cgtrace_doc *d, char *err, size_t errlen)
{
	/* The last timestamp group, and the spans started after their memory records. */
	if (d->sink.ops) {
		int r = d->sink.ops->finish(d->sink.state);
		if (r < 0)
			return cg_rule_errno(r, err, errlen);
	}
	cg_build_free(d->build);
	d->build = NULL;
	int r = cg_rule_finish(d, err, errlen);
	if (r < 0)
		return r;
	if (d->spans.len)
		qsort_r(d->spans.p, d->spans.len, sizeof(struct cg_span), span_cmp, d);
	for (size_t i = 0; i < d->meta.n_tags; i++) {
		struct cgtrace_tag *t = &d->meta.tags[i];
		t->key = cg_doc_str(d, (uint32_t)(uintptr_t)t->key);
		t->value = cg_doc_str(d, (uint32_t)(uintptr_t)t->value);
	}
	if (d->meta.n_tags)
		qsort(d->meta.tags, d->meta.n_tags, sizeof(*d->meta.tags), tag_cmp);
	/* The pool no longer moves: op inputs can be handed out as pointer arrays. */
	d->str_ptrs = calloc(d->str_lists.len + 1, sizeof(*d->str_ptrs));
	if (!d->str_ptrs)
		return cg_rule_errno(-ENOMEM, err, errlen);
	const uint32_t *ids = d->str_lists.p;
	for (size_t i = 1; i < d->str_lists.len; i += ids[i] + 1)
		for (uint32_t j = 1; j <= ids[i]; j++)
			d->str_ptrs[i + j] = cg_doc_str(d, ids[i + j]);
	return 0;
}

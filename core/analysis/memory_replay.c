/* SPDX-License-Identifier: MIT */
/*
 * A full document's memory records through the memory analysis, in the
 * analysis order memory_order.c gives: each record's tensor id is its
 * string id (unique per string, so the live table needs no string), its
 * shape and stack as the document keeps them.
 */
#include "memory_replay.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "doc.h"
#include "doc_stacks.h"
#include "doc_view.h"
#include "memory_order.h"
#include "stream_sink.h"
#include "stream_spans.h"

/* An analysis for d, every device made, capacities from all the checkpoints. */
static int replay_open(const struct cgtrace_doc *d, const struct cg_stream_cfg *cfg,
		       struct cg_stream **out)
{
	struct cg_stream_cfg own = {0};
	if (cfg) {
		own = *cfg;
		own.preset = NULL;
	}
	int ret = cg_stream_new(d, &own, out);
	if (ret < 0)
		return ret;
	struct cg_stream *s = *out;
	ret = cg_stream_pooled(s, d->pool.count);
	if (ret == 0)
		ret = cg_stream_spans_of(s, d);
	if (ret == 0)
		ret = cg_stream_devices(s, d->devices.len);
	for (size_t i = 0; ret == 0 && i < d->devmem.len; i++) {
		const struct cg_devmem *m = CG_VEC_AT(&d->devmem, struct cg_devmem, i);
		ret = cg_stream_capacity(s, m->device, m->used_bytes, m->free_bytes);
	}
	if (ret < 0) {
		cg_stream_free(s);
		*out = NULL;
	}
	return ret;
}

/* Record idx as the analysis takes it: an alloc with its shape and stack. */
static struct cg_stream_rec replay_rec(const struct cgtrace_doc *d, size_t idx)
{
	const struct cg_mem *m = CG_VEC_AT(&d->memory, struct cg_mem, idx);
	const struct cg_mem_class *c = cg_doc_class(d, m->cls);
	struct cg_stream_rec g = {
		.ts = m->timestamp_ns,
		.bytes = m->bytes,
		.key = m->tensor_id,
		.index = idx,
		.cls = m->cls,
		.action = c->action,
	};
	if (c->action == CGTRACE_ALLOC) {
		bool other = c->shape_kind == CG_SHAPE_OTHER;
		g.shape = other ? cg_doc_mem_shape(d, idx) : c->shape_kind;
		uint32_t stack = cg_doc_mem_stack(d, idx);
		if (stack)
			g.stack = cg_doc_node_id(d, stack);
	}
	return g;
}

int cg_replay_run(const struct cgtrace_doc *d, const struct cg_stream_cfg *cfg,
		  struct cg_stream **out)
{
	uint32_t *order;
	struct cg_stream *s = NULL;
	int ret = cg_doc_memory_order(d, &order);
	if (ret == 0)
		ret = replay_open(d, cfg, &s);
	for (size_t k = 0; ret == 0 && k < d->memory.len; k++) {
		struct cg_stream_rec g = replay_rec(d, order ? order[k] : k);
		ret = cg_stream_apply_pooled(s, &g);
	}
	free(order);
	if (ret == 0)
		ret = cg_stream_finish(s);
	if (ret == -ECANCELED && s && s->point_ret)
		ret = s->point_ret;
	if (ret != 0) {
		cg_stream_free(s);
		return ret;
	}
	*out = s;
	return 0;
}

int cg_replay_or_stream(const struct cgtrace_doc *d, const struct cg_stream **s,
			struct cg_stream **own)
{
	*own = NULL;
	*s = cg_stream_of(d);
	if (*s)
		return 0;
	int ret = cg_replay_run(d, NULL, own);
	*s = *own;
	return ret;
}

/* ---- one record at a time ---- */

int cg_replay_init(struct cg_replay *r, const struct cgtrace_doc *d,
		   const struct cg_stream_hooks *hooks, void *user)
{
	memset(r, 0, sizeof(*r));
	r->doc = d;
	r->n_dev = d->devices.len;
	const struct cg_stream_cfg cfg = {.hooks = hooks, .hooks_user = user};
	int ret = cg_doc_memory_order(d, &r->order);
	if (ret == 0)
		ret = replay_open(d, hooks ? &cfg : NULL, &r->s);
	if (ret < 0) {
		cg_replay_fini(r);
		return ret;
	}
	r->dev = r->s->devs.p;
	return 0;
}

void cg_replay_fini(struct cg_replay *r)
{
	free(r->order);
	cg_stream_free(r->s);
	memset(r, 0, sizeof(*r));
}

uint16_t cg_replay_step_did(struct cg_replay *r, struct cg_replay_did *did)
{
	const struct cgtrace_doc *d = r->doc;
	size_t idx = r->order ? r->order[r->pos] : r->pos;
	struct cg_stream_rec g = replay_rec(d, idx);
	int ret = cg_stream_apply_pooled(r->s, &g);
	const struct cg_stream_did *x = &r->s->did;
	*did = (struct cg_replay_did){
		.index = idx, .bytes = x->bytes, .category = x->category, .undid = x->undid};
	r->pos = ret < 0 ? d->memory.len : r->pos + 1;
	return cg_doc_class(d, g.cls)->device;
}

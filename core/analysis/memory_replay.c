/* SPDX-License-Identifier: MIT */
/*
 * Replaying memory records in analysis order: live bytes per device and
 * category, which alloc each tensor id's free undoes. Shared by the memory
 * analysis, the summary and the timeline.
 */
#include "memory_replay.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "doc.h"
#include "memory_order.h"
#include "sat.h"

int cg_replay_init(struct cg_replay *r, const struct cgtrace_doc *d)
{
	memset(r, 0, sizeof(*r));
	r->doc = d;
	r->n_dev = d->devices.len;
	int ret = cg_doc_memory_order(d, &r->order);
	if (ret < 0)
		return ret;
	r->dev = calloc(r->n_dev ? r->n_dev : 1, sizeof(*r->dev));
	r->live_of = calloc(d->pool.count ? d->pool.count : 1, sizeof(*r->live_of));
	if (!r->dev || !r->live_of) {
		cg_replay_fini(r);
		return -ENOMEM;
	}
	for (size_t i = 0; i < d->devmem.len; i++) {
		const struct cg_devmem *m = CG_VEC_AT(&d->devmem, struct cg_devmem, i);
		struct cg_replay_dev *dv = &r->dev[m->device];
		uint64_t cap = cg_sat_add(m->used_bytes, m->free_bytes);
		if (cap > dv->capacity)
			dv->capacity = cap;
		dv->has_capacity = true;
		dv->listed = true;
	}
	return 0;
}

void cg_replay_fini(struct cg_replay *r)
{
	free(r->order);
	free(r->dev);
	free(r->live_of);
	r->order = NULL;
	r->dev = NULL;
	r->live_of = NULL;
}

void cg_replay_reset(struct cg_replay *r)
{
	const struct cgtrace_doc *d = r->doc;
	for (size_t i = 0; i < r->n_dev; i++) {
		struct cg_replay_dev *dv = &r->dev[i];
		dv->live = 0;
		memset(dv->by_cat, 0, sizeof(dv->by_cat));
	}
	memset(r->live_of, 0, (d->pool.count ? d->pool.count : 1) * sizeof(*r->live_of));
	r->pos = 0;
}

size_t cg_replay_index(const struct cg_replay *r, size_t k)
{
	return r->order ? r->order[k] : k;
}

uint16_t cg_replay_step_did(struct cg_replay *r, struct cg_replay_did *did)
{
	const struct cgtrace_doc *d = r->doc;
	size_t idx = cg_replay_index(r, r->pos++);
	const struct cg_mem *m = CG_VEC_AT(&d->memory, struct cg_mem, idx);
	const struct cg_mem_class *c = cg_doc_class(d, m->cls);
	struct cg_replay_dev *dv = &r->dev[c->device];
	uint32_t prev = r->live_of[m->tensor_id];
	uint64_t bytes = m->bytes;
	uint8_t cat = c->category;
	*did = (struct cg_replay_did){.index = idx, .undid = prev};

	if (c->action == CGTRACE_ALLOC) {
		r->realloc_live += prev != 0;
		dv->live = cg_sat_add(dv->live, bytes);
		dv->by_cat[cat] = cg_sat_add(dv->by_cat[cat], bytes);
		r->live_of[m->tensor_id] = (uint32_t)idx + 1;
	} else {
		if (prev) {
			const struct cg_mem *a = CG_VEC_AT(&d->memory, struct cg_mem, prev - 1);
			bytes = a->bytes;
			cat = cg_doc_class(d, a->cls)->category;
			r->live_of[m->tensor_id] = 0;
		} else {
			r->unknown_free++;
		}
		dv->live = cg_sat_sub(dv->live, bytes);
		dv->by_cat[cat] = cg_sat_sub(dv->by_cat[cat], bytes);
	}
	did->bytes = bytes;
	did->category = cat;
	return c->device;
}

uint16_t cg_replay_step(struct cg_replay *r)
{
	struct cg_replay_did did;
	return cg_replay_step_did(r, &did);
}

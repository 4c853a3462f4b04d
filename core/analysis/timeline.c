/* SPDX-License-Identifier: MIT */
/* The memory timeline: live bytes of a record's device after each record, in analysis order. */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "cgtrace.h"
#include "doc.h"
#include "export.h"
#include "memory_replay.h"
#include "sat.h"

/* The timeline point of the step that did did; p is filled and returned. */
static const struct cgtrace_timeline_point *replay_point(const struct cg_replay *r,
							 const struct cg_replay_did *did,
							 uint16_t dev, struct cgtrace_timeline_point *p)
{
	const struct cgtrace_doc *d = r->doc;
	const struct cg_replay_dev *dv = &r->dev[dev];
	const struct cg_mem *m = CG_VEC_AT(&d->memory, struct cg_mem, did->index);
	*p = (struct cgtrace_timeline_point){
		.timestamp_ns = m->timestamp_ns,
		.device = cg_doc_str(d, cg_doc_device_str(d, dev)),
		.live_bytes = dv->live,
		.has_free = dv->has_capacity,
		.free_bytes = cg_sat_sub(dv->capacity, dv->live),
		.record = did->index,
		.action = cg_doc_class(d, m->cls)->action,
		.bytes = did->bytes,
		.category = did->category,
	};
	memcpy(p->by_category, dv->by_cat, sizeof(p->by_category));
	return p;
}

CG_EXPORT int cgtrace_memory_timeline(const struct cgtrace_doc *d,
				      int (*fn)(void *user, const struct cgtrace_timeline_point *p),
				      void *user)
{
	struct cg_replay r;
	struct cgtrace_timeline_point p;
	if (cg_doc_streamed(d))
		return -ENODATA;
	int ret = cg_replay_init(&r, d);
	if (ret < 0)
		return ret;
	while (ret == 0 && r.pos < d->memory.len) {
		struct cg_replay_did did;
		uint16_t dev = cg_replay_step_did(&r, &did);
		ret = fn(user, replay_point(&r, &did, dev, &p));
	}
	cg_replay_fini(&r);
	return ret;
}

/* SPDX-License-Identifier: MIT */
/* The memory timeline: live bytes of a record's device after each record, in analysis order. */
#include <errno.h>
#include <stdint.h>

#include "cgtrace.h"
#include "doc.h"
#include "export.h"
#include "memory_replay.h"
#include "sat.h"

CG_EXPORT int cgtrace_memory_timeline(const struct cgtrace_doc *d,
				      int (*fn)(void *user, const struct cgtrace_timeline_point *p),
				      void *user)
{
	struct cg_replay r;
	if (cg_doc_streamed(d))
		return -ENODATA;
	int ret = cg_replay_init(&r, d);
	if (ret < 0)
		return ret;
	while (ret == 0 && r.pos < d->memory.len) {
		size_t idx = cg_replay_index(&r, r.pos);
		uint16_t dev = cg_replay_step(&r);
		const struct cg_replay_dev *dv = &r.dev[dev];
		struct cgtrace_timeline_point p = {
			.timestamp_ns = CG_VEC_AT(&d->memory, struct cg_mem, idx)->timestamp_ns,
			.device = cg_doc_str(d, cg_doc_device_str(d, dev)),
			.live_bytes = dv->live,
			.has_free = dv->has_capacity,
			.free_bytes = cg_sat_sub(dv->capacity, dv->live),
			.record = idx,
		};
		ret = fn(user, &p);
	}
	cg_replay_fini(&r);
	return ret;
}

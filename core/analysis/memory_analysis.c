/* SPDX-License-Identifier: MIT */
/*
 * The memory analysis of the trace/6 format: replays memory records in analysis order with
 * live bytes per device and per category, finds each device's peak and the
 * global one, and lists what was live at the global peak. The live set is
 * rebuilt by a second replay up to the peak rather than copied at every new
 * peak, which would be quadratic on a steadily growing trace.
 */
#include "memory_analysis.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "doc.h"
#include "doc_view.h"
#include "export.h"
#include "memory_replay.h"
#include "memory_stream.h"
#include "sat.h"

/* Whether the record's own span has step `backward`, cached per class. */
static bool class_is_backward(const struct cgtrace_doc *d, uint32_t cls, int8_t *cache)
{
	if (cache[cls] < 0) {
		long s = cg_doc_find_span(d, cg_doc_class(d, cls)->span_id);
		cache[cls] = s >= 0 && CG_VEC_AT(&d->spans, struct cg_span, s)->step ==
					       CGTRACE_STEP_BACKWARD;
	}
	return cache[cls];
}

static int live_cmp(const void *a, const void *b, void *doc)
{
	const struct cgtrace_live_alloc *x = a, *y = b;
	(void)doc;
	if (x->bytes != y->bytes)
		return x->bytes > y->bytes ? -1 : 1;
	return strcmp(x->tensor_id, y->tensor_id);
}

static int dev_cmp(const void *a, const void *b)
{
	const struct cgtrace_device_peak *x = a, *y = b;
	return strcmp(x->device, y->device);
}

static int collect_breakdown(struct cg_replay *r, struct cgtrace_memory_report *rep,
			     size_t peak_pos)
{
	const struct cgtrace_doc *d = r->doc;
	cg_replay_reset(r);
	while (r->pos <= peak_pos)
		cg_replay_step(r);
	size_t n = 0;
	for (uint32_t t = 0; t < d->pool.count; t++)
		n += r->live_of[t] != 0;
	rep->peak_breakdown = calloc(n ? n : 1, sizeof(*rep->peak_breakdown));
	if (!rep->peak_breakdown)
		return -ENOMEM;
	for (uint32_t t = 0; t < d->pool.count; t++) {
		if (!r->live_of[t])
			continue;
		struct cgtrace_memory v;
		cg_doc_mem_view(d, r->live_of[t] - 1, &v);
		rep->peak_breakdown[rep->n_breakdown++] = (struct cgtrace_live_alloc){
			.tensor_id = v.tensor_id,
			.span_id = v.span_id,
			.op_name = v.op_name,
			.bytes = v.bytes,
			.shape = v.shape,
			.ndim = v.ndim,
			.dtype = v.dtype,
			.device = v.device,
			.category = v.category,
			.timestamp_ns = v.timestamp_ns,
			.stack_id = v.stack_id,
		};
	}
	qsort_r(rep->peak_breakdown, rep->n_breakdown, sizeof(*rep->peak_breakdown), live_cmp,
		NULL);
	return 0;
}

static int fill_devices(struct cg_replay *r, struct cgtrace_memory_report *rep)
{
	const struct cgtrace_doc *d = r->doc;
	rep->by_device = calloc(r->n_dev ? r->n_dev : 1, sizeof(*rep->by_device));
	if (!rep->by_device)
		return -ENOMEM;
	for (size_t i = 0; i < r->n_dev; i++) {
		const struct cg_replay_dev *dv = &r->dev[i];
		if (!dv->listed)
			continue;
		rep->by_device[rep->n_devices++] = (struct cgtrace_device_peak){
			.device = cg_doc_str(d, cg_doc_device_str(d, (uint16_t)i)),
			.capacity_bytes = dv->capacity,
			.peak_bytes = dv->peak,
			.peak_timestamp_ns = dv->peak_ts,
			.alloc_count = dv->allocs,
			.free_count = dv->frees,
			.final_bytes = dv->live,
		};
	}
	qsort(rep->by_device, rep->n_devices, sizeof(*rep->by_device), dev_cmp);
	return 0;
}

int cg_memory_analyze(const struct cgtrace_doc *d, struct cgtrace_memory_report **out,
		      bool breakdown)
{
	if (cg_doc_streamed(d))
		return cg_memory_stream_report(d, out, breakdown);
	struct cg_replay r;
	struct cgtrace_memory_report *rep = calloc(1, sizeof(*rep));
	int8_t *backward = malloc(d->classes.len ? d->classes.len : 1);
	int ret = rep && backward ? cg_replay_init(&r, d) : -ENOMEM;
	if (ret < 0) {
		free(rep);
		free(backward);
		return ret;
	}
	memset(backward, -1, d->classes.len);
	rep->peak_device = "";
	bool seen_backward = false;
	size_t peak_pos = 0;
	while (r.pos < d->memory.len) {
		size_t k = r.pos;
		size_t idx = cg_replay_index(&r, k);
		const struct cg_mem *m = CG_VEC_AT(&d->memory, struct cg_mem, idx);
		const struct cg_mem_class *c = cg_doc_class(d, m->cls);
		struct cg_replay_dev *dv = &r.dev[cg_replay_step(&r)];
		dv->listed = true;
		if (c->action == CGTRACE_ALLOC) {
			dv->allocs++;
			rep->alloc_count++;
			rep->total_alloc_bytes = cg_sat_add(rep->total_alloc_bytes, m->bytes);
		} else {
			dv->frees++;
			rep->free_count++;
		}
		if (dv->live > dv->peak) {
			dv->peak = dv->live;
			dv->peak_ts = m->timestamp_ns;
		}
		if (dv->live > rep->peak_bytes) {
			rep->peak_bytes = dv->live;
			rep->peak_timestamp_ns = m->timestamp_ns;
			rep->peak_device = cg_doc_str(d, cg_doc_device_str(d, c->device));
			memcpy(rep->peak_by_category, dv->by_cat, sizeof(dv->by_cat));
			peak_pos = k;
		}
		if (!seen_backward && class_is_backward(d, m->cls, backward)) {
			seen_backward = true;
			rep->autograd_retained_bytes = dv->by_cat[CGTRACE_CAT_ACTIVATION];
		}
	}
	free(backward);
	rep->realloc_live_count = r.realloc_live;
	rep->unknown_free_count = r.unknown_free;
	ret = fill_devices(&r, rep);
	if (ret == 0 && breakdown && rep->peak_bytes > 0)
		ret = collect_breakdown(&r, rep, peak_pos);
	cg_replay_fini(&r);
	if (ret < 0) {
		cgtrace_memory_report_free(rep);
		return ret;
	}
	*out = rep;
	return 0;
}

CG_EXPORT int cgtrace_memory_analyze(const struct cgtrace_doc *d,
				     struct cgtrace_memory_report **out)
{
	return cg_memory_analyze(d, out, true);
}

CG_EXPORT void cgtrace_memory_report_free(struct cgtrace_memory_report *rep)
{
	if (!rep)
		return;
	free(rep->by_device);
	free(rep->peak_breakdown);
	free(rep);
}

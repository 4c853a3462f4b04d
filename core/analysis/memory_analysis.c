/* SPDX-License-Identifier: MIT */
/*
 * The memory report of the trace/6 format, read off the memory analysis
 * (memory_stream.h): a streamed document's, which it fed while it was
 * read, or a full document's records replayed through a new one. The
 * counts and peaks as the analysis applied them, the devices sorted, and
 * the live set at the global peak from its snapshot.
 */
#include "memory_analysis.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "doc.h"
#include "doc_view.h"
#include "export.h"
#include "memory_replay.h"
#include "memory_stream.h"
#include "peak_largest.h"
#include "stream_sink.h"
#include "stream_spans.h"
#include "span_events.h"

static const char *dev_str(const struct cgtrace_doc *d, uint16_t dev)
{
	return cg_doc_str(d, cg_doc_device_str(d, dev));
}

static int dev_cmp(const void *a, const void *b)
{
	const struct cgtrace_device_peak *x = a, *y = b;
	return strcmp(x->device, y->device);
}

static int live_cmp(const void *a, const void *b)
{
	const struct cgtrace_live_alloc *x = a, *y = b;
	if (x->bytes != y->bytes)
		return x->bytes > y->bytes ? -1 : 1;
	return strcmp(x->tensor_id, y->tensor_id);
}

static int fill_devices(const struct cg_stream *s, struct cgtrace_memory_report *rep)
{
	rep->by_device = calloc(s->devs.len ? s->devs.len : 1, sizeof(*rep->by_device));
	if (!rep->by_device)
		return -ENOMEM;
	for (size_t i = 0; i < s->devs.len; i++) {
		const struct cg_stream_dev *dv = CG_VEC_AT(&s->devs, struct cg_stream_dev, i);
		if (!dv->listed)
			continue;
		rep->by_device[rep->n_devices++] = (struct cgtrace_device_peak){
			.device = dev_str(s->doc, (uint16_t)i),
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

/*
 * One block: the entries of sel, then their tensor ids (freed with
 * peak_breakdown).
 */
static int fill_breakdown(const struct cg_stream *s, struct cgtrace_memory_report *rep,
			  const uint32_t *sel, size_t n)
{
	const struct cgtrace_doc *d = s->doc;
	size_t chars = 0;
	char buf[19];
	for (size_t k = 0; k < n; k++)
		chars += strlen(cg_peak_entry_id(s, sel[k], buf)) + 1;
	char *block = calloc(1, (n ? n : 1) * sizeof(*rep->peak_breakdown) + chars);
	if (!block)
		return -ENOMEM;
	rep->peak_breakdown = (struct cgtrace_live_alloc *)block;
	char *w = block + (n ? n : 1) * sizeof(*rep->peak_breakdown);
	for (size_t k = 0; k < n; k++) {
		const struct cg_stream_entry *e = &s->ent[sel[k]];
		const struct cg_mem_class *c = cg_doc_class(d, e->cls);
		struct cgtrace_live_alloc *a = &rep->peak_breakdown[rep->n_breakdown++];
		*a = (struct cgtrace_live_alloc){
			.tensor_id = w,
			.span_id = cg_doc_str(d, c->span_id),
			.op_name = cg_doc_str(d, c->op_name),
			.bytes = e->bytes,
			.dtype = cg_doc_str(d, c->dtype),
			.device = dev_str(d, c->device),
			.category = (enum cgtrace_category)cg_stream_entry_peak_cat(s, sel[k], false),
			.timestamp_ns = e->timestamp_ns,
			.stack_id = CG_VEC_AT(&s->figs.figs, struct cg_stack_fig, e->fig)->id,
			.preexisting = c->preexisting,
		};
		/* [bytes] is marked by ndim 1 without dims until the entries stop moving. */
		if (e->shape == CG_SHAPE_BYTES)
			a->ndim = 1;
		else
			a->shape = cg_doc_shape(d, e->shape, NULL, &a->ndim);
		const char *id = cg_peak_entry_id(s, sel[k], buf);
		size_t len = strlen(id) + 1;
		memcpy(w, id, len);
		w += len;
	}
	qsort(rep->peak_breakdown, rep->n_breakdown, sizeof(*rep->peak_breakdown), live_cmp);
	for (size_t i = 0; i < rep->n_breakdown; i++) {
		struct cgtrace_live_alloc *a = &rep->peak_breakdown[i];
		if (a->ndim == 1 && !a->shape)
			a->shape = &a->bytes;
	}
	return 0;
}

static int breakdown_of(const struct cg_stream *s, struct cgtrace_memory_report *rep, size_t max)
{
	uint32_t *sel;
	size_t n;
	int ret = cg_peak_largest(s, max, &sel, &n, rep);
	if (ret == 0)
		ret = fill_breakdown(s, rep, sel, n);
	free(sel);
	return ret;
}

static struct cgtrace_moment moment_of(const struct cg_stream *s, const struct cg_moment_raw *m)
{
	struct cgtrace_moment out = {.inferred = !s->clock.marked,
				     .phase = cg_phase_name(s->doc, m->phase)};
	out.update = cg_moment_update(&s->clock, m, &out.after);
	return out;
}

/* Where each device's peak fell, in by_device's order (sorted by name). */
static int fill_moments(const struct cg_stream *s, struct cgtrace_memory_report *rep)
{
	rep->update_count = cg_uclock_count(&s->clock);
	rep->peak_moment = moment_of(s, &s->peak_moment);
	rep->device_moments = calloc(rep->n_devices ? rep->n_devices : 1,
				     sizeof(*rep->device_moments));
	if (!rep->device_moments)
		return -ENOMEM;
	for (size_t i = 0; i < s->devs.len; i++) {
		const struct cg_stream_dev *dv = CG_VEC_AT(&s->devs, struct cg_stream_dev, i);
		const char *name = dev_str(s->doc, (uint16_t)i);
		for (size_t k = 0; dv->listed && k < rep->n_devices; k++)
			if (rep->by_device[k].device == name)
				rep->device_moments[k] = moment_of(s, &dv->peak_moment);
	}
	return 0;
}

int cg_memory_report(const struct cg_stream *s, struct cgtrace_memory_report **out, size_t breakdown)
{
	struct cgtrace_memory_report *rep = calloc(1, sizeof(*rep));
	if (!rep)
		return -ENOMEM;
	*rep = (struct cgtrace_memory_report){
		.alloc_count = s->alloc_count,
		.free_count = s->free_count,
		.total_alloc_bytes = s->total_alloc_bytes,
		.peak_bytes = s->peak_bytes,
		.peak_timestamp_ns = s->peak_ts,
		.peak_device = s->peak_device >= 0 ? dev_str(s->doc, (uint16_t)s->peak_device) : "",
		.autograd_retained_bytes = s->seen_backward ? s->backward_activation : 0,
		.realloc_live_count = s->realloc_live,
		.unknown_free_count = s->unknown_free,
	};
	memcpy(rep->peak_by_category, s->peak_by_category, sizeof(rep->peak_by_category));
	int ret = fill_devices(s, rep);
	if (ret == 0)
		ret = fill_moments(s, rep);
	if (ret == 0 && breakdown && rep->peak_bytes > 0)
		ret = breakdown_of(s, rep, breakdown);
	if (ret < 0) {
		cgtrace_memory_report_free(rep);
		return ret;
	}
	*out = rep;
	return 0;
}

int cg_memory_analyze(const struct cgtrace_doc *d, struct cgtrace_memory_report **out,
		      size_t breakdown)
{
	const struct cg_stream *s;
	struct cg_stream *own;
	int ret = cg_replay_or_stream(d, &s, &own);
	if (ret == 0)
		ret = cg_memory_report(s, out, breakdown);
	cg_stream_free(own);
	return ret;
}

CG_EXPORT int cgtrace_memory_analyze(const struct cgtrace_doc *d,
				     struct cgtrace_memory_report **out)
{
	return cg_memory_analyze(d, out, CG_BREAKDOWN_ALL);
}

CG_EXPORT int cgtrace_memory_analyze_largest(const struct cgtrace_doc *d, size_t max,
					     struct cgtrace_memory_report **out)
{
	return cg_memory_analyze(d, out, max ? max : CG_BREAKDOWN_ALL);
}

CG_EXPORT void cgtrace_memory_report_free(struct cgtrace_memory_report *rep)
{
	if (!rep)
		return;
	free(rep->by_device);
	free(rep->device_moments);
	free(rep->peak_breakdown);
	free(rep->op_groups);
	free(rep);
}

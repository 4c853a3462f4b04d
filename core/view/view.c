/* SPDX-License-Identifier: MIT */
/*
 * The view of a trace (cgtrace.h, "Views"; docs/views.md), in one
 * streamed read: as the analysis applies each memory record and the
 * reader meets each checkpoint, hooks hand them to the grid, the largest
 * allocations and the figures by class; the document and its memory
 * report then name the devices and spans. A trace read in full instead
 * (records going back in time) is replayed from its document to the same
 * parts.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cgtrace.h"
#include "doc.h"
#include "doc_stacks.h"
#include "memory_stream.h"
#include "export.h"
#include "memory_analysis.h"
#include "memory_replay.h"
#include "probe_tags.h"
#include "memory_read.h"
#include "sat.h"
#include "steps.h"
#include "stream_sink.h"
#include "view_build.h"

#define VIEW_BUCKETS 2000
#define VIEW_BUCKETS_MAX 100000
#define VIEW_ALLOCS 500
#define VIEW_ALLOCS_MAX 100000

/* Each record to every part of the view; the first error stops the read. */
static int feed(struct cg_view_build *b, const struct cg_vrec *r)
{
	int e = cg_vgrid_record(b, r);
	if (e == 0)
		e = cg_vallocs_record(b, r);
	if (e == 0)
		e = cg_vspans_record(b, r);
	if (e == 0 && r->seen)
		e = cg_steps_record(b->steps, r->seen);
	if (e < 0)
		b->err = e;
	return e < 0;
}

static int on_record(void *user, const struct cg_stream_seen *x)
{
	struct cg_vrec r = {
		.ts = x->ts,
		.live = x->live,
		.bytes = x->bytes,
		.by_cat = x->by_cat,
		.action = x->action,
		.category = x->category,
		.dev = x->dev,
		.cls = x->cls,
		.entry = x->entry,
		.replaced = x->replaced,
		.stack = x->stack,
		.seen = x,
	};
	return feed(user, &r);
}

static int checkpoint(struct cg_view_build *b, uint16_t dev,
		      const struct cgtrace_view_checkpoint *ck)
{
	int e = cg_vgrid_checkpoint(b, dev, ck);
	if (e < 0)
		b->err = e;
	return e < 0;
}

/*
 * A checkpoint as the view keeps it, from a parsed record or a document's
 * (both expanded from one field list, so their fields are named alike).
 */
#define VIEW_CHECKPOINT(x)                                                                         \
	((struct cgtrace_view_checkpoint){                                                         \
		.timestamp_ns = (x)->timestamp_ns,                                                 \
		.used_bytes = (x)->used_bytes,                                                     \
		.free_bytes = (x)->free_bytes,                                                     \
		.has_reserved = (x)->has_reserved,                                                 \
		.reserved_bytes = (x)->reserved_bytes,                                             \
		.oom = (x)->has_oom_request,                                                       \
		.oom_request_bytes = (x)->oom_request_bytes,                                       \
	})

static int on_checkpoint(void *user, const struct cg_rec_device_memory *x, uint16_t dev)
{
	const struct cgtrace_view_checkpoint ck = VIEW_CHECKPOINT(x);
	return checkpoint(user, dev, &ck);
}

/* A span event in its time: a parameter mark turns the kept allocations; the steps move on. */
static int on_span(void *user, const struct cg_stream *s, const struct cg_span_ev *ev,
		   int changed)
{
	struct cg_view_build *b = user;
	const struct cgtrace_doc *d = s->doc;
	int e = 0;
	if (ev->mark) {
		const struct cg_doc_mark *m = CG_VEC_AT(&d->marks, struct cg_doc_mark, ev->mark - 1);
		e = cg_vallocs_mark(&b->allocs, (const uint64_t *)d->mark_ranges.p + m->first, m->n);
	}
	if (e == 0)
		e = cg_steps_span(b->steps, s, ev, changed);
	if (e < 0)
		b->err = e;
	return e < 0;
}

static const struct cg_stream_hooks hooks = {
	.record = on_record, .checkpoint = on_checkpoint, .span = on_span};
static const struct cg_stream_hooks replay_hooks = {.span = on_span};

/* The steps from the analysis s that fed them; the builder is spent. */
static int steps_finish(struct cg_view_build *b, const struct cg_stream *s)
{
	struct cg_steps *st = b->steps;
	b->steps = NULL;
	return cg_steps_finish(st, s, 0, &b->v->steps);
}

/* A full document's records, replayed in analysis order, to the same parts. */
static int replay(struct cg_view_build *b, const struct cgtrace_doc *d)
{
	struct cg_replay r;
	int ret = cg_replay_init(&r, d, &replay_hooks, b);
	while (ret == 0 && r.pos < d->memory.len) {
		struct cg_replay_did did;
		uint16_t dev = cg_replay_step_did(&r, &did);
		const struct cg_mem *m = CG_VEC_AT(&d->memory, struct cg_mem, did.index);
		bool alloc = cg_doc_class(d, m->cls)->action == CGTRACE_ALLOC;
		uint32_t stack = alloc ? cg_doc_mem_stack(d, did.index) : 0;
		const char *id = cg_doc_str(d, m->tensor_id);
		struct cg_vrec x = {
			.ts = m->timestamp_ns,
			.live = r.dev[dev].live,
			.bytes = did.bytes,
			.by_cat = r.dev[dev].by_cat,
			.action = alloc ? CGTRACE_ALLOC : CGTRACE_FREE,
			.category = did.category,
			.dev = dev,
			.cls = m->cls,
			/* Allocations are named by their record's index, unique in a full document. */
			.entry = alloc ? (uint32_t)did.index : did.undid ? did.undid - 1 : UINT32_MAX,
			.replaced = alloc && did.undid ? did.undid - 1 : UINT32_MAX,
			.stack = stack ? cg_doc_node_id(d, stack) : 0,
			.tensor_id = id ? id : "",
			.tensor_id_len = id ? strlen(id) : 0,
		};
		/* What the steps ask of a record applied. */
		const struct cg_stream_seen seen = {
			.doc = d, .ts = x.ts, .live = x.live, .bytes = x.bytes, .by_cat = x.by_cat,
			.dev = dev, .action = x.action, .category = x.category, .entry = x.entry,
			.cls = m->cls, .replaced = x.replaced,
		};
		x.seen = &seen;
		if (feed(b, &x))
			ret = b->err;
	}
	/* The report is this replay's: a second one for it cost a tenth more. */
	if (ret == 0)
		ret = cg_stream_finish(r.s);
	if (ret == 0)
		ret = cg_memory_report(r.s, &b->v->report, b->breakdown);
	if (ret == 0)
		ret = steps_finish(b, r.s);
	cg_replay_fini(&r);
	/* Checkpoints in file order, as a streamed read meets them. */
	for (size_t i = 0; ret == 0 && i < d->devmem.len; i++) {
		const struct cg_devmem *m = CG_VEC_AT(&d->devmem, struct cg_devmem, i);
		const struct cgtrace_view_checkpoint ck = VIEW_CHECKPOINT(m);
		if (checkpoint(b, m->device, &ck))
			ret = b->err;
	}
	return ret;
}

/* CGPROBE_CAPTURE=update: the trace is the window, from t=0 to the root span's end. */
static void capture(struct cgtrace_view *v)
{
	const char *mode = cg_doc_tag(v->doc, "cgprobe_capture");
	if (!mode || strcmp(mode, "update") != 0)
		return;
	v->has_capture = true;
	v->capture_begin_ns = 0;
	v->capture_end_ns = v->end_ns;
	for (size_t i = 0; i < v->n_all_spans; i++) {
		const struct cgtrace_view_span *s = &v->all_spans[i];
		if (!s->parent_id && s->closed && s->end_ns > v->capture_end_ns)
			v->capture_end_ns = s->end_ns;
	}
}

/*
 * The view's devices, as the report sorts them, each taking its slots;
 * dev_index gets the view's device of each document device number.
 */
static int devices(struct cg_view_build *b, const struct cgtrace_doc *d, size_t *dev_index)
{
	struct cgtrace_view *v = b->v;
	const struct cgtrace_memory_report *rep = v->report;
	v->devices = calloc(rep->n_devices ? rep->n_devices : 1, sizeof(*v->devices));
	if (!v->devices)
		return -ENOMEM;
	v->n_devices = rep->n_devices;
	for (size_t i = 0; i < rep->n_devices; i++) {
		const struct cgtrace_device_peak *pk = &rep->by_device[i];
		v->devices[i] = (struct cgtrace_view_device){
			.device = pk->device,
			.capacity_bytes = pk->capacity_bytes,
			.peak_bytes = pk->peak_bytes,
			.peak_ns = pk->peak_timestamp_ns,
			.alloc_count = pk->alloc_count,
			.free_count = pk->free_count,
			.final_bytes = pk->final_bytes,
		};
	}
	for (size_t k = 0; k < d->devices.len; k++) {
		const char *name = cg_doc_str(d, cg_doc_device_str(d, (uint16_t)k));
		dev_index[k] = SIZE_MAX;
		for (size_t i = 0; i < rep->n_devices; i++)
			if (strcmp(rep->by_device[i].device, name) == 0)
				dev_index[k] = i;
		struct cg_vdev *vd = k < b->dev.len ? CG_VEC_AT(&b->dev, struct cg_vdev, k) : NULL;
		if (dev_index[k] == SIZE_MAX || !vd || !vd->used)
			continue;
		struct cgtrace_view_device *out = &v->devices[dev_index[k]];
		out->buckets = vd->bk;
		vd->bk = NULL;
		out->checkpoints = calloc(v->n_buckets, sizeof(*out->checkpoints));
		if (!out->checkpoints)
			return -ENOMEM;
		for (size_t i = 0; i < v->n_buckets; i++)
			if (vd->has_ck[i])
				out->checkpoints[out->n_checkpoints++] = vd->ck[i];
		out->ooms = vd->ooms.p;
		out->n_ooms_kept = vd->ooms.len;
		out->n_ooms = vd->n_ooms;
		vd->ooms = (struct cg_vec){0};
	}
	/* A device the report lists has records; one without slots still gets its buckets. */
	for (size_t i = 0; i < v->n_devices; i++)
		if (!v->devices[i].buckets &&
		    !(v->devices[i].buckets = calloc(v->n_buckets, sizeof(struct cgtrace_view_bucket))))
			return -ENOMEM;
	return 0;
}

static int ck_cmp(const void *a, const void *b)
{
	const struct cgtrace_view_checkpoint *x = a, *y = b;
	return x->timestamp_ns < y->timestamp_ns ? -1 : x->timestamp_ns > y->timestamp_ns;
}

static int finish(struct cg_view_build *b)
{
	/* A streamed read's steps: from its analysis. */
	if (b->steps) {
		int e = steps_finish(b, cg_stream_of(b->v->doc));
		if (e < 0)
			return e;
	}
	struct cgtrace_view *v = b->v;
	const struct cgtrace_doc *d = v->doc;
	size_t *dev_index = malloc((d->devices.len ? d->devices.len : 1) * sizeof(*dev_index));
	/* A streamed read's report comes from its analysis; a replay made its own. */
	int e = !dev_index	? -ENOMEM
		: v->report	? 0
				: cg_memory_analyze(d, &v->report, b->breakdown);
	if (e == 0) {
		cg_vgrid_finish(b);
		e = devices(b, d, dev_index);
	}
	if (e == 0)
		e = cg_vallocs_finish(b, d, dev_index);
	if (e == 0)
		e = cg_vspans_finish(b, d);
	free(dev_index);
	if (e == 0)
		e = cg_vsteps_finish(v);
	for (size_t i = 0; e == 0 && i < v->n_devices; i++) {
		struct cgtrace_view_device *vd = &v->devices[i];
		/* OOMs come in file order, which several writers may interleave. */
		if (vd->n_ooms_kept)
			qsort(vd->ooms, vd->n_ooms_kept, sizeof(*vd->ooms), ck_cmp);
		/* A device's peak by category is its peak bucket's. */
		const struct cgtrace_view_bucket *pk =
			&vd->buckets[cgtrace_view_bucket_of(v, vd->peak_ns)];
		if (pk->max_bytes == vd->peak_bytes)
			memcpy(vd->peak_by_category, pk->max_by_category, sizeof(pk->max_by_category));
		for (size_t k = 0; k < v->n_buckets; k++)
			vd->alloc_bytes = cg_sat_add(vd->alloc_bytes, vd->buckets[k].alloc_bytes);
	}
	if (e == 0)
		capture(v);
	return e;
}

static int build_init(struct cg_view_build *b, struct cgtrace_view *v, size_t buckets,
		      size_t allocs, unsigned flags)
{
	memset(b, 0, sizeof(*b));
	b->v = v;
	b->breakdown = flags & CGTRACE_READ_PEAK_LARGEST ? CGTRACE_PEAK_LARGEST : CG_BREAKDOWN_ALL;
	static const struct cgtrace_steps_options steps = {.warmup = 1};
	int e = cg_steps_new(&steps, &b->steps);
	if (e == 0)
		e = cg_vgrid_init(b, buckets);
	return e ? e : cg_vallocs_init(&b->allocs, allocs);
}

static void build_fini(struct cg_view_build *b)
{
	cg_vgrid_fini(b);
	cg_vallocs_fini(&b->allocs);
	cg_vspans_fini(b);
	cg_steps_free(b->steps);
	b->steps = NULL;
}

static int bad_option(const char *path, const char *what, char *err, size_t errlen)
{
	snprintf(err, errlen, "%s: %s", path, what);
	return -EINVAL;
}

CG_EXPORT int cgtrace_view_read(const char *path, const struct cgtrace_view_options *opts,
				struct cgtrace_view **out, char *err, size_t errlen)
{
	return cgtrace_view_read_flags(path, opts, 0, out, err, errlen);
}

CG_EXPORT int cgtrace_view_read_flags(const char *path, const struct cgtrace_view_options *opts,
				      unsigned flags, struct cgtrace_view **out, char *err,
				      size_t errlen)
{
	static const struct cgtrace_view_options none;
	if (!opts)
		opts = &none;
	*out = NULL;
	if (errlen)
		err[0] = '\0';
	size_t nb = opts->buckets ? opts->buckets : VIEW_BUCKETS;
	size_t na = opts->max_allocs ? opts->max_allocs : VIEW_ALLOCS;
	if (nb > VIEW_BUCKETS_MAX)
		return bad_option(path, "a view has at most 100000 buckets", err, errlen);
	if (na > VIEW_ALLOCS_MAX)
		return bad_option(path, "a view keeps at most 100000 allocations", err, errlen);
	struct cgtrace_view *v = calloc(1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	struct cg_view_build b;
	int ret = build_init(&b, v, nb, na, flags);
	if (ret == 0)
		ret = cg_read_hooked(path, opts->read, flags & (CGTRACE_READ_NO_STACKS | CGTRACE_READ_SKIP_STACKS), &hooks, &b, &v->doc,
				     err, errlen);
	if (ret > 0) /* a hook stopped the read */
		ret = b.err;
	/* Read in full after all: what the hooks saw of the first read goes. */
	if (ret == 0 && !cg_doc_streamed(v->doc)) {
		build_fini(&b);
		ret = build_init(&b, v, nb, na, flags);
		if (ret == 0)
			ret = replay(&b, v->doc);
	}
	if (ret == 0)
		ret = finish(&b);
	build_fini(&b);
	if (ret < 0) {
		if (errlen && !err[0])
			snprintf(err, errlen, "%s: %s", path, strerror(-ret));
		cgtrace_view_free(v);
		return ret;
	}
	*out = v;
	return 0;
}

CG_EXPORT void cgtrace_view_free(struct cgtrace_view *v)
{
	if (!v)
		return;
	for (size_t i = 0; i < v->n_devices; i++) {
		free(v->devices[i].buckets);
		free(v->devices[i].checkpoints);
		free(v->devices[i].ooms);
	}
	free(v->devices);
	for (size_t i = 0; i < v->n_allocs; i++)
		free((char *)v->allocs[i].tensor_id);
	free(v->allocs);
	free(v->alloc_live);
	free(v->spans);
	free(v->all_spans); /* the step spans' highest with it */
	free(v->bands);
	cgtrace_steps_free(v->steps);
	cgtrace_memory_report_free(v->report);
	cgtrace_doc_free(v->doc);
	free(v);
}

CG_EXPORT size_t cgtrace_view_bucket_of(const struct cgtrace_view *v, uint64_t t)
{
	if (!v->n_buckets || t <= v->start_ns || !v->bucket_ns)
		return 0;
	uint64_t i = (t - v->start_ns) / v->bucket_ns;
	return i < v->n_buckets ? (size_t)i : v->n_buckets - 1;
}

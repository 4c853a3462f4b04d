/* SPDX-License-Identifier: MIT */
/*
 * The view of a trace (cgtrace.h, "Views"; docs/views.md): a first
 * streamed read gives the document, its memory report and the time span,
 * which fix the grid; a second one hands every memory record and
 * checkpoint to the grid, the largest allocations and the span figures.
 * A trace read in full instead (records going back in time) is replayed
 * from its document, to the same hooks.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cgtrace.h"
#include "doc.h"
#include "doc_stacks.h"
#include "doc_stream.h"
#include "export.h"
#include "memory_replay.h"
#include "read_points.h"
#include "view_build.h"

#define VIEW_BUCKETS 2000
#define VIEW_BUCKETS_MAX 100000
#define VIEW_ALLOCS 500
#define VIEW_ALLOCS_MAX 100000

/* The public view first, then what its strings live in. */
struct cg_view {
	struct cgtrace_view pub;
	struct cg_strpool pool;
};

/* Each record to every part of the view; the first error stops the read. */
static int feed(struct cg_view_build *b, const struct cg_vrec *r)
{
	if (r->dev >= b->n_dev || b->dev_index[r->dev] == SIZE_MAX)
		return 0;
	cg_vgrid_record(b, r);
	int e = cg_vallocs_record(b, r);
	if (e == 0)
		e = cg_vspans_record(b, r);
	if (e < 0)
		b->err = e;
	return e < 0;
}

static int on_record(void *user, const struct cgtrace_timeline_point *p,
		     const struct cg_stream_seen *x)
{
	const struct cgtrace_doc *d = x->doc;
	const struct cg_mem_class *c = cg_doc_class(d, x->cls);
	struct cg_vrec r = {
		.p = p,
		.dev = c->device,
		.entry = x->entry,
		.replaced = x->replaced,
		.stack = x->stack,
		.tensor_id = x->id,
		.tensor_id_len = x->id_len,
		.span_id = cg_doc_str(d, c->span_id),
		.op_name = c->op_name == CG_STR_NONE ? NULL : cg_doc_str(d, c->op_name),
		.preexisting = c->preexisting,
	};
	return feed(user, &r);
}

static int checkpoint(struct cg_view_build *b, uint16_t dev,
		      const struct cgtrace_view_checkpoint *ck)
{
	if (dev >= b->n_dev || b->dev_index[dev] == SIZE_MAX)
		return 0;
	int e = cg_vgrid_checkpoint(b, dev, ck);
	if (e < 0)
		b->err = e;
	return e < 0;
}

static int on_checkpoint(void *user, const struct cg_rec_device_memory *x, uint16_t dev)
{
	const struct cgtrace_view_checkpoint ck = {
		.timestamp_ns = x->timestamp_ns,
		.used_bytes = x->used_bytes,
		.free_bytes = x->free_bytes,
		.has_reserved = x->has_reserved,
		.reserved_bytes = x->reserved_bytes,
		.oom = x->has_oom_request,
		.oom_request_bytes = x->oom_request_bytes,
	};
	return checkpoint(user, dev, &ck);
}

static const struct cg_stream_hooks hooks = {.record = on_record, .checkpoint = on_checkpoint};

/* The first and last timestamp of the memory and checkpoint records of a full document. */
static bool doc_time(const struct cgtrace_doc *d, uint64_t *lo, uint64_t *hi)
{
	if (d->stream) {
		*lo = d->stream->ts_lo;
		*hi = d->stream->ts_hi;
		return d->stream->has_ts;
	}
	bool any = false;
	for (size_t i = 0; i < d->memory.len; i++) {
		uint64_t t = CG_VEC_AT(&d->memory, struct cg_mem, i)->timestamp_ns;
		*lo = !any || t < *lo ? t : *lo;
		*hi = !any || t > *hi ? t : *hi;
		any = true;
	}
	for (size_t i = 0; i < d->devmem.len; i++) {
		uint64_t t = CG_VEC_AT(&d->devmem, struct cg_devmem, i)->timestamp_ns;
		*lo = !any || t < *lo ? t : *lo;
		*hi = !any || t > *hi ? t : *hi;
		any = true;
	}
	return any;
}

static void grid(struct cgtrace_view *v, const struct cgtrace_doc *d, size_t want)
{
	uint64_t lo = 0, hi = 0;
	if (!doc_time(d, &lo, &hi))
		lo = hi = 0;
	uint64_t span = hi - lo + 1; /* the last record's instant lies in the last bucket */
	if (span == 0)               /* 0 .. 2^64 - 1 */
		span = UINT64_MAX;
	uint64_t w = span / want + (span % want != 0);
	v->start_ns = lo;
	v->end_ns = hi;
	v->bucket_ns = w ? w : 1;
	v->n_buckets = (size_t)((span - 1) / v->bucket_ns + 1);
}

/* The devices, as the report sorts them, and which document device is which. */
static int devices(struct cg_view_build *b, const struct cgtrace_doc *d)
{
	struct cgtrace_view *v = b->v;
	const struct cgtrace_memory_report *rep = v->report;
	v->devices = calloc(rep->n_devices ? rep->n_devices : 1, sizeof(*v->devices));
	b->n_dev = d->devices.len;
	b->dev = calloc(b->n_dev ? b->n_dev : 1, sizeof(*b->dev));
	b->dev_index = malloc((b->n_dev ? b->n_dev : 1) * sizeof(*b->dev_index));
	if (!v->devices || !b->dev || !b->dev_index)
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
	for (size_t k = 0; k < b->n_dev; k++) {
		const char *name = cg_doc_str(d, cg_doc_device_str(d, (uint16_t)k));
		b->dev_index[k] = SIZE_MAX;
		for (size_t i = 0; i < rep->n_devices; i++)
			if (strcmp(rep->by_device[i].device, name) == 0)
				b->dev_index[k] = i;
	}
	return cg_vgrid_init(b);
}

static int between(void *user, const struct cgtrace_doc *d)
{
	struct cg_view_build *b = user;
	struct cgtrace_view *v = b->v;
	grid(v, d, v->n_buckets);
	int e = cgtrace_memory_analyze(d, &v->report);
	if (e == 0)
		e = devices(b, d);
	if (e < 0)
		b->err = e;
	return e < 0;
}

/* A full document's records, replayed in analysis order, to the same hooks. */
static int replay(struct cg_view_build *b, const struct cgtrace_doc *d)
{
	struct cg_replay r;
	int ret = cg_replay_init(&r, d);
	while (ret == 0 && r.pos < d->memory.len) {
		struct cg_replay_did did;
		struct cgtrace_timeline_point p;
		uint16_t dev = cg_replay_step_did(&r, &did);
		const struct cg_mem *m = CG_VEC_AT(&d->memory, struct cg_mem, did.index);
		const struct cg_mem_class *c = cg_doc_class(d, m->cls);
		bool alloc = c->action == CGTRACE_ALLOC;
		uint32_t stack = alloc ? cg_doc_mem_stack(d, did.index) : 0;
		const char *id = cg_doc_str(d, m->tensor_id);
		struct cg_vrec x = {
			.p = cg_replay_point(&r, &did, dev, &p),
			.dev = dev,
			/* Allocations are named by their record's index, unique in a full document. */
			.entry = alloc ? (uint32_t)did.index : did.undid ? did.undid - 1 : UINT32_MAX,
			.replaced = alloc && did.undid ? did.undid - 1 : UINT32_MAX,
			.stack = stack ? CG_VEC_AT(&d->stacks, struct cg_doc_stack, stack - 1)->s.id : 0,
			.tensor_id = id,
			.tensor_id_len = id ? strlen(id) : 0,
			.span_id = cg_doc_str(d, c->span_id),
			.op_name = c->op_name == CG_STR_NONE ? NULL : cg_doc_str(d, c->op_name),
			.preexisting = c->preexisting,
		};
		if (feed(b, &x))
			ret = b->err;
	}
	cg_replay_fini(&r);
	for (size_t i = 0; ret == 0 && i < d->devmem.len; i++) {
		const struct cg_devmem *m = CG_VEC_AT(&d->devmem, struct cg_devmem, i);
		const struct cgtrace_view_checkpoint ck = {
			.timestamp_ns = m->timestamp_ns,
			.used_bytes = m->used_bytes,
			.free_bytes = m->free_bytes,
			.has_reserved = m->has_reserved,
			.reserved_bytes = m->reserved_bytes,
			.oom = m->has_oom_request,
			.oom_request_bytes = m->oom_request_bytes,
		};
		if (checkpoint(b, m->device, &ck))
			ret = b->err;
	}
	return ret;
}

/* CGPROBE_CAPTURE=update: the trace is the window, from t=0 to the root span's end. */
static void capture(struct cgtrace_view *v)
{
	struct cgtrace_meta m;
	cgtrace_doc_meta(v->doc, &m);
	bool update = false;
	for (size_t i = 0; i < m.n_tags; i++)
		if (strcmp(m.tags[i].key, "cgprobe_capture") == 0)
			update = strcmp(m.tags[i].value, "update") == 0;
	if (!update)
		return;
	v->has_capture = true;
	v->capture_begin_ns = 0;
	v->capture_end_ns = v->end_ns;
	size_t n = cgtrace_doc_count(v->doc, CGTRACE_KIND_SPAN_START);
	for (size_t i = 0; i < n; i++) {
		struct cgtrace_span s;
		cgtrace_doc_span(v->doc, i, &s);
		if (!s.parent_id && s.closed && s.start_ns + s.duration_ns > v->capture_end_ns)
			v->capture_end_ns = s.start_ns + s.duration_ns;
	}
}

static int finish(struct cg_view_build *b)
{
	int e = cg_vgrid_finish(b);
	if (e == 0)
		e = cg_vallocs_finish(b);
	if (e == 0)
		e = cg_vspans_finish(b, b->v->doc);
	/* A device's peak by category is its peak bucket's. */
	for (size_t i = 0; e == 0 && i < b->v->n_devices; i++) {
		struct cgtrace_view_device *vd = &b->v->devices[i];
		const struct cgtrace_view_bucket *pk =
			&vd->buckets[cgtrace_view_bucket_of(b->v, vd->peak_ns)];
		if (pk->max_bytes == vd->peak_bytes)
			memcpy(vd->peak_by_category, pk->max_by_category, sizeof(pk->max_by_category));
		for (size_t k = 0; k < b->v->n_buckets; k++)
			vd->alloc_bytes += vd->buckets[k].alloc_bytes;
	}
	if (e == 0)
		capture(b->v);
	return e;
}

static void build_fini(struct cg_view_build *b)
{
	cg_vgrid_fini(b);
	cg_vallocs_fini(&b->allocs);
	cg_vspans_fini(b);
	free(b->dev);
	free(b->dev_index);
}

static int bad_option(const char *path, const char *what, char *err, size_t errlen)
{
	snprintf(err, errlen, "%s: %s", path, what);
	return -EINVAL;
}

CG_EXPORT int cgtrace_view_read(const char *path, const struct cgtrace_view_options *opts,
				struct cgtrace_view **out, char *err, size_t errlen)
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
	struct cg_view *cv = calloc(1, sizeof(*cv));
	if (!cv)
		return -ENOMEM;
	struct cgtrace_view *v = &cv->pub;
	struct cg_view_build b = {.v = v};
	cg_strpool_init(&b.pool);
	int ret = cg_vallocs_init(&b.allocs, na);
	const struct cg_read_points pts = {.hooks = &hooks, .between = between, .user = &b};
	/* The grid is fixed once the first read knows the time span (between). */
	v->n_buckets = nb;
	if (ret == 0)
		ret = cg_read_points(path, opts->read, &pts, &v->doc, err, errlen);
	if (ret > 0) /* a hook stopped the read */
		ret = b.err;
	if (ret == 0 && !cg_doc_streamed(v->doc))
		ret = replay(&b, v->doc);
	if (ret == 0)
		ret = finish(&b);
	cv->pool = b.pool;
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
	struct cg_view *cv = (struct cg_view *)v;
	for (size_t i = 0; i < v->n_devices; i++) {
		free(v->devices[i].buckets);
		free(v->devices[i].checkpoints);
		free(v->devices[i].ooms);
	}
	free(v->devices);
	for (size_t i = 0; i < v->n_allocs; i++) {
		free((char *)v->allocs[i].tensor_id);
		free((char *)v->allocs[i].span_id);
		free((char *)v->allocs[i].op_name);
	}
	free(v->allocs);
	free(v->spans);
	cgtrace_memory_report_free(v->report);
	cgtrace_doc_free(v->doc);
	cg_strpool_fini(&cv->pool);
	free(cv);
}

CG_EXPORT size_t cgtrace_view_bucket_of(const struct cgtrace_view *v, uint64_t t)
{
	if (!v->n_buckets || t <= v->start_ns || !v->bucket_ns)
		return 0;
	uint64_t i = (t - v->start_ns) / v->bucket_ns;
	return i < v->n_buckets ? (size_t)i : v->n_buckets - 1;
}

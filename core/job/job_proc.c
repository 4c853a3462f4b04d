/* SPDX-License-Identifier: MIT */
/*
 * One process of a job: its trace read streamed, its figures kept and the
 * document let go. A hook on the analysis keeps the live bytes over time
 * of each device other than the host, which the physical devices' sums
 * need (job_gpu.c); a fork child's inherited blocks are counted out of
 * them, since its parent holds them too.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "doc.h"
#include "job.h"
#include "memory_read.h"
#include "memory_replay.h"
#include "stream_sink.h"

static int vec_zero_to(struct cg_vec *v, size_t elem, size_t n)
{
	if (v->len >= n)
		return 0;
	if (cg_vec_grow(v, elem, n) < 0)
		return -ENOMEM;
	memset((char *)v->p + v->len * elem, 0, (n - v->len) * elem);
	v->len = n;
	return 0;
}

/*
 * x's device after x: its pre-existing bytes live (a fork child's inherited
 * heap, a capture window's opening set), and those at its peak so far.
 */
static struct cg_job_dev *dev_after(struct cg_job_proc *p, const struct cg_stream_seen *x)
{
	if (vec_zero_to(&p->devs, sizeof(struct cg_job_dev), (size_t)x->dev + 1) < 0)
		return NULL;
	struct cg_job_dev *dev = CG_VEC_AT(&p->devs, struct cg_job_dev, x->dev);
	if (!dev->kind)
		dev->kind = strcmp(cg_doc_str(x->doc, cg_doc_device_str(x->doc, x->dev)), "cpu") ? 2 : 1;
	uint32_t gone = x->action == CGTRACE_FREE ? x->entry : x->replaced;
	if (gone != UINT32_MAX && gone < p->pre_entry.len) {
		uint64_t *e = CG_VEC_AT(&p->pre_entry, uint64_t, gone);
		dev->pre_live -= *e < dev->pre_live ? *e : dev->pre_live;
		*e = 0;
	}
	const struct cg_mem_class *c = CG_VEC_AT(&x->doc->classes, struct cg_mem_class, x->cls);
	if (x->action == CGTRACE_ALLOC && c->preexisting && x->entry != UINT32_MAX) {
		if (vec_zero_to(&p->pre_entry, sizeof(uint64_t), (size_t)x->entry + 1) < 0)
			return NULL;
		*CG_VEC_AT(&p->pre_entry, uint64_t, x->entry) = x->bytes;
		dev->pre_live += x->bytes;
	}
	/* The first moment at the highest, as the analysis takes a peak. */
	if (x->live > dev->max_live) {
		dev->max_live = x->live;
		dev->pre_at_max = dev->pre_live;
	}
	return dev;
}

static struct cg_job_series *series_of(struct cg_job_proc *p, uint16_t dev)
{
	for (size_t i = 0; i < p->series.len; i++) {
		struct cg_job_series *s = CG_VEC_AT(&p->series, struct cg_job_series, i);
		if (s->dev == dev)
			return s;
	}
	struct cg_job_series *s = CG_VEC_PUSH(&p->series, struct cg_job_series);
	if (s)
		*s = (struct cg_job_series){.dev = dev, .device = SIZE_MAX, .fd = -1};
	return s;
}

static int on_record(void *user, const struct cg_stream_seen *x)
{
	struct cg_job_proc *p = user;
	const struct cg_job_dev *dev = dev_after(p, x);
	if (!dev)
		goto oom;
	if (dev->kind == 1)
		return 0;
	struct cg_job_series *s = series_of(p, x->dev);
	if (!s)
		goto oom;
	uint64_t pre = dev->pre_live < x->live ? dev->pre_live : x->live;
	if (cg_series_put(s, x->ts, x->live, pre) < 0)
		goto oom;
	return 0;
oom:
	p->err = -ENOMEM;
	return 1;
}

static const struct cg_stream_hooks hooks = {.record = on_record};

static void series_reset(struct cg_job_proc *p)
{
	for (size_t i = 0; i < p->series.len; i++)
		cg_series_free(CG_VEC_AT(&p->series, struct cg_job_series, i));
	p->series.len = 0;
	p->devs.len = p->pre_entry.len = 0;
}

static const char *keep(struct cg_job_proc *p, const char *s)
{
	return s ? cg_arena_strdup(&p->arena, s) : NULL;
}

/* The probe closed the root span: the process ended as it should. */
static bool root_closed(const struct cgtrace_doc *doc, uint64_t *end)
{
	bool closed = true;
	for (size_t i = 0; i < cgtrace_doc_count(doc, CGTRACE_KIND_SPAN_START); i++) {
		struct cgtrace_span s;
		cgtrace_doc_span(doc, i, &s);
		if (s.closed && s.start_ns + s.duration_ns > *end)
			*end = s.start_ns + s.duration_ns;
		if (!s.closed && !s.parent_id)
			closed = false;
	}
	return closed && !cgtrace_doc_truncated(doc);
}

static void identity_of(struct cg_job_proc *p, const struct cgtrace_doc *doc,
			struct cgtrace_job_device *d)
{
	for (size_t i = 0; i < cgtrace_doc_count(doc, CGTRACE_KIND_DEVICE_INFO); i++) {
		struct cgtrace_device_info di;
		cgtrace_doc_device_info(doc, i, &di);
		if (strcmp(di.device, d->device) == 0) {
			d->uuid = di.uuid && di.uuid[0] ? keep(p, di.uuid) : NULL;
			d->name = keep(p, di.name);
			if (!d->capacity_bytes && di.has_total)
				d->capacity_bytes = di.total_bytes;
			return;
		}
	}
}

static int figures(struct cg_job_proc *p, struct cgtrace_job_process *jp, const struct cgtrace_doc *doc,
		   const struct cg_stream *s)
{
	struct cgtrace_process pr;
	if (cgtrace_doc_process(doc, &pr) < 0)
		return -EINVAL;
	jp->process = pr;
	jp->process.host = keep(p, pr.host);
	jp->process.executable = keep(p, pr.executable);
	jp->process.cmdline = keep(p, pr.cmdline);
	jp->process.boot_id = keep(p, pr.boot_id);
	/* rank_source is one of the library's own names. */

	struct cgtrace_memory_report *rep;
	int ret = cgtrace_memory_analyze_largest(doc, 1, &rep);
	if (ret < 0)
		return ret;
	jp->alloc_count = rep->alloc_count;
	jp->free_count = rep->free_count;
	jp->n_devices = rep->n_devices;
	jp->devices = cg_arena_alloc(&p->arena, (rep->n_devices ? rep->n_devices : 1) * sizeof(*jp->devices));
	if (!jp->devices) {
		cgtrace_memory_report_free(rep);
		return -ENOMEM;
	}
	for (size_t i = 0; i < rep->n_devices; i++) {
		const struct cgtrace_device_peak *dp = &rep->by_device[i];
		jp->devices[i] = (struct cgtrace_job_device){
			.device = keep(p, dp->device),
			.peak_bytes = dp->peak_bytes,
			.peak_ns = dp->peak_timestamp_ns, /* the trace's own time until placed */
			.final_bytes = dp->final_bytes,
			.alloc_count = dp->alloc_count,
			.free_count = dp->free_count,
			.capacity_bytes = dp->capacity_bytes,
		};
		identity_of(p, doc, &jp->devices[i]);
		if (dp->peak_bytes > jp->peak_bytes)
			jp->peak_bytes = dp->peak_bytes;
	}
	cgtrace_memory_report_free(rep);
	/* Pre-existing blocks: inherited only by a fork child; never a leak of this process. */
	for (size_t k = 0; k < p->devs.len; k++) {
		const struct cg_job_dev *dv = CG_VEC_AT(&p->devs, struct cg_job_dev, k);
		const char *name = cg_doc_str(doc, cg_doc_device_str(doc, (uint16_t)k));
		for (size_t i = 0; dv->kind && i < jp->n_devices; i++) {
			struct cgtrace_job_device *d = &jp->devices[i];
			if (strcmp(d->device, name) != 0)
				continue;
			if (pr.forked_from >= 0)
				d->inherited_at_peak = dv->pre_at_max;
			d->leaked_bytes = d->final_bytes > dv->pre_live ? d->final_bytes - dv->pre_live : 0;
		}
	}
	for (size_t i = 0; i < jp->n_devices; i++)
		jp->leaked_bytes += jp->devices[i].leaked_bytes;

	uint64_t lo = 0, hi = 0;
	cg_stream_time(s, &lo, &hi);
	jp->end_ns = hi;
	jp->complete = root_closed(doc, &jp->end_ns);
	/* The series by the report's device names. */
	for (size_t k = 0; k < p->series.len; k++) {
		struct cg_job_series *se = CG_VEC_AT(&p->series, struct cg_job_series, k);
		const char *name = cg_doc_str(doc, cg_doc_device_str(doc, se->dev));
		for (size_t i = 0; i < jp->n_devices; i++)
			if (strcmp(jp->devices[i].device, name) == 0)
				se->device = i;
	}
	return p->arena.head ? 0 : -ENOMEM;
}

struct warn_ctx {
	const struct cgtrace_job_options *o;
	struct cg_job_proc *p;
	struct cgtrace_job_process *jp;
};

static void on_warn(void *user, const char *line)
{
	struct warn_ctx *w = user;
	if (!w->jp->message)
		w->jp->message = keep(w->p, line);
	if (w->o->warn)
		w->o->warn(w->o->user, line);
}

void cg_job_read_one(struct cg_job *j, size_t i, const struct cgtrace_job_options *o)
{
	struct cg_job_proc *p = &j->procs[i];
	struct cgtrace_job_process *jp = &j->pub.processes[i];
	struct warn_ctx w = {o, p, jp};
	const struct cgtrace_read_options ro = {.warn = on_warn, .user = &w};
	char err[512] = "";
	struct cgtrace_doc *doc = NULL;
	int ret = cg_read_hooked(jp->path, &ro, o->flags | CGTRACE_READ_SKIP_STACKS, &hooks, p,
				 &doc, err, sizeof(err));
	if (ret > 0)
		ret = p->err ? p->err : -ECANCELED;
	struct cg_stream *own = NULL;
	const struct cg_stream *s = ret == 0 ? cg_stream_of(doc) : NULL;
	if (ret == 0 && !s) {
		/* Read in full after all: what the hooks saw of the first read goes. */
		series_reset(p);
		const struct cg_stream_cfg cfg = {.hooks = &hooks, .hooks_user = p};
		ret = cg_replay_run(doc, &cfg, &own);
		if (ret > 0)
			ret = p->err ? p->err : -ECANCELED;
		s = own;
	}
	if (ret == 0)
		ret = figures(p, jp, doc, s);
	cg_stream_free(own);
	cgtrace_doc_free(doc);
	cg_vec_free(&p->devs, sizeof(struct cg_job_dev));
	cg_vec_free(&p->pre_entry, sizeof(uint64_t));
	if (ret < 0) {
		jp->error = ret;
		if (!err[0])
			snprintf(err, sizeof(err), "%s: %s", jp->path, strerror(-ret));
		jp->message = keep(p, err);
		series_reset(p);
	}
}

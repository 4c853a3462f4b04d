/* SPDX-License-Identifier: MIT */
/*
 * The grid: each device's live bytes reduced to buckets, each at the
 * instant its total was highest. A bucket starts from what was live when
 * it began (a bucket that only frees still held that memory), so the
 * highest bucket is the device's peak, reached at the same instant.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cgtrace.h"
#include "sat.h"
#include "view_build.h"

void cg_view_fit(uint64_t out[CGTRACE_CAT_COUNT], const uint64_t in[CGTRACE_CAT_COUNT],
		 uint64_t live)
{
	uint64_t sum = 0;
	for (int c = 0; c < CGTRACE_CAT_COUNT; c++)
		sum = cg_sat_add(sum, in[c]);
	memcpy(out, in, CGTRACE_CAT_COUNT * sizeof(*out));
	if (sum < live) {
		out[CGTRACE_CAT_OTHER] += live - sum;
		return;
	}
	/* More by category than live: a free of an unknown id took from live only. */
	for (int c = CGTRACE_CAT_COUNT - 1; c >= 0 && sum > live; c--) {
		uint64_t cut = out[c] < sum - live ? out[c] : sum - live;
		out[c] -= cut;
		sum -= cut;
	}
}

int cg_vgrid_init(struct cg_view_build *b)
{
	struct cgtrace_view *v = b->v;
	for (size_t i = 0; i < v->n_devices; i++) {
		v->devices[i].buckets = calloc(v->n_buckets, sizeof(struct cgtrace_view_bucket));
		if (!v->devices[i].buckets)
			return -ENOMEM;
	}
	return 0;
}

static uint64_t bucket_start(const struct cgtrace_view *v, size_t i)
{
	return v->start_ns + (uint64_t)i * v->bucket_ns;
}

/* Buckets from..to-1 hold what was live after the device's last record. */
static void carry(const struct cgtrace_view *v, struct cgtrace_view_bucket *bk,
		  const struct cg_vdev *d, size_t from, size_t to)
{
	for (size_t i = from; i < to; i++) {
		struct cgtrace_view_bucket *x = &bk[i];
		*x = (struct cgtrace_view_bucket){.max_ns = bucket_start(v, i),
						  .max_bytes = d->live,
						  .max_live_count = d->count,
						  .end_ns = bucket_start(v, i),
						  .end_bytes = d->live};
		cg_view_fit(x->max_by_category, d->cat, d->live);
		memcpy(x->end_by_category, x->max_by_category, sizeof(x->max_by_category));
	}
}

void cg_vgrid_record(struct cg_view_build *b, const struct cg_vrec *r)
{
	const struct cgtrace_view *v = b->v;
	const struct cgtrace_timeline_point *p = r->p;
	struct cg_vdev *d = &b->dev[r->dev];
	struct cgtrace_view_bucket *bk = v->devices[b->dev_index[r->dev]].buckets;
	size_t i = cgtrace_view_bucket_of(v, p->timestamp_ns);
	/* Analysis order is time order: a bucket once left is not come back to. */
	if (d->started && i < d->cur)
		i = d->cur;
	if (!d->started || i != d->cur) {
		carry(v, bk, d, d->started ? d->cur + 1 : 0, i + 1);
		d->cur = i;
		d->started = true;
	}
	struct cgtrace_view_bucket *x = &bk[i];
	x->records++;
	if (p->action == CGTRACE_ALLOC) {
		x->allocs++;
		x->alloc_bytes = cg_sat_add(x->alloc_bytes, p->bytes);
		d->count++;
	} else if (r->entry != UINT32_MAX) {
		d->count--; /* a free of nothing live takes bytes, not an allocation */
	}
	if (p->live_bytes > x->max_bytes) {
		x->max_bytes = p->live_bytes;
		x->max_ns = p->timestamp_ns;
		x->max_live_count = d->count;
		cg_view_fit(x->max_by_category, p->by_category, p->live_bytes);
	}
	x->end_ns = p->timestamp_ns;
	x->end_bytes = p->live_bytes;
	cg_view_fit(x->end_by_category, p->by_category, p->live_bytes);
	d->live = p->live_bytes;
	memcpy(d->cat, p->by_category, sizeof(d->cat));
}

int cg_vgrid_checkpoint(struct cg_view_build *b, uint16_t dev,
			const struct cgtrace_view_checkpoint *ck)
{
	const struct cgtrace_view *v = b->v;
	struct cg_vdev *d = &b->dev[dev];
	struct cgtrace_view_device *vd = &b->v->devices[b->dev_index[dev]];
	if (ck->oom) {
		vd->n_ooms++;
		struct cgtrace_view_checkpoint *o =
			d->ooms.len < 10000 ? CG_VEC_PUSH(&d->ooms, struct cgtrace_view_checkpoint)
					    : NULL;
		if (d->ooms.len < 10000 && !o)
			return -ENOMEM;
		if (o)
			*o = *ck;
	}
	if (!d->ck_of && !(d->ck_of = calloc(v->n_buckets, sizeof(*d->ck_of))))
		return -ENOMEM;
	size_t i = cgtrace_view_bucket_of(v, ck->timestamp_ns);
	if (d->ck_of[i]) {
		struct cgtrace_view_checkpoint *old =
			CG_VEC_AT(&d->cks, struct cgtrace_view_checkpoint, d->ck_of[i] - 1);
		/* The highest used bytes of the bucket, the earlier among equals. */
		if (ck->used_bytes > old->used_bytes ||
		    (ck->used_bytes == old->used_bytes && ck->timestamp_ns < old->timestamp_ns))
			*old = *ck;
		return 0;
	}
	struct cgtrace_view_checkpoint *n = CG_VEC_PUSH(&d->cks, struct cgtrace_view_checkpoint);
	if (!n)
		return -ENOMEM;
	*n = *ck;
	d->ck_of[i] = (uint32_t)d->cks.len;
	return 0;
}

static int ck_cmp(const void *a, const void *b)
{
	const struct cgtrace_view_checkpoint *x = a, *y = b;
	return x->timestamp_ns < y->timestamp_ns ? -1 : x->timestamp_ns > y->timestamp_ns;
}

int cg_vgrid_finish(struct cg_view_build *b)
{
	struct cgtrace_view *v = b->v;
	for (size_t dev = 0; dev < b->n_dev; dev++) {
		struct cg_vdev *d = &b->dev[dev];
		/* A device the document names without a record of its own (an identity record). */
		if (b->dev_index[dev] == SIZE_MAX)
			continue;
		struct cgtrace_view_device *vd = &v->devices[b->dev_index[dev]];
		carry(v, vd->buckets, d, d->started ? d->cur + 1 : 0, v->n_buckets);
		/* Checkpoints come in file order, which several writers may interleave. */
		if (d->cks.len)
			qsort(d->cks.p, d->cks.len, sizeof(struct cgtrace_view_checkpoint), ck_cmp);
		if (d->ooms.len)
			qsort(d->ooms.p, d->ooms.len, sizeof(struct cgtrace_view_checkpoint), ck_cmp);
		vd->checkpoints = d->cks.p;
		vd->n_checkpoints = d->cks.len;
		vd->ooms = d->ooms.p;
		vd->n_ooms_kept = d->ooms.len;
		d->cks = (struct cg_vec){0};
		d->ooms = (struct cg_vec){0};
	}
	return 0;
}

void cg_vgrid_fini(struct cg_view_build *b)
{
	for (size_t dev = 0; dev < b->n_dev; dev++) {
		struct cg_vdev *d = &b->dev[dev];
		free(d->ck_of);
		cg_vec_free(&d->cks, sizeof(struct cgtrace_view_checkpoint));
		cg_vec_free(&d->ooms, sizeof(struct cgtrace_view_checkpoint));
	}
}

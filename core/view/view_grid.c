/* SPDX-License-Identifier: MIT */
/*
 * The grid: each device's live bytes reduced to buckets, each at the
 * instant its total was highest. A bucket starts from what was live when
 * it began (a bucket that only frees still held that memory), so the
 * highest bucket is the device's peak, reached at the same instant.
 *
 * Built in one pass without the time span: slots of 2^shift ns, twice as
 * many as the buckets asked for; a time past the last slot merges the
 * slots pairwise, which keeps each bucket's maximum (the larger of two),
 * and the end merges once more if the slots used exceed the buckets asked.
 * A device's slots up to its last record's are filled; those after it are
 * filled with what was live when a later record or the end reaches them.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cgtrace.h"
#include "sat.h"
#include "view_build.h"

/* Live bytes by category made to sum to live (saturating counts may drift apart). */
static void fit(uint64_t out[CGTRACE_CAT_COUNT], const uint64_t in[CGTRACE_CAT_COUNT],
		uint64_t live)
{
	uint64_t sum = 0;
	for (int c = 0; c < CGTRACE_CAT_COUNT; c++)
		sum = cg_sat_add(sum, in[c]);
	memmove(out, in, CGTRACE_CAT_COUNT * sizeof(*out));
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

int cg_vgrid_init(struct cg_view_build *b, size_t want)
{
	b->grid = (struct cg_vgrid){.want = want, .slots = 2 * want};
	return 0;
}

/* The device of number dev, made when new; NULL when out of memory. */
static struct cg_vdev *view_dev(struct cg_view_build *b, uint16_t dev)
{
	if (dev >= b->dev.len) {
		size_t old = b->dev.len;
		if (cg_vec_grow(&b->dev, sizeof(struct cg_vdev), (size_t)dev + 1) < 0)
			return NULL;
		memset(CG_VEC_AT(&b->dev, struct cg_vdev, old), 0,
		       ((size_t)dev + 1 - old) * sizeof(struct cg_vdev));
		b->dev.len = (size_t)dev + 1;
	}
	struct cg_vdev *d = CG_VEC_AT(&b->dev, struct cg_vdev, dev);
	if (!d->used) {
		size_t n = b->grid.slots;
		d->bk = calloc(n, sizeof(*d->bk));
		d->ck = calloc(n, sizeof(*d->ck));
		d->has_ck = calloc(n, sizeof(*d->has_ck));
		if (!d->bk || !d->ck || !d->has_ck)
			return NULL;
		d->used = true;
	}
	return d;
}

static uint64_t slot_start(const struct cg_vgrid *g, size_t i)
{
	return g->base + ((uint64_t)i << g->shift);
}

/* Slot k of a device holds what its records made: up to its last record's slot. */
static bool filled(const struct cg_vdev *d, size_t k)
{
	return d->started && k <= d->cur;
}

/*
 * A slot's end (after its last record) is written once the device leaves
 * the slot, not at every record: it is the device's state then.
 */
static void flush_end(struct cg_vdev *d)
{
	if (!d->started)
		return;
	struct cgtrace_view_bucket *x = &d->bk[d->cur];
	x->end_ns = d->last_ts;
	x->end_bytes = d->live;
	memcpy(x->end_by_category, d->cat, sizeof(d->cat));
}

/* a and the slot after it, as one bucket (b filled). */
static void merge(struct cgtrace_view_bucket *a, const struct cgtrace_view_bucket *b)
{
	a->records += b->records;
	a->allocs += b->allocs;
	a->alloc_bytes = cg_sat_add(a->alloc_bytes, b->alloc_bytes);
	/* The earlier among equal maxima: the first instant it was reached. */
	if (b->max_bytes > a->max_bytes) {
		a->max_ns = b->max_ns;
		a->max_bytes = b->max_bytes;
		a->max_live_count = b->max_live_count;
		memcpy(a->max_by_category, b->max_by_category, sizeof(a->max_by_category));
	}
	if (b->records) {
		a->end_ns = b->end_ns;
		a->end_bytes = b->end_bytes;
		memcpy(a->end_by_category, b->end_by_category, sizeof(a->end_by_category));
	}
}

static void merge_ck(struct cg_vdev *d, size_t to, size_t x, size_t y)
{
	bool hx = d->has_ck[x], hy = d->has_ck[y];
	const struct cgtrace_view_checkpoint *cx = &d->ck[x], *cy = &d->ck[y];
	/* The highest used bytes, the earlier among equals. */
	const struct cgtrace_view_checkpoint *best =
		!hy ? cx : !hx ? cy : cy->used_bytes > cx->used_bytes ? cy : cx;
	struct cgtrace_view_checkpoint keep = *best;
	d->ck[to] = keep;
	d->has_ck[to] = hx || hy;
}

/*
 * Halves the resolution. Slots stay aligned to their width in absolute
 * time (slot k covers [k * w, (k + 1) * w) from 0), so the grid is the same
 * whatever order the records and checkpoints came in: the new slot j takes
 * the old slots 2j - off and 2j + 1 - off, off 1 when base is an odd slot.
 */
static void halve(struct cg_view_build *b)
{
	struct cg_vgrid *g = &b->grid;
	size_t off = (size_t)((g->base >> g->shift) & 1);
	size_t used = (g->last + off) / 2 + 1;
	for (size_t k = 0; k < b->dev.len; k++) {
		struct cg_vdev *d = CG_VEC_AT(&b->dev, struct cg_vdev, k);
		if (!d->used)
			continue;
		flush_end(d);
		/* Slot j reads slots from j on: in place, in ascending order. */
		for (size_t j = 0; j < used; j++) {
			size_t y = 2 * j + 1 - off;
			if (2 * j < off) {
				d->bk[j] = d->bk[y];
				d->ck[j] = d->ck[y];
				d->has_ck[j] = d->has_ck[y];
				continue;
			}
			size_t x = 2 * j - off;
			struct cgtrace_view_bucket m = d->bk[x];
			if (y < g->slots && filled(d, y))
				merge(&m, &d->bk[y]);
			d->bk[j] = m;
			merge_ck(d, j, x, y < g->slots ? y : x);
		}
		memset(d->bk + used, 0, (g->slots - used) * sizeof(*d->bk));
		memset(d->ck + used, 0, (g->slots - used) * sizeof(*d->ck));
		memset(d->has_ck + used, 0, (g->slots - used) * sizeof(*d->has_ck));
		if (d->started)
			d->cur = (d->cur + off) / 2;
	}
	g->base -= (uint64_t)off << g->shift;
	g->shift++;
	g->last = (g->last + off) / 2;
}

/* Moves every slot k to the right: the grid begins k slots earlier. */
static void move_right(struct cg_view_build *b, size_t k)
{
	struct cg_vgrid *g = &b->grid;
	for (size_t j = 0; j < b->dev.len; j++) {
		struct cg_vdev *d = CG_VEC_AT(&b->dev, struct cg_vdev, j);
		if (!d->used)
			continue;
		memmove(d->bk + k, d->bk, (g->last + 1) * sizeof(*d->bk));
		memmove(d->ck + k, d->ck, (g->last + 1) * sizeof(*d->ck));
		memmove(d->has_ck + k, d->has_ck, (g->last + 1) * sizeof(*d->has_ck));
		/* Nothing of any device was live before the earliest time seen so far. */
		memset(d->bk, 0, k * sizeof(*d->bk));
		memset(d->ck, 0, k * sizeof(*d->ck));
		memset(d->has_ck, 0, k * sizeof(*d->has_ck));
		if (d->started)
			d->cur += k;
	}
	g->base -= (uint64_t)k << g->shift;
	g->last += k;
}

/* The slot of time t, the grid grown or moved to hold it. */
static size_t cover(struct cg_view_build *b, uint64_t t)
{
	struct cg_vgrid *g = &b->grid;
	if (!g->any) {
		g->any = true;
		g->base = g->t_lo = g->t_hi = t;
		g->last = 0;
		return 0;
	}
	g->t_lo = t < g->t_lo ? t : g->t_lo;
	g->t_hi = t > g->t_hi ? t : g->t_hi;
	/*
	 * Before the grid: a checkpoint is met as it is read, the memory
	 * records before it once their order is settled. The grid then begins
	 * at t's slot.
	 */
	while (t < g->base) {
		uint64_t k = (g->base - ((t >> g->shift) << g->shift)) >> g->shift;
		if (g->last + k < g->slots)
			move_right(b, (size_t)k);
		else
			halve(b);
	}
	while (((t - g->base) >> g->shift) >= g->slots)
		halve(b);
	size_t i = (size_t)((t - g->base) >> g->shift);
	if (i > g->last)
		g->last = i;
	return i;
}

/* Slots from..to-1 hold what was live after the device's last record. */
static void carry(const struct cg_vgrid *g, struct cg_vdev *d, size_t from, size_t to)
{
	for (size_t i = from; i < to; i++) {
		struct cgtrace_view_bucket *x = &d->bk[i];
		*x = (struct cgtrace_view_bucket){.max_ns = slot_start(g, i),
						  .max_bytes = d->live,
						  .max_live_count = d->count,
						  .end_ns = slot_start(g, i),
						  .end_bytes = d->live};
		memcpy(x->max_by_category, d->cat, sizeof(d->cat));
		memcpy(x->end_by_category, d->cat, sizeof(d->cat));
	}
}

int cg_vgrid_record(struct cg_view_build *b, const struct cg_vrec *r)
{
	struct cg_vdev *d = view_dev(b, r->dev);
	if (!d)
		return -ENOMEM;
	size_t i = cover(b, r->ts);
	/* Analysis order is time order: a slot once left is not come back to. */
	if (d->started && i < d->cur)
		i = d->cur;
	if (!d->started || i != d->cur) {
		flush_end(d);
		carry(&b->grid, d, d->started ? d->cur + 1 : 0, i + 1);
		d->cur = i;
		d->started = true;
	}
	struct cgtrace_view_bucket *x = &d->bk[i];
	x->records++;
	if (r->action == CGTRACE_ALLOC) {
		x->allocs++;
		x->alloc_bytes = cg_sat_add(x->alloc_bytes, r->bytes);
		d->count++;
	} else if (r->entry != UINT32_MAX) {
		d->count--; /* a free of nothing live takes bytes, not an allocation */
	}
	/* Categories are made to sum to the bytes once, at the end. */
	if (r->live > x->max_bytes) {
		x->max_bytes = r->live;
		x->max_ns = r->ts;
		x->max_live_count = d->count;
		memcpy(x->max_by_category, r->by_cat, sizeof(x->max_by_category));
	}
	/* All categories: a parameter mark moves bytes between them without a record. */
	d->live = r->live;
	memcpy(d->cat, r->by_cat, sizeof(d->cat));
	d->last_ts = r->ts;
	return 0;
}

int cg_vgrid_checkpoint(struct cg_view_build *b, uint16_t dev,
			const struct cgtrace_view_checkpoint *ck)
{
	struct cg_vdev *d = view_dev(b, dev);
	if (!d)
		return -ENOMEM;
	if (ck->oom) {
		d->n_ooms++;
		if (d->ooms.len < 10000) {
			struct cgtrace_view_checkpoint *o =
				CG_VEC_PUSH(&d->ooms, struct cgtrace_view_checkpoint);
			if (!o)
				return -ENOMEM;
			*o = *ck;
		}
	}
	size_t i = cover(b, ck->timestamp_ns);
	const struct cgtrace_view_checkpoint *old = &d->ck[i];
	/* The highest used bytes of the slot, the earlier among equals. */
	if (!d->has_ck[i] || ck->used_bytes > old->used_bytes ||
	    (ck->used_bytes == old->used_bytes && ck->timestamp_ns < old->timestamp_ns))
		d->ck[i] = *ck;
	d->has_ck[i] = true;
	return 0;
}

void cg_vgrid_finish(struct cg_view_build *b)
{
	struct cg_vgrid *g = &b->grid;
	while (g->last + 1 > g->want)
		halve(b);
	struct cgtrace_view *v = b->v;
	v->n_buckets = g->any ? g->last + 1 : 1;
	v->start_ns = g->any ? g->base : 0;
	v->end_ns = g->t_hi;
	v->bucket_ns = (uint64_t)1 << g->shift;
	for (size_t k = 0; k < b->dev.len; k++) {
		struct cg_vdev *d = CG_VEC_AT(&b->dev, struct cg_vdev, k);
		if (!d->used)
			continue;
		flush_end(d);
		carry(g, d, d->started ? d->cur + 1 : 0, v->n_buckets);
		for (size_t i = 0; i < v->n_buckets; i++) {
			struct cgtrace_view_bucket *x = &d->bk[i];
			/*
			 * A maximum carried in is reached at the bucket's start, whatever
			 * the slot it was carried into before merging (the first slot
			 * merges alone when the grid's start is an odd slot).
			 */
			if (x->max_bytes == (i ? d->bk[i - 1].end_bytes : 0))
				x->max_ns = slot_start(g, i);
			if (!x->records)
				x->end_ns = slot_start(g, i);
			fit(x->max_by_category, x->max_by_category, x->max_bytes);
			fit(x->end_by_category, x->end_by_category, x->end_bytes);
		}
	}
}

void cg_vgrid_fini(struct cg_view_build *b)
{
	for (size_t k = 0; k < b->dev.len; k++) {
		struct cg_vdev *d = CG_VEC_AT(&b->dev, struct cg_vdev, k);
		free(d->bk);
		free(d->ck);
		free(d->has_ck);
		cg_vec_free(&d->ooms, sizeof(struct cgtrace_view_checkpoint));
	}
	cg_vec_free(&b->dev, sizeof(struct cg_vdev));
}

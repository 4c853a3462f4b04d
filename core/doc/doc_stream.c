/* SPDX-License-Identifier: MIT */
/*
 * The streamed document's memory analysis (doc_stream.h). It applies
 * records exactly as the full analysis replays them (memory_replay.c): a
 * free undoes its tensor id's alloc on the free's own device, an alloc of a
 * live id replaces it without freeing its bytes; analysis order is
 * timestamp, alloc before free, tensor_id bytewise, then file order.
 *
 * Records wait in a window of sorted runs before they are applied: a
 * record extends a run whose last record it follows, or starts one, and
 * once the window is full the least run head is applied. A record that
 * sorts before one already applied cannot be placed: the trace is read
 * again in full (out_of_order). A record whose timestamp is the latest
 * seen always waits, so that equal timestamps sort whatever the window.
 */
#include "doc_stream.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "doc.h"
#include "doc_build.h"
#include "fmt_int.h"
#include "hash.h"
#include "num_scan.h"
#include "sat.h"

uint32_t cg_stream_window = CG_STREAM_WINDOW;

int cg_stream_new(struct cg_stream **out)
{
	struct cg_stream *s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->peak_device = -1;
	s->first_dev = -1;
	s->window = cg_stream_window;
	s->last_alloc = UINT32_MAX;
	*out = s;
	return 0;
}

void cg_stream_free(struct cg_stream *s)
{
	if (!s)
		return;
	for (uint32_t i = 0; i < s->n_ent; i++)
		free(s->ent[i].str);
	free(s->ent);
	free(s->slots);
	for (uint32_t k = 0; k < s->n_runs; k++) {
		struct cg_stream_run *run = &s->runs[k];
		for (uint32_t j = 0; j < run->len; j++)
			free(run->r[(run->head + j) & (run->cap - 1)].str);
		free(run->r);
	}
	free(s->spare.r);
	cg_vec_free(&s->last_id, 1);
	for (size_t i = 0; i < s->devs.len; i++) {
		struct cg_stream_dev *dv = CG_VEC_AT(&s->devs, struct cg_stream_dev, i);
		cg_vec_free(&dv->born, sizeof(uint32_t));
		cg_vec_free(&dv->gone, sizeof(uint32_t));
	}
	cg_vec_free(&s->devs, sizeof(struct cg_stream_dev));
	cg_stack_figs_free(&s->figs);
	cg_vec_free(&s->born, sizeof(uint32_t));
	cg_vec_free(&s->gone, sizeof(uint32_t));
	cg_vec_free(&s->class_state, 1);
	cg_vec_free(&s->candidates, sizeof(struct cg_stream_candidate));
	cg_vec_free(&s->packed_cls, sizeof(uint32_t));
	free(s);
}

static __attribute__((noinline)) struct cg_stream_dev *dev_new(struct cg_stream *s, uint16_t dev)
{
	size_t old = s->devs.len;
	if (cg_vec_grow(&s->devs, sizeof(struct cg_stream_dev), (size_t)dev + 1) < 0)
		return NULL;
	memset(CG_VEC_AT(&s->devs, struct cg_stream_dev, old), 0,
	       ((size_t)dev + 1 - old) * sizeof(struct cg_stream_dev));
	s->devs.len = (size_t)dev + 1;
	return CG_VEC_AT(&s->devs, struct cg_stream_dev, dev);
}

/* Once per record: the growth out of line. */
static inline struct cg_stream_dev *dev_at(struct cg_stream *s, uint16_t dev)
{
	if (__builtin_expect(dev < s->devs.len, 1))
		return CG_VEC_AT(&s->devs, struct cg_stream_dev, dev);
	return dev_new(s, dev);
}

/* ---- figures by stack ---- */

/* Ids up to this many past the figures so far index the array. */
#define FIG_DIRECT_SLACK 4096u

static int fig_new(struct cg_stack_figs *f, uint64_t id, uint16_t dev, uint32_t first,
		   uint32_t *out)
{
	if (f->figs.len >= UINT32_MAX - 1)
		return -E2BIG;
	struct cg_stack_fig *g = CG_VEC_PUSH(&f->figs, struct cg_stack_fig);
	if (!g)
		return -ENOMEM;
	*out = (uint32_t)(f->figs.len - 1);
	*g = (struct cg_stack_fig){.id = id, .dev = dev};
	if (first) {
		/* After the id's first figure: the array or the map keeps pointing there. */
		struct cg_stack_fig *h = CG_VEC_AT(&f->figs, struct cg_stack_fig, first - 1);
		g->next = h->next;
		h->next = *out + 1;
	}
	return 0;
}

int cg_stack_fig_slow(struct cg_stack_figs *f, uint64_t id, uint16_t dev, uint32_t *out)
{
	uint32_t first = 0, *head = NULL;
	if (id < f->direct.len) {
		head = (uint32_t *)f->direct.p + id;
	} else if (id < 2 * (uint64_t)f->figs.len + FIG_DIRECT_SLACK) {
		size_t old = f->direct.len, want = (size_t)id + 1 > 2 * old ? (size_t)id + 1 : 2 * old;
		if (cg_vec_grow(&f->direct, sizeof(uint32_t), want) < 0)
			return -ENOMEM;
		memset((uint32_t *)f->direct.p + old, 0, (want - old) * sizeof(uint32_t));
		f->direct.len = want;
		head = (uint32_t *)f->direct.p + id;
	} else {
		uint32_t pos = UINT32_MAX, val;
		while (!first && cg_map_next(&f->far, id - 1, &pos, &val))
			if (CG_VEC_AT(&f->figs, struct cg_stack_fig, val)->id == id)
				first = val + 1;
	}
	if (head)
		first = *head;
	for (uint32_t k = first; k;) {
		const struct cg_stack_fig *g = CG_VEC_AT(&f->figs, struct cg_stack_fig, k - 1);
		if (g->dev == dev) {
			*out = k - 1;
			return 0;
		}
		k = g->next;
	}
	int r = fig_new(f, id, dev, first, out);
	if (r < 0 || first)
		return r;
	if (head) {
		*head = *out + 1;
		return 0;
	}
	return cg_map_put(&f->far, id - 1, *out);
}

void cg_stack_figs_free(struct cg_stack_figs *f)
{
	cg_vec_free(&f->figs, sizeof(struct cg_stack_fig));
	cg_vec_free(&f->direct, sizeof(uint32_t));
	cg_map_free(&f->far);
}

void cg_stream_in_order(struct cg_stream *s)
{
	s->window = 0;
}

int cg_stream_preset_capacity(struct cg_stream *s, const struct cg_stream *from)
{
	for (size_t i = 0; i < from->devs.len; i++) {
		const struct cg_stream_dev *f = CG_VEC_AT(&from->devs, struct cg_stream_dev, i);
		struct cg_stream_dev *dv = dev_at(s, (uint16_t)i);
		if (!dv)
			return -ENOMEM;
		dv->capacity = f->capacity;
		dv->has_capacity = f->has_capacity;
	}
	return 0;
}

static void stream_time(struct cg_stream *s, uint64_t ts)
{
	if (!s->has_ts || ts < s->ts_lo)
		s->ts_lo = ts;
	if (!s->has_ts || ts > s->ts_hi)
		s->ts_hi = ts;
	s->has_ts = true;
}

bool cg_stream_time(const struct cg_stream *s, uint64_t *lo, uint64_t *hi)
{
	bool any = s->has_ts;
	*lo = s->ts_lo;
	*hi = s->ts_hi;
	/* Memory records: the latest one seen, and each device's first. */
	if (s->memory_seen) {
		*hi = !any || s->max_ts > *hi ? s->max_ts : *hi;
		for (size_t k = 0; k < s->devs.len; k++) {
			const struct cg_peak_series *o =
				&CG_VEC_AT(&s->devs, struct cg_stream_dev, k)->series;
			if (o->any && (!any || o->base < *lo))
				*lo = o->base;
			any |= o->any;
		}
	}
	return any;
}

int cg_stream_checkpoint(struct cgtrace_doc *d, uint16_t dev, const struct cg_rec_device_memory *x)
{
	struct cg_stream *s = d->stream;
	struct cg_stream_dev *dv = dev_at(s, dev);
	if (!dv)
		return -ENOMEM;
	uint64_t cap = cg_sat_add(x->used_bytes, x->free_bytes);
	if (cap > dv->capacity)
		dv->capacity = cap;
	dv->has_capacity = true;
	dv->listed = true;
	s->devmem_seen++;
	stream_time(s, x->timestamp_ns);
	if (s->hooks && s->hooks->checkpoint) {
		s->point_ret = s->hooks->checkpoint(s->hooks_user, x, dev);
		if (s->point_ret)
			return -ECANCELED;
	}
	return 0;
}

/* ---- the live table: entries by id, linear probing, backward-shift deletion ---- */

/* Multiply-shift: addresses differ in their middle bits, which the product carries up. */
static uint32_t home(const struct cg_stream *s, uint64_t key)
{
	return (uint32_t)((key * 0x9e3779b97f4a7c15ull) >> s->shift);
}

static uint32_t slot_entry(const struct cg_stream_slot *sl)
{
	return (sl->val & ~CG_SLOT_STR) - 1;
}

/* The slot holding the id, or the empty slot where it would go. */
static uint32_t find_slot(const struct cg_stream *s, uint64_t key, const char *str, uint32_t n)
{
	uint32_t want = str ? CG_SLOT_STR : 0;
	uint32_t i = home(s, key);
	for (; s->slots[i].val; i = (i + 1) & s->mask) {
		const struct cg_stream_slot *sl = &s->slots[i];
		if (sl->key != key || (sl->val & CG_SLOT_STR) != want)
			continue;
		if (!str)
			return i;
		const struct cg_stream_entry *e = &s->ent[slot_entry(sl)];
		if (e->str_len == n && memcmp(e->str, str, n) == 0)
			return i;
	}
	return i;
}

static int table_grow(struct cg_stream *s)
{
	uint32_t cap = s->mask ? (s->mask + 1) * 2 : 1024;
	struct cg_stream_slot *old = s->slots;
	uint32_t old_cap = s->mask ? s->mask + 1 : 0;
	struct cg_stream_slot *slots = calloc(cap, sizeof(*slots));
	if (!slots)
		return -ENOMEM;
	s->slots = slots;
	s->mask = cap - 1;
	s->shift = 64 - (uint32_t)__builtin_ctz(cap);
	for (uint32_t i = 0; i < old_cap; i++) {
		if (!old[i].val)
			continue;
		uint32_t j = home(s, old[i].key);
		while (s->slots[j].val)
			j = (j + 1) & s->mask;
		s->slots[j] = old[i];
	}
	free(old);
	return 0;
}

static void table_remove(struct cg_stream *s, uint32_t i)
{
	s->slots[i].val = 0;
	s->used--;
	for (uint32_t j = (i + 1) & s->mask; s->slots[j].val; j = (j + 1) & s->mask) {
		uint32_t h = home(s, s->slots[j].key);
		/* Move j back to the hole when its home is not in (i, j]. */
		if (((j - h) & s->mask) >= ((j - i) & s->mask)) {
			s->slots[i] = s->slots[j];
			s->slots[j].val = 0;
			i = j;
		}
	}
}

/* ---- entries and the snapshot at the peak ---- */

static int entry_new(struct cg_stream *s, uint32_t *out)
{
	if (s->free_ent) {
		*out = s->free_ent - 1;
		s->free_ent = s->ent[*out].link;
		return 0;
	}
	if (s->n_ent == s->cap_ent) {
		if (s->cap_ent >= UINT32_MAX / 2)
			return -E2BIG;
		uint32_t cap = s->cap_ent ? s->cap_ent * 2 : 1024;
		struct cg_stream_entry *e = realloc(s->ent, cap * sizeof(*e));
		if (!e)
			return -ENOMEM;
		s->ent = e;
		s->cap_ent = cap;
	}
	*out = s->n_ent++;
	return 0;
}

static void entry_release(struct cg_stream *s, uint32_t i)
{
	struct cg_stream_entry *e = &s->ent[i];
	free(e->str);
	e->str = NULL;
	e->state = CG_ENT_FREE;
	e->link = s->free_ent;
	s->free_ent = i + 1;
}

/*
 * An entry leaves the live set, towards each snapshot: forgotten if born
 * since that peak, kept as gone if the snapshot holds it; freed once
 * neither holds it.
 */
static int entry_leave(struct cg_stream *s, struct cg_stream_dev *edv, uint32_t i)
{
	struct cg_stream_entry *e = &s->ent[i];
	if (e->state == CG_ENT_NEW) {
		uint32_t *born = s->born.p, last = born[--s->born.len];
		born[e->link] = last;
		s->ent[last].link = e->link;
		e->state = CG_ENT_OUT;
	} else {
		uint32_t *slot = CG_VEC_PUSH(&s->gone, uint32_t);
		if (!slot)
			return -ENOMEM;
		*slot = i;
		e->state = CG_ENT_DEAD;
	}
	if (!s->multi_dev) {
		if (e->state == CG_ENT_OUT)
			entry_release(s, i);
		return 0;
	}
	if (e->dstate == CG_ENT_NEW) {
		uint32_t *born = edv->born.p, last = born[--edv->born.len];
		born[e->dlink] = last;
		s->ent[last].dlink = e->dlink;
		e->dstate = CG_ENT_OUT;
	} else {
		uint32_t *slot = CG_VEC_PUSH(&edv->gone, uint32_t);
		if (!slot)
			return -ENOMEM;
		*slot = i;
		e->dstate = CG_ENT_DEAD;
	}
	if (e->state == CG_ENT_OUT && e->dstate == CG_ENT_OUT)
		entry_release(s, i);
	return 0;
}

/* A new global peak: the snapshot becomes the live set. */
static void snapshot_commit(struct cg_stream *s)
{
	const uint32_t *gone = s->gone.p, *born = s->born.p;
	for (size_t k = 0; k < s->gone.len; k++) {
		struct cg_stream_entry *e = &s->ent[gone[k]];
		e->state = CG_ENT_OUT;
		if (!s->multi_dev || e->dstate == CG_ENT_OUT)
			entry_release(s, gone[k]);
	}
	for (size_t k = 0; k < s->born.len; k++)
		s->ent[born[k]].state = CG_ENT_SNAP;
	s->gone.len = s->born.len = 0;
}

/* A new peak of a device: its snapshot becomes its live set. */
static void dev_commit(struct cg_stream *s, struct cg_stream_dev *dv)
{
	const uint32_t *gone = dv->gone.p, *born = dv->born.p;
	for (size_t k = 0; k < dv->gone.len; k++) {
		struct cg_stream_entry *e = &s->ent[gone[k]];
		e->dstate = CG_ENT_OUT;
		if (e->state == CG_ENT_OUT)
			entry_release(s, gone[k]);
	}
	for (size_t k = 0; k < dv->born.len; k++)
		s->ent[born[k]].dstate = CG_ENT_SNAP;
	dv->gone.len = dv->born.len = 0;
}

/* The device of a live entry, whose own snapshot lists hold it. */
static struct cg_stream_dev *entry_dev(struct cgtrace_doc *d, uint32_t i)
{
	return dev_at(d->stream, cg_doc_class(d, d->stream->ent[i].cls)->device);
}

/* ---- autograd_retained_bytes ---- */

/*
 * The full analysis looks up each record's span once all are read; here a
 * span may start after its first memory record. Such a span id becomes a
 * candidate with the activation bytes of that moment, settled at the end.
 */
static int backward_check(struct cgtrace_doc *d, uint32_t cls, uint64_t activation)
{
	struct cg_stream *s = d->stream;
	if (cls >= s->class_state.len) {
		size_t old = s->class_state.len;
		if (cg_vec_grow(&s->class_state, 1, (size_t)cls + 1) < 0)
			return -ENOMEM;
		memset((uint8_t *)s->class_state.p + old, 0, cls + 1 - old);
		s->class_state.len = (size_t)cls + 1;
	}
	uint8_t *st = (uint8_t *)s->class_state.p + cls;
	if (*st)
		return 0;
	*st = 1;
	uint32_t span = cg_doc_class(d, cls)->span_id;
	int step = cg_build_span_step(d, span);
	if (step == CGTRACE_STEP_BACKWARD) {
		s->seen_backward = true;
		s->backward_pos = s->pos;
		s->backward_activation = activation;
		return 0;
	}
	if (step >= 0)
		return 0;
	const struct cg_stream_candidate *c = s->candidates.p;
	for (size_t k = 0; k < s->candidates.len; k++)
		if (c[k].span_id == span)
			return 0;
	struct cg_stream_candidate *n = CG_VEC_PUSH(&s->candidates, struct cg_stream_candidate);
	if (!n)
		return -ENOMEM;
	*n = (struct cg_stream_candidate){span, s->pos, activation};
	return 0;
}

/* ---- applying one record ---- */

/*
 * A second device: the first one's snapshot lists and states start as
 * the global ones, which they have equalled so far.
 */
static int go_multi(struct cg_stream *s)
{
	struct cg_stream_dev *dv = dev_at(s, (uint16_t)s->first_dev);
	if (!dv || cg_vec_grow(&dv->born, sizeof(uint32_t), s->born.len) < 0 ||
	    cg_vec_grow(&dv->gone, sizeof(uint32_t), s->gone.len) < 0)
		return -ENOMEM;
	if (s->born.len)
		memcpy(dv->born.p, s->born.p, s->born.len * sizeof(uint32_t));
	if (s->gone.len)
		memcpy(dv->gone.p, s->gone.p, s->gone.len * sizeof(uint32_t));
	dv->born.len = s->born.len;
	dv->gone.len = s->gone.len;
	for (uint32_t i = 0; i < s->n_ent; i++) {
		struct cg_stream_entry *e = &s->ent[i];
		if (e->state == CG_ENT_FREE)
			continue;
		e->dstate = e->state;
		e->dlink = e->link;
	}
	s->multi_dev = true;
	return 0;
}

static struct cg_sv rec_id(const struct cg_stream_rec *g, char *buf);

/* The record applied, to a timeline's callback. */
static int tell(struct cgtrace_doc *d, const struct cg_stream_rec *g,
		const struct cg_stream_dev *dv, const struct cg_mem_class *c, uint64_t bytes,
		uint8_t cat)
{
	struct cg_stream *s = d->stream;
	struct cgtrace_timeline_point p = {
		.timestamp_ns = g->ts,
		.device = cg_doc_str(d, cg_doc_device_str(d, c->device)),
		.live_bytes = dv->live,
		.has_free = dv->has_capacity,
		.free_bytes = cg_sat_sub(dv->capacity, dv->live),
		.record = (size_t)g->index,
		.action = c->action,
		.bytes = bytes,
		.category = cat,
	};
	memcpy(p.by_category, dv->by_cat, sizeof(p.by_category));
	s->point_ret = s->point(s->point_user, &p);
	return s->point_ret ? -ECANCELED : 0;
}

/* The record applied, to a view's hook: what it did, nothing formatted or copied. */
static int tell_hook(struct cgtrace_doc *d, const struct cg_stream_rec *g,
		     const struct cg_stream_dev *dv, const struct cg_mem_class *c, uint64_t bytes,
		     uint8_t cat, uint32_t entry, uint32_t replaced)
{
	struct cg_stream *s = d->stream;
	struct cg_stream_seen x = {
		.doc = d,
		.ts = g->ts,
		.live = dv->live,
		.bytes = bytes,
		.by_cat = dv->by_cat,
		.dev = c->device,
		.action = c->action,
		.category = cat,
		.entry = entry,
		.cls = g->cls,
		.replaced = replaced,
	};
	if (c->action == CGTRACE_ALLOC) {
		/* The entry took the record's string; formatting waits for a hook that wants it. */
		const struct cg_stream_entry *e = &s->ent[entry];
		x.stack = g->stack;
		x.key = e->key;
		x.str = e->str;
		x.str_len = e->str_len;
	}
	s->point_ret = s->hooks->record(s->hooks_user, &x);
	return s->point_ret ? -ECANCELED : 0;
}

static int apply(struct cgtrace_doc *d, struct cg_stream_rec *g)
{
	struct cg_stream *s = d->stream;
	const struct cg_mem_class *c = cg_doc_class(d, g->cls);
	if (!s->multi_dev && (long)c->device != s->first_dev) {
		if (s->first_dev < 0)
			s->first_dev = c->device;
		else if (go_multi(s) < 0)
			return -ENOMEM;
	}
	struct cg_stream_dev *dv = dev_at(s, c->device);
	if (!dv)
		return -ENOMEM;
	if (s->used * 2 >= s->mask && table_grow(s) < 0)
		return -ENOMEM;
	const char *str = g->str;
	uint32_t slot = find_slot(s, g->key, str, g->str_len);
	int r = 0;
	uint32_t entry = UINT32_MAX, replaced = UINT32_MAX;
	uint64_t bytes = g->bytes;
	uint8_t cat = c->category;
	if (c->action == CGTRACE_ALLOC) {
		if (s->slots[slot].val) {
			s->realloc_live++;
			uint32_t old = slot_entry(&s->slots[slot]);
			replaced = old;
			r = entry_leave(s, s->multi_dev ? entry_dev(d, old) : NULL, old);
			table_remove(s, slot);
			slot = find_slot(s, g->key, str, g->str_len);
		}
		uint32_t i, fig;
		uint32_t *b = CG_VEC_PUSH(&s->born, uint32_t);
		uint32_t *db = s->multi_dev ? CG_VEC_PUSH(&dv->born, uint32_t) : NULL;
		if (r < 0 || !b || (s->multi_dev && !db) || (r = entry_new(s, &i)) < 0 ||
		    (r = cg_stack_fig_at(&s->figs, g->stack, c->device, &fig)) < 0)
			return r < 0 ? r : -ENOMEM;
		struct cg_stream_entry *e = &s->ent[i];
		/* The entry takes the record's id string. */
		*e = (struct cg_stream_entry){
			.key = g->key,
			.bytes = g->bytes,
			.timestamp_ns = g->ts,
			.str = g->str,
			.str_len = g->str_len,
			.cls = g->cls,
			.shape = g->shape,
			.link = (uint32_t)(s->born.len - 1),
			.fig = fig,
			.dlink = s->multi_dev ? (uint32_t)(dv->born.len - 1) : 0,
			.state = CG_ENT_NEW,
			.dstate = CG_ENT_NEW,
		};
		g->str = NULL;
		*b = i;
		if (db)
			*db = i;
		struct cg_stack_fig *f = CG_VEC_AT(&s->figs.figs, struct cg_stack_fig, fig);
		f->count++;
		f->total = cg_sat_add(f->total, g->bytes);
		s->last_alloc = i;
		entry = i;
		s->slots[slot] = (struct cg_stream_slot){g->key, (i + 1) | (str ? CG_SLOT_STR : 0)};
		s->used++;
		dv->live = cg_sat_add(dv->live, g->bytes);
		dv->by_cat[c->category] = cg_sat_add(dv->by_cat[c->category], g->bytes);
		dv->allocs++;
		s->alloc_count++;
		s->total_alloc_bytes = cg_sat_add(s->total_alloc_bytes, g->bytes);
	} else {
		if (s->slots[slot].val) {
			uint32_t i = slot_entry(&s->slots[slot]);
			const struct cg_stream_entry *e = &s->ent[i];
			entry = i;
			bytes = e->bytes;
			cat = cg_doc_class(d, e->cls)->category;
			/* Freed right after it was made, nothing in between: as heaptrack counts. */
			if (i == s->last_alloc)
				CG_VEC_AT(&s->figs.figs, struct cg_stack_fig, e->fig)->temporary++;
			r = entry_leave(s, s->multi_dev ? entry_dev(d, i) : NULL, i);
			table_remove(s, slot);
			if (r < 0)
				return r;
		} else {
			s->unknown_free++;
		}
		s->last_alloc = UINT32_MAX;
		dv->live = cg_sat_sub(dv->live, bytes);
		dv->by_cat[cat] = cg_sat_sub(dv->by_cat[cat], bytes);
		dv->frees++;
		s->free_count++;
	}
	dv->listed = true;
	cg_series_add(&dv->series, g->ts, dv->live);
	if (dv->live > dv->peak) {
		dv->peak = dv->live;
		dv->peak_ts = g->ts;
		if (s->multi_dev)
			dev_commit(s, dv);
	}
	if (dv->live > s->peak_bytes) {
		s->peak_bytes = dv->live;
		s->peak_ts = g->ts;
		s->peak_device = c->device;
		memcpy(s->peak_by_category, dv->by_cat, sizeof(dv->by_cat));
		snapshot_commit(s);
	}
	if (!s->seen_backward)
		r = backward_check(d, g->cls, dv->by_cat[CGTRACE_CAT_ACTIVATION]);
	s->pos++;
	/* Listeners are rare: one test on the way for the reads without any. */
	if (__builtin_expect(s->point != NULL || s->hooks != NULL, 0) && r == 0) {
		if (s->point)
			r = tell(d, g, dv, c, bytes, cat);
		if (r == 0 && s->hooks && s->hooks->record)
			r = tell_hook(d, g, dv, c, bytes, cat, entry, replaced);
	}
	return r;
}

/* ---- the reorder window ---- */

/* A record's tensor_id bytes: its string, or its key formatted as the canonical hex it was. */
static struct cg_sv rec_id(const struct cg_stream_rec *g, char *buf)
{
	if (g->str)
		return (struct cg_sv){g->str, g->str_len};
	unsigned n = cg_hex_len(g->key);
	buf[0] = '0';
	buf[1] = 'x';
	for (unsigned i = 0; i < n; i++)
		buf[2 + i] = "0123456789abcdef"[(g->key >> 4 * (n - 1 - i)) & 15];
	return (struct cg_sv){buf, 2 + n};
}

struct cg_sv cg_stream_id(const struct cg_stream_seen *x, char buf[24])
{
	struct cg_stream_rec k = {.key = x->key, .str = (char *)x->str, .str_len = x->str_len};
	return rec_id(&k, buf);
}

/* Analysis order but for file order: timestamp, alloc before free, tensor_id bytewise. */
static int rec_cmp(const struct cg_stream_rec *x, const struct cg_stream_rec *y)
{
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	if (x->action != y->action)
		return x->action < y->action ? -1 : 1;
	if (!x->str && !y->str && x->key == y->key)
		return 0;
	char bx[20], by[20];
	struct cg_sv a = rec_id(x, bx), b = rec_id(y, by);
	int c = memcmp(a.p, b.p, a.n < b.n ? a.n : b.n);
	if (c)
		return c;
	return a.n < b.n ? -1 : a.n > b.n;
}

/* The full analysis order: ties keep file order. */
static bool rec_before(const struct cg_stream_rec *x, const struct cg_stream_rec *y)
{
	int c = rec_cmp(x, y);
	return c ? c < 0 : x->index < y->index;
}

static struct cg_stream_rec *run_at(const struct cg_stream_run *run, uint32_t k)
{
	return &run->r[(run->head + k) & (run->cap - 1)];
}

static int run_push(struct cg_stream_run *run, const struct cg_stream_rec *g)
{
	if (run->len == run->cap) {
		uint32_t cap = run->cap ? run->cap * 2 : 256;
		struct cg_stream_rec *r = malloc(cap * sizeof(*r));
		if (!r)
			return -ENOMEM;
		for (uint32_t k = 0; k < run->len; k++)
			r[k] = *run_at(run, k);
		free(run->r);
		run->r = r;
		run->cap = cap;
		run->head = 0;
	}
	*run_at(run, run->len++) = *g;
	return 0;
}

/* The run whose last record g follows most closely; UINT32_MAX when none. */
static uint32_t run_for(const struct cg_stream *s, const struct cg_stream_rec *g)
{
	const struct cg_stream_run *lr = &s->runs[s->last_run];
	/* The common case: the latest run goes on, later in time. */
	if (s->last_run < s->n_runs && lr->len && g->ts > run_at(lr, lr->len - 1)->ts)
		return s->last_run;
	uint32_t best = UINT32_MAX;
	for (uint32_t k = 0; k < s->n_runs; k++) {
		const struct cg_stream_run *run = &s->runs[k];
		const struct cg_stream_rec *tail = run->len ? run_at(run, run->len - 1) : NULL;
		if (!tail || !rec_before(g, tail)) {
			const struct cg_stream_run *b = best == UINT32_MAX ? NULL : &s->runs[best];
			if (!b || !b->len || (tail && rec_before(run_at(b, b->len - 1), tail)))
				best = k;
		}
	}
	return best;
}

/* The run whose head is the least record waiting (there is one). */
static uint32_t least_run(const struct cg_stream *s)
{
	uint32_t best = 0;
	for (uint32_t k = 1; k < s->n_runs; k++)
		if (rec_before(run_at(&s->runs[k], 0), run_at(&s->runs[best], 0)))
			best = k;
	return best;
}

/* Applies the head of run best; the run goes once empty. */
static int apply_head(struct cgtrace_doc *d, uint32_t best)
{
	struct cg_stream *s = d->stream;
	struct cg_stream_run *run = &s->runs[best];
	struct cg_stream_rec g = *run_at(run, 0);
	run->head = (run->head + 1) & (run->cap - 1);
	run->len--;
	s->pending--;
	if (!run->len) {
		if (run->cap > s->spare.cap) {
			free(s->spare.r);
			s->spare = (struct cg_stream_run){.r = run->r, .cap = run->cap};
		} else {
			free(run->r);
		}
		s->runs[best] = s->runs[--s->n_runs];
		s->runs[s->n_runs] = (struct cg_stream_run){0};
		if (s->last_run == s->n_runs)
			s->last_run = best;
	}
	/* What later records must not sort before: its order key, its id kept aside. */
	s->last = g;
	s->applied_any = true;
	if (g.str) {
		if (cg_vec_grow(&s->last_id, 1, g.str_len ? g.str_len : 1) < 0) {
			free(g.str);
			return -ENOMEM;
		}
		memcpy(s->last_id.p, g.str, g.str_len);
		s->last.str = s->last_id.p;
	}
	int r = apply(d, &g);
	free(g.str);
	return r;
}

/*
 * In order, the one record waiting (of the latest timestamp) goes once a
 * later one comes, which takes its place: what window_add would do, without
 * the runs' bookkeeping, for nearly every record of an in-order trace.
 */
static bool window_pass(const struct cg_stream *s, const struct cg_stream_rec *g)
{
	return s->window == 0 && s->n_runs == 1 && s->pending == 1 && g->ts > s->max_ts &&
	       !run_at(&s->runs[0], 0)->str;
}

/*
 * The record held is applied where it waits, and g takes its place: no
 * copy of either on the way. Only what the order check reads of the last
 * record applied is kept (window_pass: it has no string).
 */
static int window_swap(struct cgtrace_doc *d, struct cg_stream_rec *g)
{
	struct cg_stream *s = d->stream;
	struct cg_stream_rec *slot = run_at(&s->runs[0], 0);
	s->last.ts = slot->ts;
	s->last.key = slot->key;
	s->last.action = slot->action;
	s->last.str = NULL;
	s->last.str_len = 0;
	s->max_ts = g->ts;
	s->last_run = 0;
	s->applied_any = true;
	int r = apply(d, slot);
	*slot = *g;
	g->str = NULL;
	return r;
}

static int window_add(struct cgtrace_doc *d, struct cg_stream_rec *g)
{
	struct cg_stream *s = d->stream;
	if (window_pass(s, g))
		return window_swap(d, g);
	if (s->applied_any && rec_cmp(g, &s->last) < 0) {
		s->out_of_order = true;
		return -ECANCELED;
	}
	uint32_t k = run_for(s, g);
	if (k == UINT32_MAX) {
		if (s->n_runs == CG_STREAM_RUNS) {
			s->out_of_order = true;
			return -ECANCELED;
		}
		k = s->n_runs++;
		s->runs[k] = s->spare;
		s->spare = (struct cg_stream_run){0};
	}
	int r = run_push(&s->runs[k], g);
	if (r < 0)
		return r;
	g->str = NULL;
	s->last_run = k;
	s->pending++;
	if (g->ts > s->max_ts)
		s->max_ts = g->ts;
	/* A record of the latest timestamp waits: one of that timestamp may sort before it. */
	while (r == 0 && s->pending > s->window) {
		uint32_t least = least_run(s);
		if (run_at(&s->runs[least], 0)->ts >= s->max_ts)
			break;
		r = apply_head(d, least);
	}
	return r;
}

int cg_stream_memory(struct cgtrace_doc *d, const struct cg_rec_memory *m, uint32_t cls,
		     uint32_t shape)
{
	struct cg_stream *s = d->stream;
	struct cg_stream_rec g = {
		.ts = m->timestamp_ns,
		.bytes = m->bytes,
		.index = s->memory_seen,
		.stack = m->stack,
		.cls = cls,
		.shape = shape,
		.action = cg_doc_class(d, cls)->action,
	};
	/* Most ids are heap addresses as the probe writes them: their value is the key, no string kept. */
	bool vmm;
	if (!cg_scan_hex_id(m->tensor_id.p, m->tensor_id.n, &vmm, &g.key) || vmm) {
		g.key = cg_hash_bytes(m->tensor_id.p, m->tensor_id.n);
		g.str = malloc(m->tensor_id.n + 1);
		if (!g.str)
			return -ENOMEM;
		memcpy(g.str, m->tensor_id.p, m->tensor_id.n);
		g.str[m->tensor_id.n] = '\0';
		g.str_len = m->tensor_id.n;
	}
	s->memory_seen++;
	int r = window_add(d, &g);
	free(g.str);
	return r;
}

/* The document class of a decoder class and action, made once. */
static int packed_class(struct cgtrace_doc *d, const struct cg_rec_memory *m,
			const struct cg_stream_packed *pk, uint32_t *out)
{
	struct cg_stream *s = d->stream;
	/* Alloc, free, pre-existing alloc: each a class of the document. */
	size_t at = (size_t)pk->dec_cls * 4 + (pk->action == CGTRACE_FREE) + 2 * (size_t)pk->pre;
	if (at < s->packed_cls.len && ((uint32_t *)s->packed_cls.p)[at]) {
		*out = ((uint32_t *)s->packed_cls.p)[at] - 1;
		return 0;
	}
	int r = cg_build_mem_class(d, m, out);
	if (r < 0)
		return r;
	if (at >= s->packed_cls.len) {
		size_t old = s->packed_cls.len, want = at + 64;
		if (cg_vec_grow(&s->packed_cls, sizeof(uint32_t), want) < 0)
			return -ENOMEM;
		memset((uint32_t *)s->packed_cls.p + old, 0, (want - old) * sizeof(uint32_t));
		s->packed_cls.len = want;
	}
	((uint32_t *)s->packed_cls.p)[at] = *out + 1;
	return 0;
}

int cg_stream_packed(struct cgtrace_doc *d, const struct cg_rec_memory *m,
		     const struct cg_stream_packed *pk)
{
	uint32_t cls;
	int r = packed_class(d, m, pk, &cls);
	if (r < 0)
		return r;
	if (pk->vmm)
		return cg_stream_memory(d, m, cls, CG_SHAPE_BYTES);
	struct cg_stream *s = d->stream;
	struct cg_stream_rec g = {
		.ts = pk->ts,
		.bytes = pk->bytes,
		.key = pk->addr,
		.index = s->memory_seen++,
		.stack = pk->stack,
		.cls = cls,
		.shape = CG_SHAPE_BYTES,
		.action = pk->action,
	};
	return window_add(d, &g);
}

int cg_stream_finish(struct cgtrace_doc *d)
{
	struct cg_stream *s = d->stream;
	int r = 0;
	while (r == 0 && s->pending)
		r = apply_head(d, least_run(s));
	if (r < 0)
		return r;
	/* One device: its peak was the global one all along. */
	for (uint32_t i = 0; !s->multi_dev && i < s->n_ent; i++)
		if (s->ent[i].state != CG_ENT_FREE)
			s->ent[i].dstate = s->ent[i].state;
	/* Candidates came before any record of a span known to be backward, in order. */
	const struct cg_stream_candidate *c = s->candidates.p;
	for (size_t k = 0; k < s->candidates.len; k++) {
		if (s->seen_backward && c[k].pos > s->backward_pos)
			break;
		if (cg_build_span_step(d, c[k].span_id) == CGTRACE_STEP_BACKWARD) {
			s->seen_backward = true;
			s->backward_pos = c[k].pos;
			s->backward_activation = c[k].activation;
			break;
		}
	}
	return 0;
}

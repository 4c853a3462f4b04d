/* SPDX-License-Identifier: MIT */
/*
 * The memory analysis (memory_stream.h). A free undoes its tensor id's
 * alloc on the free's own device, an alloc of a live id replaces it without
 * freeing its bytes; analysis order is timestamp, alloc before free,
 * tensor_id bytewise, then file order. Records come here in that order:
 * a streamed document's from the reorder window (stream_window.c), a full
 * document's replayed (memory_replay.c).
 */
#include "memory_stream.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "doc.h"
#include "doc_build.h"
#include "fmt_int.h"
#include "sat.h"
#include "stream_spans.h"

static int preset_capacity(struct cg_stream *s, const struct cg_stream *from);

int cg_stream_new(const struct cgtrace_doc *d, const struct cg_stream_cfg *cfg,
		  struct cg_stream **out)
{
	struct cg_stream *s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->doc = d;
	s->peak_device = -1;
	s->first_dev = -1;
	s->last_alloc = UINT32_MAX;
	if (cfg) {
		s->point = cfg->point;
		s->point_user = cfg->point_user;
		s->hooks = cfg->hooks;
		s->hooks_user = cfg->hooks_user;
		s->stopped = cfg->stopped;
		if (cfg->preset && preset_capacity(s, cfg->preset) < 0) {
			cg_stream_free(s);
			return -ENOMEM;
		}
	}
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
	free(s->by_id);
	for (size_t i = 0; i < s->devs.len; i++) {
		struct cg_stream_dev *dv = CG_VEC_AT(&s->devs, struct cg_stream_dev, i);
		cg_vec_free(&dv->born, sizeof(uint32_t));
		cg_vec_free(&dv->gone, sizeof(uint32_t));
		cg_vec_free(&dv->recat, sizeof(struct cg_stream_recat));
	}
	cg_vec_free(&s->devs, sizeof(struct cg_stream_dev));
	cg_stack_figs_free(&s->figs);
	cg_vec_free(&s->born, sizeof(uint32_t));
	cg_vec_free(&s->gone, sizeof(uint32_t));
	cg_vec_free(&s->class_state, 1);
	cg_vec_free(&s->candidates, sizeof(struct cg_stream_candidate));
	cg_span_queue_free(&s->spans);
	cg_uclock_free(&s->clock);
	cg_param_ranges_free(&s->params);
	cg_vec_free(&s->recat, sizeof(struct cg_stream_recat));
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

int cg_stream_devices(struct cg_stream *s, size_t n)
{
	return n && !dev_at(s, (uint16_t)(n - 1)) ? -ENOMEM : 0;
}

static int preset_capacity(struct cg_stream *s, const struct cg_stream *from)
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
	if (s->applied_any) {
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

int cg_stream_capacity(struct cg_stream *s, uint16_t dev, uint64_t used, uint64_t free_bytes)
{
	struct cg_stream_dev *dv = dev_at(s, dev);
	if (!dv)
		return -ENOMEM;
	uint64_t cap = cg_sat_add(used, free_bytes);
	if (cap > dv->capacity)
		dv->capacity = cap;
	dv->has_capacity = true;
	dv->listed = true;
	return 0;
}

int cg_stream_stop(struct cg_stream *s, int ret)
{
	s->point_ret = ret;
	if (!ret)
		return 0;
	if (s->stopped)
		*s->stopped = ret;
	return -ECANCELED;
}

int cg_stream_checkpoint(struct cg_stream *s, uint16_t dev, const struct cg_rec_device_memory *x)
{
	int r = cg_stream_capacity(s, dev, x->used_bytes, x->free_bytes);
	if (r < 0)
		return r;
	stream_time(s, x->timestamp_ns);
	if (s->hooks && s->hooks->checkpoint)
		return cg_stream_stop(s, s->hooks->checkpoint(s->hooks_user, x, dev));
	return 0;
}

/* ---- the live table: entries by id, linear probing, backward-shift deletion ---- */

static uint32_t slot_entry(const struct cg_stream_slot *sl)
{
	return (sl->val & ~CG_SLOT_STR) - 1;
}

/*
 * The slot holding the id, or the empty slot where it would go. A slot
 * compares the key itself in the entry only where the hashes
 * (cg_stream_key_hash) match: 8 bytes a slot, not 16, over a framework's
 * 10^6 slots.
 */
static uint32_t find_slot(const struct cg_stream *s, uint64_t key, const char *str, uint32_t n)
{
	uint32_t want = str ? CG_SLOT_STR : 0, hash = cg_stream_key_hash(key);
	uint32_t i = cg_stream_home(s, hash);
	for (; s->slots[i].val; i = (i + 1) & s->mask) {
		const struct cg_stream_slot *sl = &s->slots[i];
		if (sl->hash != hash || (sl->val & CG_SLOT_STR) != want)
			continue;
		const struct cg_stream_entry *e = &s->ent[slot_entry(sl)];
		if (e->key == key && (!str || (e->str_len == n && memcmp(e->str, str, n) == 0)))
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
		uint32_t j = cg_stream_home(s, old[i].hash);
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
		uint32_t h = cg_stream_home(s, s->slots[j].hash);
		/* Move j back to the hole when its home is not in (i, j]. */
		if (((j - h) & s->mask) >= ((j - i) & s->mask)) {
			s->slots[i] = s->slots[j];
			s->slots[j].val = 0;
			i = j;
		}
	}
}

/* ---- entries and the snapshot at the peak ---- */

static __attribute__((noinline)) int entry_grow(struct cg_stream *s, uint32_t *out)
{
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

/* Once per alloc: a freed entry again, the growth out of line. */
static inline int entry_new(struct cg_stream *s, uint32_t *out)
{
	if (__builtin_expect(s->free_ent != 0, 1)) {
		*out = s->free_ent - 1;
		s->free_ent = s->ent[*out].link;
		return 0;
	}
	return entry_grow(s, out);
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
	s->recat.len = 0;
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
	dv->recat.len = 0;
}

/* The device of a live entry, whose own snapshot lists hold it. */
static struct cg_stream_dev *entry_dev(struct cg_stream *s, uint32_t i)
{
	return dev_at(s, cg_doc_class(s->doc, s->ent[i].cls)->device);
}

/* ---- autograd_retained_bytes ---- */

/*
 * The first record whose own span is backward. While a document is read, a
 * span may start after its first memory record: such a span id becomes a
 * candidate with the activation bytes of that moment, settled at the end.
 */
static __attribute__((noinline)) int backward_settle(struct cg_stream *s, uint32_t cls,
							     uint64_t activation)
{
	const struct cgtrace_doc *d = s->doc;
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
	int step = cg_doc_span_step(d, span);
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

/* Once per record until a backward one: a class settled already, no call. */
static inline int backward_check(struct cg_stream *s, uint32_t cls, uint64_t activation)
{
	if (__builtin_expect(cls < s->class_state.len, 1) && ((uint8_t *)s->class_state.p)[cls])
		return 0;
	return backward_settle(s, cls, activation);
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
	    cg_vec_grow(&dv->gone, sizeof(uint32_t), s->gone.len) < 0 ||
	    cg_vec_grow(&dv->recat, sizeof(struct cg_stream_recat), s->recat.len) < 0)
		return -ENOMEM;
	if (s->recat.len)
		memcpy(dv->recat.p, s->recat.p, s->recat.len * sizeof(struct cg_stream_recat));
	dv->recat.len = s->recat.len;
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

/* The record applied, to a timeline's callback. */
static int tell(struct cg_stream *s, const struct cg_stream_rec *g,
		const struct cg_stream_dev *dv, const struct cg_mem_class *c, uint64_t bytes,
		uint8_t cat)
{
	const struct cgtrace_doc *d = s->doc;
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
	return cg_stream_stop(s, s->point(s->point_user, &p));
}

/*
 * The record applied, to a view's hook: what it did, nothing formatted or
 * copied. Inlined: a view's read calls it for every record.
 */
static inline __attribute__((always_inline)) int
tell_hook(struct cg_stream *s, const struct cg_stream_rec *g, const struct cg_stream_dev *dv,
	  const struct cg_mem_class *c, uint64_t bytes, uint8_t cat, uint32_t entry,
	  uint32_t replaced)
{
	struct cg_stream_seen x = {
		.doc = s->doc,
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
	if (c->action != CGTRACE_ALLOC && entry != UINT32_MAX) {
		const struct cg_stream_entry *e = &s->ent[entry];
		x.alloc_ts = e->timestamp_ns;
		x.stack = CG_VEC_AT(&s->figs.figs, struct cg_stack_fig, e->fig)->id;
	}
	if (c->action == CGTRACE_ALLOC) {
		/* The entry took the record's string; formatting waits for a hook that wants it. */
		const struct cg_stream_entry *e = &s->ent[entry];
		x.stack = g->stack;
		x.key = e->key;
		x.str = e->str;
		x.str_len = e->str_len;
		if (s->pooled) {
			const char *id = cg_doc_str(s->doc, (uint32_t)e->key);
			x.str = id ? id : "";
			x.str_len = (uint32_t)strlen(x.str);
		}
	}
	return cg_stream_stop(s, s->hooks->record(s->hooks_user, &x));
}

/*
 * One record. pooled (a constant: each caller gets its own copy) says the
 * ids are a full document's string ids, dense, so an array holds the live
 * set (by_id) instead of the hash table.
 */
static inline __attribute__((always_inline)) int apply_to(struct cg_stream *s,
							 struct cg_stream_rec *g, bool pooled)
{
	/* Span events up to this record's time first: one test when none waits. */
	if (__builtin_expect(s->spans.n != 0, 0) && cg_span_queue_top(&s->spans)->ts <= g->ts) {
		int r = cg_stream_drain_spans(s, g->ts);
		if (r < 0)
			return r;
	}
	s->now = g->ts;
	const struct cg_mem_class *c = cg_doc_class(s->doc, g->cls);
	if (!s->multi_dev && (long)c->device != s->first_dev) {
		if (s->first_dev < 0)
			s->first_dev = c->device;
		else if (go_multi(s) < 0)
			return -ENOMEM;
	}
	struct cg_stream_dev *dv = dev_at(s, c->device);
	if (!dv)
		return -ENOMEM;
	if (!pooled && s->used * 2 >= s->mask && table_grow(s) < 0)
		return -ENOMEM;
	const char *str = g->str;
	uint32_t slot = pooled ? 0 : find_slot(s, g->key, str, g->str_len);
	/* The id's live entry + 1, 0: none (CG_SLOT_STR aside). */
	uint32_t *live = pooled ? &s->by_id[g->key] : &s->slots[slot].val;
	int r = 0;
	uint32_t entry = UINT32_MAX, replaced = UINT32_MAX, undid = 0;
	uint64_t bytes = g->bytes;
	uint8_t cat = c->category;
	if (c->action == CGTRACE_ALLOC) {
		if (__builtin_expect(s->params.n != 0, 0) && cat != CGTRACE_CAT_PARAMETER &&
		    cg_stream_rec_in_params(s, g, pooled))
			cat = CGTRACE_CAT_PARAMETER;
		if (*live) {
			s->realloc_live++;
			uint32_t old = (*live & ~CG_SLOT_STR) - 1;
			replaced = old;
			/* Read before the entry may go, and come back as the new one. */
			if (pooled)
				undid = s->ent[old].rec + 1;
			r = entry_leave(s, s->multi_dev ? entry_dev(s, old) : NULL, old);
			if (!pooled) {
				table_remove(s, slot);
				slot = find_slot(s, g->key, str, g->str_len);
			}
		}
		uint32_t i, fig;
		uint32_t *b = CG_VEC_PUSH(&s->born, uint32_t);
		uint32_t *db = s->multi_dev ? CG_VEC_PUSH(&dv->born, uint32_t) : NULL;
		if (r < 0 || !b || (s->multi_dev && !db) || (r = entry_new(s, &i)) < 0 ||
		    (r = cg_stack_fig_at(&s->figs, s->doc->stacks_light ? 0 : g->stack,
					  CG_FIG_KEY(c->device, c->preexisting), &fig)) < 0)
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
			.rec = pooled ? (uint32_t)g->index : 0,
			.state = CG_ENT_NEW,
			.dstate = CG_ENT_NEW,
			.cat = cat,
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
		if (pooled) {
			*live = i + 1;
		} else {
			uint32_t val = (i + 1) | (str ? CG_SLOT_STR : 0);
			s->slots[slot] = (struct cg_stream_slot){cg_stream_key_hash(g->key), val};
			s->used++;
		}
		dv->live = cg_sat_add(dv->live, g->bytes);
		dv->by_cat[cat] = cg_sat_add(dv->by_cat[cat], g->bytes);
		dv->allocs++;
		s->alloc_count++;
		s->total_alloc_bytes = cg_sat_add(s->total_alloc_bytes, g->bytes);
	} else {
		if (*live) {
			uint32_t i = (*live & ~CG_SLOT_STR) - 1;
			const struct cg_stream_entry *e = &s->ent[i];
			entry = i;
			bytes = e->bytes;
			if (pooled)
				undid = e->rec + 1;
			cat = e->cat;
			/* Freed right after it was made, nothing in between: as heaptrack counts. */
			if (i == s->last_alloc)
				cg_stack_fig_add_temporary(
				    CG_VEC_AT(&s->figs.figs, struct cg_stack_fig, e->fig));
			r = entry_leave(s, s->multi_dev ? entry_dev(s, i) : NULL, i);
			if (pooled)
				*live = 0;
			else
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
		dv->peak_moment = cg_uclock_now(&s->clock, g->ts);
		if (s->multi_dev)
			dev_commit(s, dv);
	}
	if (dv->live > s->peak_bytes) {
		s->peak_bytes = dv->live;
		s->peak_ts = g->ts;
		s->peak_moment = dv->peak_moment;
		s->peak_device = c->device;
		memcpy(s->peak_by_category, dv->by_cat, sizeof(dv->by_cat));
		snapshot_commit(s);
	}
	if (!s->seen_backward)
		r = backward_check(s, g->cls, dv->by_cat[CGTRACE_CAT_ACTIVATION]);
	s->pos++;
	if (pooled)
		s->did = (struct cg_stream_did){bytes, undid, cat};
	/* Listeners are rare: one test on the way for the reads without any. */
	if (__builtin_expect(s->point != NULL || s->hooks != NULL, 0) && r == 0) {
		if (s->point)
			r = tell(s, g, dv, c, bytes, cat);
		if (r == 0 && s->hooks && s->hooks->record)
			r = tell_hook(s, g, dv, c, bytes, cat, entry, replaced);
	}
	return r;
}

int cg_stream_apply(struct cg_stream *s, struct cg_stream_rec *g)
{
	if (__builtin_expect(s->finished, 0))
		return -EINVAL;
	return apply_to(s, g, false);
}

int cg_stream_apply_pooled(struct cg_stream *s, struct cg_stream_rec *g)
{
	if (__builtin_expect(s->finished, 0))
		return -EINVAL;
	s->applied_any = true;
	return apply_to(s, g, true);
}

int cg_stream_pooled(struct cg_stream *s, size_t ids)
{
	s->by_id = calloc(ids ? ids : 1, sizeof(*s->by_id));
	if (!s->by_id)
		return -ENOMEM;
	s->pooled = true;
	return 0;
}

/* ---- ids ---- */

struct cg_sv cg_stream_key_hex(uint64_t key, char buf[20])
{
	unsigned n = cg_hex_len(key);
	buf[0] = '0';
	buf[1] = 'x';
	for (unsigned i = 0; i < n; i++)
		buf[2 + i] = "0123456789abcdef"[(key >> 4 * (n - 1 - i)) & 15];
	return (struct cg_sv){buf, 2 + n};
}

struct cg_sv cg_stream_id(const struct cg_stream_seen *x, char buf[24])
{
	return x->str ? (struct cg_sv){x->str, x->str_len} : cg_stream_key_hex(x->key, buf);
}

int cg_stream_finish(struct cg_stream *s)
{
	int r = cg_stream_drain_spans(s, UINT64_MAX);
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
		if (cg_doc_span_step(s->doc, c[k].span_id) == CGTRACE_STEP_BACKWARD) {
			s->seen_backward = true;
			s->backward_pos = c[k].pos;
			s->backward_activation = c[k].activation;
			break;
		}
	}
	/*
	 * No id is looked up after the last record: the tables of live ids
	 * go (a framework's 10^6 slots), and the figures' index by stack id
	 * (4 bytes an id); the entries and the figures stay.
	 */
	free(s->slots);
	free(s->by_id);
	s->slots = NULL;
	s->by_id = NULL;
	cg_stack_figs_unindex(&s->figs);
	s->mask = s->used = 0;
	s->finished = true;
	return 0;
}

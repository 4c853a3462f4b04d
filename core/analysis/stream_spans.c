/* SPDX-License-Identifier: MIT */
/* The memory analysis's span events, placed in time (stream_spans.h). */
#include "stream_spans.h"

#include <errno.h>
#include <string.h>

#include "cgtrace.h"
#include "doc.h"
#include "sat.h"

int cg_stream_span(struct cg_stream *s, const struct cg_span *sp, bool end)
{
	struct cg_span_ev ev;
	if (!cg_span_ev_of(sp, end, &ev))
		return 0;
	/* Records of a later time were applied already: only a full read can place it. */
	if (s->pos && ev.ts < s->now) {
		s->out_of_order = true;
		return -ECANCELED;
	}
	return cg_span_queue_push(&s->spans, &ev);
}

int cg_stream_spans_of(struct cg_stream *s, const struct cgtrace_doc *d)
{
	return cg_span_queue_doc(&s->spans, d);
}

/* A tensor id's address: the key of a canonical one, else its text parsed. */
static bool id_addr(const struct cg_stream *s, uint64_t key, const char *str, bool pooled,
		    uint64_t *addr)
{
	if (pooled)
		return cg_param_addr(cg_doc_str(s->doc, (uint32_t)key), addr);
	if (str)
		return cg_param_addr(str, addr);
	*addr = key;
	return true;
}

bool cg_stream_rec_in_params(const struct cg_stream *s, const struct cg_stream_rec *g,
			     bool pooled)
{
	uint64_t addr;
	return id_addr(s, g->key, g->str, pooled, &addr) &&
	       cg_param_ranges_has(&s->params, addr, g->bytes);
}

static int recat_push(struct cg_vec *v, uint32_t entry, uint8_t cat)
{
	struct cg_stream_recat *r = CG_VEC_PUSH(v, struct cg_stream_recat);
	if (!r)
		return -ENOMEM;
	*r = (struct cg_stream_recat){entry, cat};
	return 0;
}

/*
 * A mark: its ranges join the marked memory, and the allocations live in
 * it become parameter from now on, their bytes moved on their device.
 */
static int mark(struct cg_stream *s, uint32_t mark)
{
	const struct cgtrace_doc *d = s->doc;
	const struct cg_doc_mark *m = CG_VEC_AT(&d->marks, struct cg_doc_mark, mark - 1);
	int r = cg_param_ranges_add(&s->params, (const uint64_t *)d->mark_ranges.p + m->first,
				    m->n);
	for (uint32_t i = 0; r == 0 && i < s->n_ent; i++) {
		struct cg_stream_entry *e = &s->ent[i];
		uint64_t addr;
		if (!cg_stream_entry_live(e) || e->cat == CGTRACE_CAT_PARAMETER ||
		    !id_addr(s, e->key, e->str, s->pooled, &addr) ||
		    !cg_param_ranges_has(&s->params, addr, e->bytes))
			continue;
		struct cg_stream_dev *dv =
		    CG_VEC_AT(&s->devs, struct cg_stream_dev, cg_doc_class(d, e->cls)->device);
		/* The peaks' snapshots keep what it was then. */
		if (e->state == CG_ENT_SNAP)
			r = recat_push(&s->recat, i, e->cat);
		if (r == 0 && s->multi_dev && e->dstate == CG_ENT_SNAP)
			r = recat_push(&dv->recat, i, e->cat);
		dv->by_cat[e->cat] = cg_sat_sub(dv->by_cat[e->cat], e->bytes);
		dv->by_cat[CGTRACE_CAT_PARAMETER] =
		    cg_sat_add(dv->by_cat[CGTRACE_CAT_PARAMETER], e->bytes);
		e->cat = CGTRACE_CAT_PARAMETER;
	}
	return r;
}

/*
 * Where inferred updates start counting: a trace of one captured update
 * (meta's capture_step N, not a whole run of the probe's) holds update N.
 */
static uint64_t inferred_base(const struct cgtrace_doc *d)
{
	if (!d->has_meta || !d->meta.capture_step)
		return 0;
	for (size_t i = 0; i < d->meta.n_tags; i++) {
		const struct cgtrace_tag *t = &d->meta.tags[i];
		/* While the document is built its tags are string ids. */
		const char *k = d->build ? cg_doc_str(d, (uint32_t)(uintptr_t)t->key) : t->key;
		const char *v = d->build ? cg_doc_str(d, (uint32_t)(uintptr_t)t->value) : t->value;
		if (!strcmp(k, "cgprobe_capture") && !strcmp(v, "all"))
			return 0;
	}
	return d->meta.capture_step - 1;
}

int cg_stream_drain_spans(struct cg_stream *s, uint64_t ts)
{
	if (s->spans.n && !s->clock.i_count)
		s->clock.i_base = inferred_base(s->doc);
	while (s->spans.n && cg_span_queue_top(&s->spans)->ts <= ts) {
		struct cg_span_ev ev = *cg_span_queue_top(&s->spans);
		cg_span_queue_pop(&s->spans);
		int r = ev.mark ? mark(s, ev.mark) : 0;
		int bits = r < 0 ? r : cg_uclock_apply(&s->clock, &ev);
		if (bits < 0)
			return bits;
		if (s->hooks && s->hooks->span &&
		    (r = cg_stream_stop(s, s->hooks->span(s->hooks_user, s, &ev, bits))))
			return r;
	}
	return 0;
}

uint8_t cg_stream_entry_peak_cat(const struct cg_stream *s, uint32_t i, bool dev)
{
	const struct cg_stream_entry *e = &s->ent[i];
	const struct cg_vec *v = &s->recat;
	if (dev && s->multi_dev)
		v = &CG_VEC_AT(&s->devs, struct cg_stream_dev,
			       cg_doc_class(s->doc, e->cls)->device)->recat;
	const struct cg_stream_recat *r = v->p;
	for (size_t k = 0; k < v->len; k++)
		if (r[k].entry == i)
			return r[k].cat;
	return e->cat;
}

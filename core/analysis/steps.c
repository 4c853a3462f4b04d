/* SPDX-License-Identifier: MIT */
/* Memory per training update, built in one pass (steps.h). */
#include "steps.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "doc.h"
#include "sat.h"
#include "steps_growth.h"

/* A device as the records left it. */
struct dev_now {
	uint64_t live;
	uint64_t cat[CGTRACE_CAT_COUNT];
	bool seen; /* has memory records */
};

typedef struct cgtrace_step_figures fig_t;

/* The rows of one way of telling updates: marked, or inferred. */
struct set {
	bool active, inferred;
	struct cg_vec rows;  /* struct cgtrace_step_row */
	struct cg_vec keys;  /* uint32_t by row: a phase row's phase (0: none) */
	struct cg_vec *figs; /* by device number: fig_t by row */
	size_t n_figs;
	long cur;       /* the update row open; -1: none */
	long cur_phase; /* its phase row open (phases asked); -1: none */
	uint64_t phase_in;
	/* Time in no phase, held apart (the gap). */
	bool gap;
	uint64_t gap_start;
	struct cg_vec gap_figs; /* fig_t by device number */
};

struct cg_steps {
	struct cgtrace_steps_options opt;
	struct cg_vec now; /* struct dev_now by device number */
	struct set marked, inferred;
	struct cg_growth growth;
	uint64_t last_ts;
	int err;
};

int cg_steps_new(const struct cgtrace_steps_options *o, struct cg_steps **out)
{
	struct cg_steps *b = calloc(1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	b->opt = *o;
	b->marked = (struct set){.active = true, .cur = -1, .cur_phase = -1};
	b->inferred = (struct set){.active = true, .inferred = true, .cur = -1, .cur_phase = -1};
	*out = b;
	return 0;
}

static void set_fini(struct set *s)
{
	for (size_t d = 0; d < s->n_figs; d++)
		cg_vec_free(&s->figs[d], sizeof(fig_t));
	free(s->figs);
	cg_vec_free(&s->rows, sizeof(struct cgtrace_step_row));
	cg_vec_free(&s->keys, sizeof(uint32_t));
	cg_vec_free(&s->gap_figs, sizeof(fig_t));
	bool active = s->active, inferred = s->inferred;
	*s = (struct set){.active = active, .inferred = inferred, .cur = -1, .cur_phase = -1};
}

void cg_steps_free(struct cg_steps *b)
{
	if (!b)
		return;
	set_fini(&b->marked);
	set_fini(&b->inferred);
	cg_vec_free(&b->now, sizeof(struct dev_now));
	cg_growth_fini(&b->growth);
	free(b);
}

/* ---- figures ---- */

static struct cgtrace_step_row *row_at(struct set *s, long r)
{
	return CG_VEC_AT(&s->rows, struct cgtrace_step_row, r);
}

/* Device d's figures of row r, the device's column grown (zero: nothing live before). */
static fig_t *fig_at(struct set *s, uint16_t d, size_t r)
{
	if (d >= s->n_figs) {
		struct cg_vec *f = realloc(s->figs, ((size_t)d + 1) * sizeof(*f));
		if (!f)
			return NULL;
		memset(f + s->n_figs, 0, ((size_t)d + 1 - s->n_figs) * sizeof(*f));
		s->figs = f;
		s->n_figs = (size_t)d + 1;
	}
	struct cg_vec *v = &s->figs[d];
	if (r >= v->len) {
		if (cg_vec_grow(v, sizeof(fig_t), r + 1) < 0)
			return NULL;
		memset(CG_VEC_AT(v, fig_t, v->len), 0, (r + 1 - v->len) * sizeof(fig_t));
		v->len = r + 1;
	}
	return CG_VEC_AT(v, fig_t, r);
}

static void fig_begin(fig_t *f, const struct dev_now *n, uint64_t ts)
{
	*f = (fig_t){.peak_bytes = n->live, .peak_ns = ts, .start_bytes = n->live};
	memcpy(f->peak_by_category, n->cat, sizeof(n->cat));
}

static void fig_rec(fig_t *f, const struct cg_stream_seen *x)
{
	f->allocs += x->action == CGTRACE_ALLOC;
	if (x->live > f->peak_bytes) {
		f->peak_bytes = x->live;
		f->peak_ns = x->ts;
		memcpy(f->peak_by_category, x->by_cat, sizeof(f->peak_by_category));
	}
}

/* What a gap held, given to a row that goes on past it. */
static void fig_merge(fig_t *f, const fig_t *gap)
{
	f->allocs += gap->allocs;
	if (gap->peak_bytes > f->peak_bytes) {
		f->peak_bytes = gap->peak_bytes;
		f->peak_ns = gap->peak_ns;
		memcpy(f->peak_by_category, gap->peak_by_category, sizeof(f->peak_by_category));
	}
}

static struct dev_now *now_at(struct cg_steps *b, uint16_t d)
{
	if (d >= b->now.len) {
		if (cg_vec_grow(&b->now, sizeof(struct dev_now), (size_t)d + 1) < 0)
			return NULL;
		memset(CG_VEC_AT(&b->now, struct dev_now, b->now.len), 0,
		       ((size_t)d + 1 - b->now.len) * sizeof(struct dev_now));
		b->now.len = (size_t)d + 1;
	}
	return CG_VEC_AT(&b->now, struct dev_now, d);
}

/* Row r's figures begun on every device seen, from what is live now. */
static int row_begin_figs(struct cg_steps *b, struct set *s, size_t r, uint64_t ts)
{
	for (size_t d = 0; d < b->now.len; d++) {
		fig_t *f = fig_at(s, (uint16_t)d, r);
		if (!f)
			return -ENOMEM;
		fig_begin(f, CG_VEC_AT(&b->now, struct dev_now, d), ts);
	}
	return 0;
}

static void row_end_figs(struct cg_steps *b, struct set *s, size_t r)
{
	for (size_t d = 0; d < s->n_figs && d < b->now.len; d++)
		if (r < s->figs[d].len)
			CG_VEC_AT(&s->figs[d], fig_t, r)->end_bytes =
			    CG_VEC_AT(&b->now, struct dev_now, d)->live;
}

static long row_new(struct cg_steps *b, struct set *s, const struct cgtrace_step_row *row,
		    uint32_t key)
{
	struct cgtrace_step_row *r = CG_VEC_PUSH(&s->rows, struct cgtrace_step_row);
	uint32_t *k = r ? CG_VEC_PUSH(&s->keys, uint32_t) : NULL;
	if (!k)
		return -ENOMEM;
	*r = *row;
	*k = key;
	long i = (long)s->rows.len - 1;
	int e = row_begin_figs(b, s, (size_t)i, row->start_ns);
	return e < 0 ? e : i;
}

/* ---- phases and gaps ---- */

static bool tracks_phases(const struct cg_steps *b, const struct set *s)
{
	return b->opt.phases || s->inferred;
}

/* The phase row of key in the update open, made (*made) when new; its index or -ENOMEM. */
static long phase_row(struct cg_steps *b, struct set *s, uint32_t key, uint64_t ts, bool *made)
{
	const uint32_t *keys = s->keys.p;
	*made = false;
	for (long i = (long)s->rows.len - 1; i > s->cur; i--)
		if (keys[i] == key && row_at(s, i)->update_row == (uint32_t)s->cur)
			return i;
	*made = true;
	const struct cgtrace_step_row *u = row_at(s, s->cur);
	struct cgtrace_step_row row = {.update = u->update, .start_ns = ts, .end_ns = ts,
				       .update_row = (uint32_t)s->cur, .is_phase = true};
	return row_new(b, s, &row, key);
}

static void phase_leave(struct cg_steps *b, struct set *s, uint64_t ts)
{
	if (s->cur_phase < 0)
		return;
	struct cgtrace_step_row *r = row_at(s, s->cur_phase);
	r->end_ns = ts;
	r->time_ns = cg_sat_add(r->time_ns, ts - s->phase_in);
	row_end_figs(b, s, (size_t)s->cur_phase);
	s->cur_phase = -1;
}

static int phase_enter(struct cg_steps *b, struct set *s, uint32_t key, uint64_t ts)
{
	if (!b->opt.phases)
		return 0;
	bool made;
	long r = phase_row(b, s, key, ts, &made);
	if (r < 0)
		return (int)r;
	s->cur_phase = r;
	s->phase_in = ts;
	return 0;
}

static int gap_begin(struct cg_steps *b, struct set *s, uint64_t ts)
{
	s->gap = true;
	s->gap_start = ts;
	if (cg_vec_grow(&s->gap_figs, sizeof(fig_t), b->now.len) < 0)
		return -ENOMEM;
	s->gap_figs.len = b->now.len;
	for (size_t d = 0; d < b->now.len; d++)
		fig_begin(CG_VEC_AT(&s->gap_figs, fig_t, d), CG_VEC_AT(&b->now, struct dev_now, d),
			  ts);
	return 0;
}

static fig_t *gap_fig(struct cg_steps *b, struct set *s, uint16_t d)
{
	if (d >= s->gap_figs.len) {
		size_t old = s->gap_figs.len;
		if (cg_vec_grow(&s->gap_figs, sizeof(fig_t), (size_t)d + 1) < 0)
			return NULL;
		memset(CG_VEC_AT(&s->gap_figs, fig_t, old), 0, ((size_t)d + 1 - old) * sizeof(fig_t));
		s->gap_figs.len = (size_t)d + 1;
	}
	(void)b;
	return CG_VEC_AT(&s->gap_figs, fig_t, d);
}

/*
 * The gap ends at ts with the update going on: the update (an inferred
 * one: a marked one had its records all along) and its no-phase row get
 * what it held.
 */
static int gap_end(struct cg_steps *b, struct set *s, uint64_t ts)
{
	s->gap = false;
	long pr = -1;
	bool fresh = false;
	if (b->opt.phases && (pr = phase_row(b, s, 0, s->gap_start, &fresh)) < 0)
		return (int)pr;
	for (size_t d = 0; d < s->gap_figs.len; d++) {
		const fig_t *g = CG_VEC_AT(&s->gap_figs, fig_t, d);
		fig_t *u = s->inferred ? fig_at(s, (uint16_t)d, (size_t)s->cur) : NULL;
		fig_t *p = pr >= 0 ? fig_at(s, (uint16_t)d, (size_t)pr) : NULL;
		if ((s->inferred && !u) || (pr >= 0 && !p))
			return -ENOMEM;
		if (u)
			fig_merge(u, g);
		if (p && fresh)
			*p = *g;
		else if (p)
			fig_merge(p, g);
	}
	if (pr >= 0) {
		struct cgtrace_step_row *r = row_at(s, pr);
		r->end_ns = ts;
		r->time_ns = cg_sat_add(r->time_ns, ts - s->gap_start);
		row_end_figs(b, s, (size_t)pr);
	}
	return 0;
}

/* The phase now is key (0: none): the set leaves the one it was in. */
static int phase_sync(struct cg_steps *b, struct set *s, uint32_t key, uint64_t ts)
{
	if (s->cur < 0 || !tracks_phases(b, s))
		return 0;
	uint32_t have = s->gap ? 0 : s->cur_phase >= 0 ? *CG_VEC_AT(&s->keys, uint32_t, s->cur_phase)
				    : UINT32_MAX;
	if (have == key)
		return 0;
	int e = 0;
	if (s->gap)
		e = gap_end(b, s, ts);
	else
		phase_leave(b, s, ts);
	if (e == 0)
		e = key ? phase_enter(b, s, key, ts) : gap_begin(b, s, ts);
	return e;
}

/* ---- updates ---- */

static int update_begin(struct cg_steps *b, struct set *s, uint64_t number, uint64_t ts,
			const struct cg_uclock *c)
{
	struct cgtrace_step_row row = {.update = number, .start_ns = ts, .end_ns = ts, .open = true};
	long r = row_new(b, s, &row, 0);
	if (r < 0)
		return (int)r;
	s->cur = r;
	s->cur_phase = -1;
	s->gap = false;
	if (s == (b->marked.rows.len ? &b->marked : &b->inferred))
		cg_growth_update(&b->growth, ts);
	return phase_sync(b, s, cg_uclock_phase(c), ts);
}

/* The update open ends at ts; final: the trace ended in its gap, which it leaves out. */
static int update_end(struct cg_steps *b, struct set *s, uint64_t ts, bool final)
{
	if (s->cur < 0)
		return 0;
	int e = 0;
	if (s->gap && final) {
		/* It ended where the gap began, with what was live then. */
		ts = s->gap_start;
		for (size_t d = 0; d < s->gap_figs.len; d++) {
			fig_t *f = fig_at(s, (uint16_t)d, (size_t)s->cur);
			if (!f)
				return -ENOMEM;
			f->end_bytes = CG_VEC_AT(&s->gap_figs, fig_t, d)->start_bytes;
		}
		s->gap = false;
	} else {
		if (s->gap)
			e = gap_end(b, s, ts);
		else
			phase_leave(b, s, ts);
		row_end_figs(b, s, (size_t)s->cur);
	}
	struct cgtrace_step_row *r = row_at(s, s->cur);
	r->end_ns = ts;
	r->time_ns = ts - r->start_ns;
	r->open = false;
	s->cur = s->cur_phase = -1;
	/* What was freed after an end the trace set back to its gap did outlive it. */
	if (!final && s == (b->marked.rows.len ? &b->marked : &b->inferred))
		cg_growth_clear(&b->growth);
	return e;
}

/* A mark moved bytes between categories without a record: the devices as they are now. */
static void now_marked(struct cg_steps *b, const struct cg_stream *s)
{
	for (size_t d = 0; d < b->now.len && d < s->devs.len; d++)
		memcpy(CG_VEC_AT(&b->now, struct dev_now, d)->cat,
		       CG_VEC_AT(&s->devs, struct cg_stream_dev, d)->by_cat,
		       sizeof(((struct dev_now *)0)->cat));
}

int cg_steps_span(struct cg_steps *b, const struct cg_stream *s, const struct cg_span_ev *ev,
		  int changed)
{
	const struct cg_uclock *c = &s->clock;
	int e = 0;
	if (ev->ts > b->last_ts)
		b->last_ts = ev->ts;
	if (ev->mark)
		now_marked(b, s);
	if (changed & CG_UC_MARKED) {
		/* The first mark settles it: updates are the marked ones. */
		if (b->inferred.active && !ev->end) {
			set_fini(&b->inferred);
			b->inferred.active = false;
			cg_growth_clear(&b->growth);
		}
		e = update_end(b, &b->marked, ev->ts, false);
		if (e == 0 && !ev->end)
			e = update_begin(b, &b->marked, ev->update, ev->ts, c);
	}
	if (e == 0 && (changed & CG_UC_INFERRED) && b->inferred.active) {
		e = update_end(b, &b->inferred, ev->ts, false);
		if (e == 0)
			e = update_begin(b, &b->inferred, c->i_update, ev->ts, c);
	}
	if (e == 0 && (changed & (CG_UC_PHASE | CG_UC_QUIET))) {
		e = phase_sync(b, &b->marked, cg_uclock_phase(c), ev->ts);
		if (e == 0 && b->inferred.active)
			e = phase_sync(b, &b->inferred, cg_uclock_phase(c), ev->ts);
	}
	return e;
}

/* ---- records ---- */

static int set_record(struct cg_steps *b, struct set *s, const struct cg_stream_seen *x)
{
	if (s->cur < 0)
		return 0;
	if (s->gap) {
		fig_t *g = gap_fig(b, s, x->dev);
		if (!g)
			return -ENOMEM;
		fig_rec(g, x);
		if (s->inferred)
			return 0;
	} else if (s->cur_phase >= 0) {
		fig_t *p = fig_at(s, x->dev, (size_t)s->cur_phase);
		if (!p)
			return -ENOMEM;
		fig_rec(p, x);
	}
	fig_t *u = fig_at(s, x->dev, (size_t)s->cur);
	if (!u)
		return -ENOMEM;
	fig_rec(u, x);
	return 0;
}

int cg_steps_record(struct cg_steps *b, const struct cg_stream_seen *x)
{
	struct dev_now *n = now_at(b, x->dev);
	if (!n)
		return -ENOMEM;
	n->live = x->live;
	memcpy(n->cat, x->by_cat, sizeof(n->cat));
	n->seen = true;
	if (x->ts > b->last_ts)
		b->last_ts = x->ts;
	int e = set_record(b, &b->marked, x);
	if (e == 0 && b->inferred.active)
		e = set_record(b, &b->inferred, x);
	if (e == 0 && b->opt.growth)
		e = cg_growth_record(&b->growth, x);
	return e;
}

static int hook_record(void *user, const struct cg_stream_seen *x)
{
	struct cg_steps *b = user;
	b->err = cg_steps_record(b, x);
	return b->err < 0;
}

static int hook_span(void *user, const struct cg_stream *s, const struct cg_span_ev *ev,
		     int changed)
{
	struct cg_steps *b = user;
	b->err = cg_steps_span(b, s, ev, changed);
	return b->err < 0;
}

const struct cg_stream_hooks cg_steps_hooks = {.record = hook_record, .span = hook_span};

/* ---- the end ---- */

/* Devices with memory records, sorted by name as a memory report's; -ENOMEM. */
static int devices(struct cg_steps *b, const struct cgtrace_doc *d, struct cgtrace_steps *out,
		   size_t **order)
{
	size_t n = 0;
	out->devices = calloc(b->now.len ? b->now.len : 1, sizeof(*out->devices));
	*order = calloc(b->now.len ? b->now.len : 1, sizeof(**order));
	if (!out->devices || !*order)
		return -ENOMEM;
	for (size_t k = 0; k < b->now.len && k < d->devices.len; k++) {
		if (!CG_VEC_AT(&b->now, struct dev_now, k)->seen)
			continue;
		const char *name = cg_doc_str(d, cg_doc_device_str(d, (uint16_t)k));
		size_t i = n++;
		while (i > 0 && strcmp(out->devices[i - 1], name) > 0) {
			out->devices[i] = out->devices[i - 1];
			(*order)[i] = (*order)[i - 1];
			i--;
		}
		out->devices[i] = name;
		(*order)[i] = k;
	}
	out->n_devices = n;
	return 0;
}

/* The slope of end bytes over the fitted updates, centred so that large counts stay exact. */
static void trend(const struct cgtrace_steps *st, size_t dev, struct cgtrace_step_trend *t)
{
	const struct cgtrace_step_figures *f = st->figures[dev];
	double mx = 0, my = 0;
	uint64_t n = 0, k = 0;
	for (size_t r = 0; r < st->n_rows; r++) {
		const struct cgtrace_step_row *row = &st->rows[r];
		if (row->is_phase || (k++, row->warmup) || row->open)
			continue;
		n++;
		mx += ((double)k - mx) / (double)n;
		my += ((double)f[r].end_bytes - my) / (double)n;
	}
	double sxy = 0, sxx = 0;
	k = 0;
	for (size_t r = 0; r < st->n_rows; r++) {
		const struct cgtrace_step_row *row = &st->rows[r];
		if (row->is_phase || (k++, row->warmup) || row->open)
			continue;
		double dx = (double)k - mx;
		sxy += dx * ((double)f[r].end_bytes - my);
		sxx += dx * dx;
	}
	t->fitted = n;
	t->bytes_per_update = n >= 2 && sxx > 0 ? sxy / sxx : 0;
	t->steady = n >= 2 && fabs(t->bytes_per_update) <= 1024.0;
}

/* The rows handed over: warm-up marked, phase names, figures by sorted device. */
static int settle(struct cg_steps *b, struct set *s, const struct cgtrace_doc *d,
		  struct cg_steps_owned *own)
{
	struct cgtrace_steps *out = &own->pub;
	size_t *order = NULL;
	int e = devices(b, d, out, &order);
	out->rows = s->rows.p;
	out->n_rows = s->rows.len;
	own->rows_cap = s->rows.cap;
	s->rows = (struct cg_vec){0};
	const uint32_t *keys = s->keys.p;
	for (size_t r = 0; r < out->n_rows; r++) {
		struct cgtrace_step_row *row = &out->rows[r];
		if (!row->is_phase) {
			row->warmup = ++out->updates <= out->warmup;
			continue;
		}
		row->warmup = out->rows[row->update_row].warmup;
		row->phase = cg_phase_name(d, keys[r]);
	}
	out->figures = e == 0 ? calloc(out->n_devices ? out->n_devices : 1, sizeof(*out->figures))
			      : NULL;
	out->trends = out->figures ? calloc(out->n_devices ? out->n_devices : 1,
					    sizeof(*out->trends))
				   : NULL;
	own->figs_cap = out->trends ? calloc(out->n_devices ? out->n_devices : 1,
					     sizeof(*own->figs_cap))
				    : NULL;
	if (!own->figs_cap) {
		free(order);
		return -ENOMEM;
	}
	for (size_t i = 0; out->trends && i < out->n_devices; i++) {
		/* Every device has a figure in every row: a column filled to the end. */
		if (!out->n_rows)
			continue;
		if (!fig_at(s, (uint16_t)order[i], out->n_rows - 1))
			break;
		struct cg_vec *v = &s->figs[order[i]];
		out->figures[i] = v->p;
		own->figs_cap[i] = v->cap;
		*v = (struct cg_vec){0};
		trend(out, i, &out->trends[i]);
	}
	free(order);
	for (size_t i = 0; i < out->n_devices; i++)
		if (!out->figures[i] && out->n_rows)
			return -ENOMEM;
	return e;
}

int cg_steps_finish(struct cg_steps *b, const struct cg_stream *s, uint64_t trace_end,
		    struct cgtrace_steps **out)
{
	if (b->last_ts > trace_end)
		trace_end = b->last_ts;
	struct cg_steps_owned *own = calloc(1, sizeof(*own));
	if (!own)
		return -ENOMEM;
	struct cgtrace_steps *st = &own->pub;
	st->warmup = b->opt.warmup;
	bool marked = b->marked.rows.len > 0;
	struct set *set = marked ? &b->marked : &b->inferred;
	st->from = set->rows.len ? marked ? CGTRACE_UPDATES_MARKED : CGTRACE_UPDATES_INFERRED
				 : CGTRACE_UPDATES_NONE;
	int e = 0;
	/* An update open at the end: a marked one runs to the end, an inferred one to its gap. */
	if (set->cur >= 0) {
		long cur = set->cur;
		bool gap = set->gap;
		e = update_end(b, set, trace_end, set->inferred);
		if (e == 0 && (!set->inferred || !gap))
			row_at(set, cur)->open = true;
	}
	if (e == 0)
		e = settle(b, set, s->doc, own);
	if (e == 0 && b->opt.growth) {
		struct cg_vec ur = {0};
		const char **names = calloc(b->now.len ? b->now.len : 1, sizeof(*names));
		for (size_t r = 0; names && r < st->n_rows; r++) {
			uint32_t *slot = st->rows[r].is_phase ? NULL : CG_VEC_PUSH(&ur, uint32_t);
			if (!st->rows[r].is_phase && !slot)
				break;
			if (slot)
				*slot = (uint32_t)r;
		}
		for (size_t k = 0; names && k < b->now.len; k++)
			names[k] = cg_doc_str(s->doc, cg_doc_device_str(s->doc, (uint16_t)k));
		const struct cg_growth_rows gr = {st->rows, ur.p, ur.len, st->warmup, names};
		e = names && ur.len == st->updates ? cg_growth_finish(&b->growth, s, &gr, st)
						   : -ENOMEM;
		free(names);
		cg_vec_free(&ur, sizeof(uint32_t));
	}
	cg_steps_free(b);
	if (e < 0) {
		cgtrace_steps_free(st);
		return e;
	}
	*out = st;
	return 0;
}

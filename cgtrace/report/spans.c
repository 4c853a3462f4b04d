/* SPDX-License-Identifier: MIT */
/*
 * Memory by span and step in the report's data block: the spans that
 * allocated the most, totals per step kind, the step spans with the
 * highest live bytes and the view's step bands.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "data.h"

/* A step span of the view, ranked by the highest of its per-device maxima. */
struct step_span {
	size_t index; /* in view->all_spans */
	uint64_t start, top;
};

static const char *step_name(enum cgtrace_step s)
{
	const char *n = cgtrace_step_name(s);
	return n ? n : "none";
}

/* Sorting context: qsort has none, and the comparisons need the view's spans. */
static const struct cgtrace_view_span_memory *sort_spans;

static int by_alloc_bytes(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	uint64_t bx = sort_spans[x].alloc_bytes, by = sort_spans[y].alloc_bytes;
	if (bx != by)
		return bx > by ? -1 : 1;
	return x < y ? -1 : x > y;
}

/* A span's id, name, step, start and, when closed or always, its duration. */
static void span_members(struct cli_jw *w, const char *id, const struct cgtrace_view_span *s,
                         bool always_dur)
{
	cli_jw_key_str(w, "id", id);
	if (!s)
		return;
	cli_jw_key_str(w, "name", s->name);
	cli_jw_key_str(w, "step", cgtrace_step_name(s->step));
	cli_jw_key_u64(w, "start", s->start_ns);
	if (s->closed || always_dur)
		cli_jw_key_u64(w, "dur", s->end_ns - s->start_ns);
}

/* A span's or a step kind's allocations and frees. */
struct span_totals {
	uint64_t alloc_count, alloc_bytes, free_count, free_bytes;
};

static const struct cli_jw_field totals_fields[] = {
    CLI_JW_U64(struct span_totals, alloc_count),
    CLI_JW_U64(struct span_totals, alloc_bytes),
    CLI_JW_U64(struct span_totals, free_count),
    CLI_JW_U64(struct span_totals, free_bytes),
};

static void totals_members(struct cli_jw *w, const struct span_totals *t)
{
	cli_jw_u64_fields(w, t, totals_fields, sizeof(totals_fields) / sizeof(totals_fields[0]));
}

static void json_span_row(struct cli_jw *w, const struct cgtrace_view *v,
                          const struct cgtrace_view_span_memory *m)
{
	const struct span_totals t = {m->alloc_count, m->alloc_bytes, m->free_count, m->free_bytes};
	cli_jw_begin_object(w);
	span_members(w, m->span_id, cgtrace_view_find_span(v, m->span_id), false);
	totals_members(w, &t);
	cli_jw_end_object(w);
}

/* The spans that allocated the most, and the totals of each step kind. */
static int json_span_memory(struct report_ctx *c)
{
	const struct cgtrace_view *v = c->v;
	struct cli_jw *w = c->w;
	size_t *order = calloc(v->n_spans ? v->n_spans : 1, sizeof(*order));
	if (!order)
		return -ENOMEM;
	struct {
		uint64_t spans;
		struct span_totals t;
	} steps[CGTRACE_STEP_OPTIMIZER + 1] = {{0}};
	for (size_t i = 0; i < v->n_spans; i++) {
		const struct cgtrace_view_span_memory *m = &v->spans[i];
		const struct cgtrace_view_span *s = cgtrace_view_find_span(v, m->span_id);
		enum cgtrace_step k = s ? s->step : CGTRACE_STEP_NONE;
		if ((unsigned)k > CGTRACE_STEP_OPTIMIZER)
			k = CGTRACE_STEP_NONE;
		struct span_totals *t = &steps[k].t;
		steps[k].spans++;
		t->alloc_count = report_sat_add(t->alloc_count, m->alloc_count);
		t->alloc_bytes = report_sat_add(t->alloc_bytes, m->alloc_bytes);
		t->free_count = report_sat_add(t->free_count, m->free_count);
		t->free_bytes = report_sat_add(t->free_bytes, m->free_bytes);
		order[i] = i;
	}
	sort_spans = v->spans;
	qsort(order, v->n_spans, sizeof(*order), by_alloc_bytes);
	cli_jw_key(w, "spans");
	cli_jw_begin_array(w);
	for (size_t i = 0; i < v->n_spans && i < c->lim->spans; i++)
		json_span_row(w, v, &v->spans[order[i]]);
	cli_jw_end_array(w);
	free(order);
	cli_jw_key_u64(w, "spans_total", v->n_spans);
	cli_jw_key(w, "steps");
	cli_jw_begin_array(w);
	for (int k = 0; k <= CGTRACE_STEP_OPTIMIZER; k++) {
		if (!steps[k].spans)
			continue;
		cli_jw_begin_object(w);
		cli_jw_key_str(w, "step", step_name((enum cgtrace_step)k));
		cli_jw_key_u64(w, "spans", steps[k].spans);
		totals_members(w, &steps[k].t);
		cli_jw_end_object(w);
	}
	cli_jw_end_array(w);
	return 0;
}

/* In time order, the document's among equals. */
static int by_start(const void *a, const void *b)
{
	const struct step_span *x = a, *y = b;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->index < y->index ? -1 : x->index > y->index;
}

/* The highest first, then in time order. */
static int by_top(const void *a, const void *b)
{
	const struct step_span *x = a, *y = b;
	if (x->top != y->top)
		return x->top > y->top ? -1 : 1;
	return by_start(a, b);
}

/* The view's step bands as columns. */
static void json_bands(struct cli_jw *w, const struct cgtrace_view *v)
{
	const size_t stride = sizeof(*v->bands);
	cli_jw_key(w, "step_bands");
	cli_jw_begin_object(w);
	cli_jw_key(w, "t0");
	cli_jw_u64_column(w, v->bands, v->n_bands, stride,
	                  offsetof(struct cgtrace_view_band, start_ns));
	cli_jw_key(w, "t1");
	cli_jw_u64_column(w, v->bands, v->n_bands, stride,
	                  offsetof(struct cgtrace_view_band, end_ns));
	cli_jw_key(w, "k");
	cli_jw_begin_array(w);
	for (size_t i = 0; i < v->n_bands; i++)
		cli_jw_u64(w, (uint64_t)v->bands[i].step);
	cli_jw_end_array(w);
	cli_jw_end_object(w);
}

/* Each step span with its highest live bytes per device, the highest lim->step_spans. */
static int json_step_spans(struct report_ctx *c)
{
	const struct cgtrace_view *v = c->v;
	struct cli_jw *w = c->w;
	size_t n = 0;
	struct step_span *ss = calloc(v->n_all_spans ? v->n_all_spans : 1, sizeof(*ss));
	if (!ss)
		return -ENOMEM;
	for (size_t i = 0; i < v->n_all_spans; i++) {
		const struct cgtrace_view_span *s = &v->all_spans[i];
		if (!s->highest)
			continue;
		struct step_span *p = &ss[n++];
		*p = (struct step_span){i, s->start_ns, 0};
		for (size_t d = 0; d < v->n_devices; d++)
			if (s->highest[d] > p->top)
				p->top = s->highest[d];
	}
	qsort(ss, n, sizeof(*ss), by_top);
	size_t cap = c->lim->step_spans, shown = n < cap ? n : cap;
	qsort(ss, shown, sizeof(*ss), by_start);
	cli_jw_key(w, "step_spans");
	cli_jw_begin_array(w);
	for (size_t i = 0; i < shown; i++) {
		const struct cgtrace_view_span *s = &v->all_spans[ss[i].index];
		cli_jw_begin_object(w);
		span_members(w, s->id, s, true);
		cli_jw_key(w, "max");
		cli_jw_u64s(w, s->highest, v->n_devices);
		cli_jw_end_object(w);
	}
	cli_jw_end_array(w);
	cli_jw_key_u64(w, "step_spans_total", n);
	json_bands(w, v);
	free(ss);
	return 0;
}

int report_json_spans(struct report_ctx *c)
{
	int ret = json_span_memory(c);
	return ret < 0 ? ret : json_step_spans(c);
}

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

static void key(struct cli_buf *b, bool *first, const char *k)
{
	cli_json_key(b, first, k);
}

static void member_u64(struct cli_buf *b, bool *first, const char *k, uint64_t v)
{
	key(b, first, k);
	cli_json_u64(b, v);
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

static void member_str(struct cli_buf *b, bool *first, const char *k, const char *v)
{
	key(b, first, k);
	cli_json_str(b, v);
}

/* A span's id, name, step, start and, when closed or always, its duration. */
static void span_members(struct cli_buf *b, bool *first, const char *id,
                         const struct cgtrace_view_span *s, bool always_dur)
{
	member_str(b, first, "id", id);
	if (!s)
		return;
	member_str(b, first, "name", s->name);
	member_str(b, first, "step", cgtrace_step_name(s->step));
	member_u64(b, first, "start", s->start_ns);
	if (s->closed || always_dur)
		member_u64(b, first, "dur", s->end_ns - s->start_ns);
}

static void json_span_row(struct cli_buf *b, const struct cgtrace_view *v,
                          const struct cgtrace_view_span_memory *m)
{
	bool first = true;
	cli_buf_putc(b, '{');
	span_members(b, &first, m->span_id, cgtrace_view_find_span(v, m->span_id), false);
	member_u64(b, &first, "alloc_count", m->alloc_count);
	member_u64(b, &first, "alloc_bytes", m->alloc_bytes);
	member_u64(b, &first, "free_count", m->free_count);
	member_u64(b, &first, "free_bytes", m->free_bytes);
	cli_buf_putc(b, '}');
}

static uint64_t sat_add(uint64_t a, uint64_t b)
{
	return a + b < a ? UINT64_MAX : a + b;
}

/* The spans that allocated the most, and the totals of each step kind. */
static int json_span_memory(struct report_ctx *c)
{
	const struct cgtrace_view *v = c->v;
	struct cli_buf *b = c->b;
	size_t *order = calloc(v->n_spans ? v->n_spans : 1, sizeof(*order));
	if (!order)
		return -ENOMEM;
	struct {
		uint64_t spans, alloc_count, alloc_bytes, free_count, free_bytes;
	} steps[CGTRACE_STEP_OPTIMIZER + 1] = {{0}};
	for (size_t i = 0; i < v->n_spans; i++) {
		const struct cgtrace_view_span_memory *m = &v->spans[i];
		const struct cgtrace_view_span *s = cgtrace_view_find_span(v, m->span_id);
		enum cgtrace_step k = s ? s->step : CGTRACE_STEP_NONE;
		if ((unsigned)k > CGTRACE_STEP_OPTIMIZER)
			k = CGTRACE_STEP_NONE;
		steps[k].spans++;
		steps[k].alloc_count = sat_add(steps[k].alloc_count, m->alloc_count);
		steps[k].alloc_bytes = sat_add(steps[k].alloc_bytes, m->alloc_bytes);
		steps[k].free_count = sat_add(steps[k].free_count, m->free_count);
		steps[k].free_bytes = sat_add(steps[k].free_bytes, m->free_bytes);
		order[i] = i;
	}
	sort_spans = v->spans;
	qsort(order, v->n_spans, sizeof(*order), by_alloc_bytes);
	cli_buf_lit(b, ",\"spans\":[");
	for (size_t i = 0; i < v->n_spans && i < REPORT_SPANS; i++) {
		if (i)
			cli_buf_putc(b, ',');
		json_span_row(b, v, &v->spans[order[i]]);
	}
	free(order);
	cli_buf_lit(b, "],\"spans_total\":");
	cli_json_u64(b, v->n_spans);
	cli_buf_lit(b, ",\"steps\":[");
	bool any = false;
	for (int k = 0; k <= CGTRACE_STEP_OPTIMIZER; k++) {
		if (!steps[k].spans)
			continue;
		bool first = true;
		cli_buf_puts(b, any ? ",{" : "{");
		any = true;
		member_str(b, &first, "step", step_name((enum cgtrace_step)k));
		member_u64(b, &first, "spans", steps[k].spans);
		member_u64(b, &first, "alloc_count", steps[k].alloc_count);
		member_u64(b, &first, "alloc_bytes", steps[k].alloc_bytes);
		member_u64(b, &first, "free_count", steps[k].free_count);
		member_u64(b, &first, "free_bytes", steps[k].free_bytes);
		cli_buf_putc(b, '}');
	}
	cli_buf_putc(b, ']');
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
static void json_bands(struct cli_buf *b, const struct cgtrace_view *v)
{
	static const char *const keys[] = {"t0", "t1", "k"};
	cli_buf_lit(b, ",\"step_bands\":{");
	for (size_t k = 0; k < 3; k++) {
		if (k)
			cli_buf_putc(b, ',');
		cli_json_str(b, keys[k]);
		cli_buf_lit(b, ":[");
		for (size_t i = 0; i < v->n_bands; i++) {
			const struct cgtrace_view_band *x = &v->bands[i];
			if (i)
				cli_buf_putc(b, ',');
			cli_json_u64(b, k == 0 ? x->start_ns : k == 1 ? x->end_ns : (uint64_t)x->step);
		}
		cli_buf_putc(b, ']');
	}
	cli_buf_putc(b, '}');
}

/* Each step span with its highest live bytes per device, the highest REPORT_STEP_SPANS. */
static int json_step_spans(struct report_ctx *c)
{
	const struct cgtrace_view *v = c->v;
	struct cli_buf *b = c->b;
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
	size_t shown = n < REPORT_STEP_SPANS ? n : REPORT_STEP_SPANS;
	qsort(ss, shown, sizeof(*ss), by_start);
	cli_buf_lit(b, ",\"step_spans\":[");
	for (size_t i = 0; i < shown; i++) {
		const struct cgtrace_view_span *s = &v->all_spans[ss[i].index];
		bool first = true;
		cli_buf_puts(b, i ? ",{" : "{");
		span_members(b, &first, s->id, s, true);
		key(b, &first, "max");
		report_json_u64s(b, s->highest, v->n_devices);
		cli_buf_putc(b, '}');
	}
	cli_buf_lit(b, "],\"step_spans_total\":");
	cli_json_u64(b, n);
	json_bands(b, v);
	free(ss);
	return 0;
}

int report_json_spans(struct report_ctx *c)
{
	int ret = json_span_memory(c);
	return ret < 0 ? ret : json_step_spans(c);
}

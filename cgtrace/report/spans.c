/* SPDX-License-Identifier: MIT */
/*
 * Memory by span and step in the report's data block: the spans that
 * allocated the most, totals per step kind, each step span's highest live
 * bytes, and the step spans merged into background bands at the grid's
 * resolution.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "data.h"

/* The spans of the document with a step kind, with their extent on the grid. */
struct step_span {
	size_t doc_index;
	uint64_t start, end;
	enum cgtrace_step step;
	uint64_t top; /* the highest of its per-device maxima */
};

/* Highest bucket maxima over ranges of buckets: an iterative segment tree per device. */
struct range_max {
	uint64_t *t;
	size_t n;
};

static int range_max_init(struct range_max *r, const struct cgtrace_view_device *d, size_t n)
{
	r->n = n;
	r->t = calloc(2 * (n ? n : 1), sizeof(*r->t));
	if (!r->t)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		r->t[n + i] = d->buckets[i].max_bytes;
	for (size_t i = n - 1; n && i > 0; i--)
		r->t[i] = r->t[2 * i] > r->t[2 * i + 1] ? r->t[2 * i] : r->t[2 * i + 1];
	return 0;
}

/* The highest of buckets [l, r). */
static uint64_t range_max_query(const struct range_max *m, size_t l, size_t r)
{
	uint64_t best = 0;
	for (l += m->n, r += m->n; l < r; l >>= 1, r >>= 1) {
		if ((l & 1) && m->t[l] > best)
			best = m->t[l];
		if (l & 1)
			l++;
		if (r & 1) {
			r--;
			if (m->t[r] > best)
				best = m->t[r];
		}
	}
	return best;
}

/* A span's highest live bytes on device d: over the buckets it covers. */
static uint64_t span_max(const struct cgtrace_view *v, const struct range_max *m, size_t d,
                         uint64_t start, uint64_t end)
{
	if (!v->n_buckets || end < v->start_ns)
		return 0;
	if (start > v->end_ns)
		return v->devices[d].buckets[v->n_buckets - 1].end_bytes;
	size_t l = cgtrace_view_bucket_of(v, start), r = cgtrace_view_bucket_of(v, end);
	return range_max_query(m, l, r + 1);
}

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

static void json_span_row(struct cli_buf *b, const struct cgtrace_doc *doc,
                          const struct cgtrace_view_span_memory *m)
{
	struct cgtrace_span s;
	bool known = report_span(doc, m->span_id, &s), first = true;
	cli_buf_putc(b, '{');
	key(b, &first, "id");
	cli_json_str(b, m->span_id);
	if (known) {
		key(b, &first, "name");
		cli_json_str(b, s.name);
		key(b, &first, "step");
		cli_json_str(b, cgtrace_step_name(s.step));
		member_u64(b, &first, "start", s.start_ns);
		if (s.closed)
			member_u64(b, &first, "dur", s.duration_ns);
	}
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
		struct cgtrace_span s;
		enum cgtrace_step k =
		    report_span(c->doc, m->span_id, &s) ? s.step : CGTRACE_STEP_NONE;
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
		json_span_row(b, c->doc, &v->spans[order[i]]);
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
		key(b, &first, "step");
		cli_json_str(b, step_name((enum cgtrace_step)k));
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

static int by_top(const void *a, const void *b)
{
	const struct step_span *x = a, *y = b;
	if (x->top != y->top)
		return x->top > y->top ? -1 : 1;
	return x->start < y->start ? -1 : x->start > y->start;
}

static int by_start(const void *a, const void *b)
{
	const struct step_span *x = a, *y = b;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->doc_index < y->doc_index ? -1 : x->doc_index > y->doc_index;
}

/*
 * Background bands: per step kind, the spans in time order, one band for
 * spans that overlap or lie closer than half a bucket (the grid cannot show
 * the gap), so there are at most about two bands per bucket and kind.
 */
static void json_bands(struct cli_buf *b, const struct cgtrace_view *v, struct step_span *ss,
                       size_t n)
{
	qsort(ss, n, sizeof(*ss), by_start);
	struct cli_buf t0 = {0}, t1 = {0}, k = {0};
	size_t bands = 0;
	for (int step = CGTRACE_STEP_FORWARD; step <= CGTRACE_STEP_OPTIMIZER; step++) {
		bool open = false;
		uint64_t s = 0, e = 0;
		for (size_t i = 0; i <= n; i++) {
			if (i < n && ss[i].step != (enum cgtrace_step)step)
				continue;
			if (i < n && open && ss[i].start <= e + v->bucket_ns / 2) {
				if (ss[i].end > e)
					e = ss[i].end;
				continue;
			}
			if (open) {
				if (bands++) {
					cli_buf_putc(&t0, ',');
					cli_buf_putc(&t1, ',');
					cli_buf_putc(&k, ',');
				}
				cli_json_u64(&t0, s);
				cli_json_u64(&t1, e);
				cli_json_u64(&k, (uint64_t)step);
			}
			if (i < n) {
				open = true;
				s = ss[i].start;
				e = ss[i].end;
			}
		}
	}
	cli_buf_lit(b, ",\"step_bands\":{\"t0\":[");
	if (bands)
		cli_buf_put(b, t0.p, t0.len);
	cli_buf_lit(b, "],\"t1\":[");
	if (bands)
		cli_buf_put(b, t1.p, t1.len);
	cli_buf_lit(b, "],\"k\":[");
	if (bands)
		cli_buf_put(b, k.p, k.len);
	cli_buf_lit(b, "]}");
	if (t0.err || t1.err || k.err)
		b->err = true;
	cli_buf_fini(&t0);
	cli_buf_fini(&t1);
	cli_buf_fini(&k);
}

/* Each step span with its highest live bytes per device, the highest REPORT_STEP_SPANS. */
static int json_step_spans(struct report_ctx *c)
{
	const struct cgtrace_view *v = c->v;
	struct cli_buf *b = c->b;
	size_t nd = c->doc ? cgtrace_doc_count(c->doc, CGTRACE_KIND_SPAN_START) : 0, n = 0;
	struct step_span *ss = calloc(nd ? nd : 1, sizeof(*ss));
	struct range_max *rm = calloc(v->n_devices ? v->n_devices : 1, sizeof(*rm));
	int ret = ss && rm ? 0 : -ENOMEM;
	for (size_t d = 0; ret == 0 && d < v->n_devices; d++)
		ret = range_max_init(&rm[d], &v->devices[d], v->n_buckets);
	for (size_t i = 0; ret == 0 && i < nd; i++) {
		struct cgtrace_span s;
		cgtrace_doc_span(c->doc, i, &s);
		if (s.step == CGTRACE_STEP_NONE || (unsigned)s.step > CGTRACE_STEP_OPTIMIZER)
			continue;
		struct step_span *p = &ss[n++];
		p->doc_index = i;
		p->step = s.step;
		p->start = s.start_ns;
		/* A span never closed lasts to the end of the trace. */
		p->end = s.closed ? sat_add(s.start_ns, s.duration_ns) : v->end_ns;
		if (p->end < p->start)
			p->end = p->start;
		for (size_t d = 0; d < v->n_devices; d++) {
			uint64_t m = span_max(v, &rm[d], d, p->start, p->end);
			if (m > p->top)
				p->top = m;
		}
	}
	if (ret == 0) {
		qsort(ss, n, sizeof(*ss), by_top);
		size_t shown = n < REPORT_STEP_SPANS ? n : REPORT_STEP_SPANS;
		qsort(ss, shown, sizeof(*ss), by_start);
		cli_buf_lit(b, ",\"step_spans\":[");
		for (size_t i = 0; i < shown; i++) {
			struct cgtrace_span s;
			cgtrace_doc_span(c->doc, ss[i].doc_index, &s);
			bool first = true;
			cli_buf_puts(b, i ? ",{" : "{");
			key(b, &first, "id");
			cli_json_str(b, s.id);
			key(b, &first, "name");
			cli_json_str(b, s.name);
			key(b, &first, "step");
			cli_json_str(b, cgtrace_step_name(s.step));
			member_u64(b, &first, "start", ss[i].start);
			member_u64(b, &first, "dur", ss[i].end - ss[i].start);
			key(b, &first, "max");
			cli_buf_putc(b, '[');
			for (size_t d = 0; d < v->n_devices; d++) {
				if (d)
					cli_buf_putc(b, ',');
				cli_json_u64(b, span_max(v, &rm[d], d, ss[i].start, ss[i].end));
			}
			cli_buf_lit(b, "]}");
		}
		cli_buf_lit(b, "],\"step_spans_total\":");
		cli_json_u64(b, n);
		json_bands(b, v, ss, n);
	}
	for (size_t d = 0; rm && d < v->n_devices; d++)
		free(rm[d].t);
	free(rm);
	free(ss);
	return ret;
}

int report_json_spans(struct report_ctx *c)
{
	int ret = json_span_memory(c);
	return ret < 0 ? ret : json_step_spans(c);
}

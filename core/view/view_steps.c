/* SPDX-License-Identifier: MIT */
/*
 * The spans as the pictures draw them, said once: each one's end (a span
 * never closed lasts to the trace's end), each step span's highest live
 * bytes per device over the buckets it covers, and the step spans merged
 * into background bands at the grid's resolution.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cgtrace.h"
#include "export.h"
#include "sat.h"
#include "view_build.h"

static bool is_step(enum cgtrace_step s)
{
	return s == CGTRACE_STEP_FORWARD || s == CGTRACE_STEP_BACKWARD ||
	       s == CGTRACE_STEP_OPTIMIZER;
}

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

/* [start, end]'s highest live bytes on every device, into out[n_devices]. */
static void highest(const struct cgtrace_view *v, const struct range_max *rm, uint64_t start,
		    uint64_t end, uint64_t *out)
{
	for (size_t d = 0; d < v->n_devices; d++) {
		if (!v->n_buckets || end < v->start_ns)
			out[d] = 0;
		else if (start > v->end_ns) /* after the grid: what was live at its end */
			out[d] = v->devices[d].buckets[v->n_buckets - 1].end_bytes;
		else
			out[d] = range_max_query(&rm[d], cgtrace_view_bucket_of(v, start),
						 cgtrace_view_bucket_of(v, end) + 1);
	}
}

static uint64_t closed_end(const struct cgtrace_span *s)
{
	return cg_sat_add(s->start_ns, s->duration_ns);
}

/* Every span with its end; the step spans' highest in the same block, after the spans. */
static int spans(struct cgtrace_view *v, const struct range_max *rm)
{
	size_t n = v->doc ? cgtrace_doc_count(v->doc, CGTRACE_KIND_SPAN_START) : 0, steps = 0;
	struct cgtrace_view_span *out = malloc((n ? n : 1) * sizeof(*out));
	if (!out)
		return -ENOMEM;
	uint64_t end = v->end_ns;
	for (size_t i = 0; i < n; i++) {
		struct cgtrace_span s;
		cgtrace_doc_span(v->doc, i, &s);
		/* The document's span, by what it names, its kind, its time and its thread. */
		out[i] = (struct cgtrace_view_span){
			.id = s.id, .parent_id = s.parent_id, .name = s.name,
			.kind = s.kind, .step = s.step,
			.start_ns = s.start_ns, .end_ns = s.closed ? closed_end(&s) : s.start_ns,
			.closed = s.closed,
			.has_thread = s.has_thread, .thread = s.thread, .thread_name = s.thread_name,
		};
		end = out[i].end_ns > end ? out[i].end_ns : end;
		steps += is_step(s.step);
	}
	v->trace_end_ns = end;
	size_t nd = v->n_devices;
	struct cgtrace_view_span *grown =
	    realloc(out, (n ? n : 1) * sizeof(*out) + steps * nd * sizeof(uint64_t));
	if (!grown) {
		free(out);
		return -ENOMEM;
	}
	out = grown;
	uint64_t *h = (uint64_t *)(out + n);
	for (size_t i = 0; i < n; i++) {
		if (!out[i].closed)
			out[i].end_ns = end;
		if (!is_step(out[i].step))
			continue;
		highest(v, rm, out[i].start_ns, out[i].end_ns, h);
		out[i].highest = h;
		h += nd;
	}
	v->all_spans = out;
	v->n_all_spans = n;
	return 0;
}

/* A step span by its start, the document's order among equals. */
struct by_start {
	uint64_t start;
	size_t i;
};

static int cmp_u64(uint64_t a, uint64_t b)
{
	return (a > b) - (a < b);
}

static int by_start_cmp(const void *a, const void *b)
{
	const struct by_start *x = a, *y = b;
	int c = cmp_u64(x->start, y->start);
	return c ? c : cmp_u64(x->i, y->i);
}

/*
 * Per step kind, its spans in time order, one band for spans that overlap
 * or lie closer than half a bucket (the grid cannot show the gap), so
 * there are at most about two bands per bucket and kind.
 */
static int bands(struct cgtrace_view *v, const struct range_max *rm)
{
	const struct cgtrace_view_span *s = v->all_spans;
	size_t n = 0, cap = v->n_all_spans ? v->n_all_spans : 1;
	struct by_start *order = malloc(cap * sizeof(*order));
	struct cgtrace_view_band *tmp = malloc(cap * sizeof(*tmp));
	int ret = order && tmp ? 0 : -ENOMEM;
	for (size_t i = 0; ret == 0 && i < v->n_all_spans; i++)
		if (is_step(s[i].step))
			order[n++] = (struct by_start){s[i].start_ns, i};
	if (ret == 0)
		qsort(order, n, sizeof(*order), by_start_cmp);
	size_t m = 0;
	for (int step = CGTRACE_STEP_FORWARD; ret == 0 && step <= CGTRACE_STEP_OPTIMIZER; step++) {
		struct cgtrace_view_band *open = NULL;
		for (size_t i = 0; i < n; i++) {
			const struct cgtrace_view_span *x = &s[order[i].i];
			if (x->step != (enum cgtrace_step)step)
				continue;
			if (open && x->start_ns <= cg_sat_add(open->end_ns, v->bucket_ns / 2)) {
				if (x->end_ns > open->end_ns)
					open->end_ns = x->end_ns;
				continue;
			}
			open = &tmp[m++];
			*open = (struct cgtrace_view_band){x->start_ns, x->end_ns, x->step, NULL};
		}
	}
	size_t nd = v->n_devices;
	struct cgtrace_view_band *out =
	    ret == 0 ? malloc((m ? m : 1) * sizeof(*out) + m * nd * sizeof(uint64_t)) : NULL;
	if (ret == 0 && !out)
		ret = -ENOMEM;
	for (size_t i = 0; ret == 0 && i < m; i++) {
		uint64_t *h = (uint64_t *)(out + m) + i * nd;
		out[i] = tmp[i];
		highest(v, rm, out[i].start_ns, out[i].end_ns, h);
		out[i].highest = h;
	}
	if (ret == 0) {
		v->bands = out;
		v->n_bands = m;
	}
	free(order);
	free(tmp);
	return ret;
}

int cg_vsteps_finish(struct cgtrace_view *v)
{
	struct range_max *rm = calloc(v->n_devices ? v->n_devices : 1, sizeof(*rm));
	int ret = rm ? 0 : -ENOMEM;
	for (size_t d = 0; ret == 0 && d < v->n_devices; d++)
		ret = range_max_init(&rm[d], &v->devices[d], v->n_buckets);
	if (ret == 0)
		ret = spans(v, rm);
	if (ret == 0)
		ret = bands(v, rm);
	for (size_t d = 0; rm && d < v->n_devices; d++)
		free(rm[d].t);
	free(rm);
	return ret;
}

static int by_id(const void *key, const void *elem)
{
	return strcmp(key, ((const struct cgtrace_view_span *)elem)->id);
}

CG_EXPORT const struct cgtrace_view_span *cgtrace_view_find_span(const struct cgtrace_view *v,
								 const char *id)
{
	if (!id || !v->n_all_spans)
		return NULL;
	return bsearch(id, v->all_spans, v->n_all_spans, sizeof(*v->all_spans), by_id);
}

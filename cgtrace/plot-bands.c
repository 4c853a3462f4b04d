/* SPDX-License-Identifier: MIT */
/*
 * Step spans as background bands, merged at the picture's resolution: spans
 * of one step kind closer than a pixel become one band, so a trace with a
 * million steps draws at most one band every other pixel.
 */
#include <errno.h>
#include <stdlib.h>

#include "plot.h"

const struct plot_step_style plot_steps[PLOT_N_STEPS] = {
    {CGTRACE_STEP_FORWARD, "#a8c8ec"},
    {CGTRACE_STEP_BACKWARD, "#f5c6a0"},
    {CGTRACE_STEP_OPTIMIZER, "#b3dcc0"},
};

/* A step span's time range. */
struct span_time {
	uint64_t a, b;
};

static int by_start(const void *x, const void *y)
{
	const struct span_time *s = x, *t = y;
	return s->a < t->a ? -1 : s->a > t->a ? 1 : 0;
}

/* Merges the spans (sorted by start) into bands over a pixel apart; out holds n. */
static size_t merge(const struct plot *p, const struct span_time *spans, size_t n,
                    struct plot_band *out)
{
	size_t m = 0;
	for (size_t i = 0; i < n; i++) {
		double x0 = plot_x(p, spans[i].a), x1 = plot_x(p, spans[i].b);
		if (m && x0 <= out[m - 1].x1 + 1.0) {
			if (x1 > out[m - 1].x1)
				out[m - 1].x1 = x1;
			continue;
		}
		out[m++] = (struct plot_band){x0, x1};
	}
	/* A band under a pixel wide still shows: a pixel, kept inside the plot. */
	for (size_t i = 0; i < m; i++)
		if (out[i].x1 - out[i].x0 < 1.0) {
			out[i].x1 = out[i].x0 + 1.0;
			if (out[i].x1 > p->right) {
				out[i].x1 = p->right;
				out[i].x0 = p->right - 1.0;
			}
		}
	return m;
}

/* The spans of one step kind inside the time axis, sorted by start; -ENOMEM. */
static int spans_of(const struct plot *p, enum cgtrace_step step, struct span_time **out, size_t *n)
{
	const struct cgtrace_doc *doc = p->v->doc;
	size_t total = doc ? cgtrace_doc_count(doc, CGTRACE_KIND_SPAN_START) : 0, k = 0;
	*out = NULL;
	*n = 0;
	for (size_t pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < total; i++) {
			struct cgtrace_span sp;
			cgtrace_doc_span(doc, i, &sp);
			if (sp.step != step)
				continue;
			uint64_t a = sp.start_ns;
			/* An open span lasts to the end of the trace. */
			uint64_t b = sp.closed ? a + sp.duration_ns : p->t1;
			if (b < a)
				b = UINT64_MAX;
			if (b < p->t0 || a > p->t1)
				continue;
			if (pass == 1)
				(*out)[k] = (struct span_time){a, b};
			k++;
		}
		if (pass == 0) {
			if (k == 0)
				return 0;
			*out = malloc(k * sizeof(**out));
			if (!*out)
				return -ENOMEM;
			*n = k;
			k = 0;
		}
	}
	qsort(*out, *n, sizeof(**out), by_start);
	return 0;
}

int plot_bands_collect(struct plot *p)
{
	for (int k = 0; k < PLOT_N_STEPS; k++) {
		struct span_time *spans;
		size_t n;
		int ret = spans_of(p, plot_steps[k].step, &spans, &n);
		if (ret == 0 && n) {
			p->bands[k] = malloc(n * sizeof(*p->bands[k]));
			ret = p->bands[k] ? 0 : -ENOMEM;
		}
		if (ret == 0 && n)
			p->n_bands[k] = merge(p, spans, n, p->bands[k]);
		free(spans);
		if (ret)
			return ret;
	}
	return 0;
}

void plot_bands_free(struct plot *p)
{
	for (int k = 0; k < PLOT_N_STEPS; k++) {
		free(p->bands[k]);
		p->bands[k] = NULL;
		p->n_bands[k] = 0;
	}
}

void plot_bands_defs(struct plot *p)
{
	struct svg *s = &p->svg;
	bool any = false;
	for (int k = 0; k < PLOT_N_STEPS; k++)
		any |= p->n_bands[k] > 0;
	if (!any)
		return;
	svg_open(s, "defs");
	for (int k = 0; k < PLOT_N_STEPS; k++) {
		if (!p->n_bands[k])
			continue;
		char id[64];
		snprintf(id, sizeof(id), "bands-%s", cgtrace_step_name(plot_steps[k].step));
		svg_open(s, "path");
		svg_attr(s, "id", id);
		svg_attr_u64(s, "data-bands", p->n_bands[k]);
		svg_d_begin(s, "d");
		for (size_t i = 0; i < p->n_bands[k]; i++) {
			const struct plot_band *b = &p->bands[k][i];
			svg_d_move(s, b->x0, 0);
			svg_d_h(s, b->x1);
			svg_d_v(s, 1);
			svg_d_h(s, b->x0);
			svg_d_close(s);
		}
		svg_d_end(s);
		svg_close(s, "path");
	}
	svg_close(s, "defs");
}

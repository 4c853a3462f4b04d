/* SPDX-License-Identifier: MIT */
/*
 * Step spans as background bands at the picture's resolution: each pixel
 * column shows the step kind that took most of its time, and a run of
 * columns of one kind is one band. So wide spans draw as they are, spans
 * narrower than a pixel merge with their neighbours of the same kind, bands
 * never pile up on each other, and a trace with a million steps draws at
 * most one band a pixel.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "plot.h"

const struct plot_step_style plot_steps[PLOT_N_STEPS] = {
    {CGTRACE_STEP_FORWARD, "#8fb8e8"},
    {CGTRACE_STEP_BACKWARD, "#f4ad7a"},
    {CGTRACE_STEP_OPTIMIZER, "#8ccf9f"},
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

/* The union of spans sorted by start, in place (nested spans of a kind count once). */
static size_t union_of(struct span_time *s, size_t n)
{
	size_t m = 0;
	for (size_t i = 0; i < n; i++) {
		if (m && s[i].a <= s[m - 1].b) {
			if (s[i].b > s[m - 1].b)
				s[m - 1].b = s[i].b;
			continue;
		}
		s[m++] = s[i];
	}
	return m;
}

/*
 * Adds to cover[c] the px of column c ([left + c, left + c + 1)) the spans
 * take: the end columns directly, those between through diff's running sum.
 */
static void add_cover(const struct plot *p, const struct span_time *s, size_t n, double *cover,
                      double *diff, size_t ncols)
{
	for (size_t i = 0; i < n; i++) {
		double xa = plot_x(p, s[i].a) - p->left, xb = plot_x(p, s[i].b) - p->left;
		size_t c0 = xa < ncols ? (size_t)xa : ncols - 1;
		size_t c1 = xb < ncols ? (size_t)xb : ncols - 1;
		/* An instant still shows, in its column, when nothing longer is there. */
		if (c0 == c1) {
			cover[c0] += xb - xa > 1e-9 ? xb - xa : 1e-9;
			continue;
		}
		cover[c0] += (double)(c0 + 1) - xa;
		cover[c1] += xb - (double)c1;
		diff[c0 + 1] += 1;
		diff[c1] -= 1;
	}
	double run = 0;
	for (size_t c = 0; c < ncols; c++) {
		run += diff[c];
		cover[c] += run;
		diff[c] = 0;
	}
}

/* Runs of columns of one kind as bands; best[c]: the kind column c shows, -1 none. */
static void runs(struct plot *p, const int *best, size_t ncols)
{
	for (size_t c = 0; c < ncols; c++) {
		int k = best[c];
		if (k < 0)
			continue;
		double x1 = p->left + (double)c + 1 < p->right ? p->left + (double)c + 1 : p->right;
		if (c > 0 && best[c - 1] == k)
			p->bands[k][p->n_bands[k] - 1].x1 = x1;
		else
			p->bands[k][p->n_bands[k]++] = (struct plot_band){p->left + (double)c, x1};
	}
}

int plot_bands_collect(struct plot *p)
{
	size_t ncols = (size_t)ceil(p->right - p->left);
	if (ncols == 0)
		ncols = 1;
	double *cover = calloc(PLOT_N_STEPS * ncols, sizeof(*cover));
	double *diff = calloc(ncols + 1, sizeof(*diff));
	int *best = malloc(ncols * sizeof(*best));
	int ret = cover && diff && best ? 0 : -ENOMEM;
	bool any = false;
	for (int k = 0; k < PLOT_N_STEPS && ret == 0; k++) {
		struct span_time *spans;
		size_t n;
		ret = spans_of(p, plot_steps[k].step, &spans, &n);
		if (ret == 0 && n) {
			add_cover(p, spans, union_of(spans, n), cover + k * ncols, diff, ncols);
			p->bands[k] = malloc(ncols * sizeof(*p->bands[k]));
			ret = p->bands[k] ? 0 : -ENOMEM;
			any = true;
		}
		free(spans);
	}
	for (size_t c = 0; c < ncols && ret == 0 && any; c++) {
		best[c] = -1;
		for (int k = 0; k < PLOT_N_STEPS; k++)
			if (cover[k * ncols + c] > 0 &&
			    (best[c] < 0 || cover[k * ncols + c] > cover[best[c] * ncols + c]))
				best[c] = k;
	}
	if (ret == 0 && any)
		runs(p, best, ncols);
	free(cover);
	free(diff);
	free(best);
	return ret;
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

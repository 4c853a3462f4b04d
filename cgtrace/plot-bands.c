/* SPDX-License-Identifier: MIT */
/*
 * The view's step bands at the picture's resolution: each band rounded to
 * whole pixel columns, at least one, and bands of a kind that meet or
 * share a column drawn as one, so a kind draws at most one band a pixel however
 * many steps the trace has. Bands of different kinds may overlap: their
 * tints blend.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "plot.h"

const enum cgtrace_step plot_steps[PLOT_N_STEPS] = {
    CGTRACE_STEP_FORWARD,
    CGTRACE_STEP_BACKWARD,
    CGTRACE_STEP_OPTIMIZER,
};

static int step_index(enum cgtrace_step step)
{
	for (int k = 0; k < PLOT_N_STEPS; k++)
		if (plot_steps[k] == step)
			return k;
	return -1;
}

/* Band b in whole columns [left + c0, left + c1) of ncols, appended to its kind or merged. */
static void add(struct plot *p, int k, const struct cgtrace_view_band *b, size_t ncols)
{
	double xa = plot_x(p, b->start_ns) - p->left, xb = plot_x(p, b->end_ns) - p->left;
	double c0 = round(xa), c1 = round(xb);
	if (c0 > (double)ncols - 1)
		c0 = (double)ncols - 1;
	if (c1 < c0 + 1)
		c1 = c0 + 1;
	double x0 = p->left + c0, x1 = p->left + c1 < p->right ? p->left + c1 : p->right;
	struct plot_band *last = p->n_bands[k] ? &p->bands[k][p->n_bands[k] - 1] : NULL;
	if (last && x0 <= last->x1) {
		if (x1 > last->x1)
			last->x1 = x1;
		return;
	}
	p->bands[k][p->n_bands[k]++] = (struct plot_band){x0, x1};
}

int plot_bands_collect(struct plot *p)
{
	const struct cgtrace_view *v = p->v;
	size_t ncols = (size_t)ceil(p->right - p->left), count[PLOT_N_STEPS] = {0};
	if (ncols == 0)
		ncols = 1;
	for (size_t i = 0; i < v->n_bands; i++) {
		int k = step_index(v->bands[i].step);
		if (k >= 0)
			count[k]++;
	}
	for (int k = 0; k < PLOT_N_STEPS; k++)
		if (count[k] && !(p->bands[k] = malloc(count[k] * sizeof(*p->bands[k]))))
			return -ENOMEM;
	for (size_t i = 0; i < v->n_bands; i++) {
		const struct cgtrace_view_band *b = &v->bands[i];
		int k = step_index(b->step);
		if (k >= 0 && b->end_ns >= p->t0 && b->start_ns <= p->t1)
			add(p, k, b, ncols);
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

bool plot_bands_any(const struct plot *p)
{
	for (int k = 0; k < PLOT_N_STEPS; k++)
		if (p->n_bands[k])
			return true;
	return false;
}

void plot_bands_defs(struct plot *p)
{
	struct svg *s = &p->svg;
	for (int k = 0; k < PLOT_N_STEPS; k++) {
		if (!p->n_bands[k])
			continue;
		char id[64];
		snprintf(id, sizeof(id), "bands-%s", cgtrace_step_name(plot_steps[k]));
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
}

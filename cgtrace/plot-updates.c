/* SPDX-License-Identifier: MIT */
/*
 * The training updates on the plot (view->steps): a thin line where each
 * starts, with its number, by the report's rule (cgtrace/report/updates.js):
 * a line at every update's start when they are at least 4 px apart on
 * average, else only at the labelled ones; a label on the first update of
 * every `stride` of them (1, 2, 5, 10, ...: the smallest whose labels fit
 * the width), where it does not overlap the label before. So however many
 * updates a run has, a panel draws a few hundred lines at most.
 */
#include <errno.h>
#include <stdlib.h>

#include "plot.h"

/* Labels: 11 px, 2 px right of their line, 6 px apart at least. */
#define LABEL_SIZE 11
#define LABEL_GAP 6

/* The smallest of 1, 2, 5, 10, 20, ... at or above x. */
static uint64_t nice_at_least(double x)
{
	static const uint64_t m[] = {1, 2, 5};
	for (uint64_t p10 = 1; p10 <= UINT64_MAX / 50; p10 *= 10)
		for (size_t i = 0; i < 3; i++)
			if ((double)(m[i] * p10) >= x)
				return m[i] * p10;
	return UINT64_MAX / 50;
}

static double label_width(uint64_t update)
{
	char b[32];
	snprintf(b, sizeof(b), "%llu", (unsigned long long)update);
	return plot_text_width(b, LABEL_SIZE);
}

int plot_updates_collect(struct plot *p)
{
	const struct cgtrace_steps *st = p->v->steps;
	size_t n = 0, first = SIZE_MAX, last = 0;
	for (size_t r = 0; st && r < st->n_rows; r++) {
		if (st->rows[r].is_phase)
			continue;
		if (first == SIZE_MAX)
			first = r;
		last = r;
		n++;
	}
	p->n_updates = n;
	if (!n)
		return 0;
	double w = p->right - p->left;
	bool dense = (double)n * 4 > w;
	uint64_t u0 = st->rows[first].update, u1 = st->rows[last].update;
	double span = u1 >= u0 ? (double)(u1 - u0) + 1 : (double)n;
	uint64_t stride = nice_at_least(span * (label_width(u1) + LABEL_GAP) / w);
	/* Dense, only labels: they are LABEL_GAP px apart at least. */
	size_t cap = dense ? (size_t)(w / LABEL_GAP) + 1 : n;
	p->marks = malloc(cap * sizeof(*p->marks));
	if (!p->marks)
		return -ENOMEM;
	double last_label = -1e300;
	uint64_t block = UINT64_MAX;
	for (size_t r = first; r <= last && p->n_marks < cap; r++) {
		const struct cgtrace_step_row *row = &st->rows[r];
		if (row->is_phase)
			continue;
		double x = plot_x(p, row->start_ns);
		uint64_t b = row->update / stride;
		bool label = b != block && x + 2 >= last_label + LABEL_GAP &&
		             x + 2 + label_width(row->update) <= p->right;
		if (label) {
			block = b;
			last_label = x + 2 + label_width(row->update);
		}
		if (dense && !label)
			continue;
		p->marks[p->n_marks++] = (struct plot_update_mark){x, row->update, label};
	}
	return 0;
}

void plot_updates_free(struct plot *p)
{
	free(p->marks);
	p->marks = NULL;
	p->n_marks = 0;
}

void plot_updates_defs(struct plot *p)
{
	if (!p->n_marks)
		return;
	struct svg *s = &p->svg;
	size_t labels = 0;
	for (size_t i = 0; i < p->n_marks; i++)
		labels += p->marks[i].label;
	svg_open(s, "path");
	svg_attr(s, "id", "updates");
	svg_attr_u64(s, "data-lines", p->n_marks);
	svg_attr_u64(s, "data-labels", labels);
	svg_d_begin(s, "d");
	for (size_t i = 0; i < p->n_marks; i++) {
		svg_d_move(s, p->marks[i].x, 0);
		svg_d_v(s, 1);
	}
	svg_d_end(s);
	svg_close(s, "path");
}

void plot_updates_draw(struct plot *p, const struct plot_panel *pn)
{
	if (!p->n_marks)
		return;
	struct svg *s = &p->svg;
	char tr[96], a[32], b[32];
	snprintf(tr, sizeof(tr), "translate(0 %s) scale(1 %s)", svg_num(a, pn->top),
	         svg_num_prec(b, pn->bottom - pn->top, 2));
	svg_open(s, "use");
	svg_attr(s, "class", "updates");
	svg_attr(s, "href", "#updates");
	svg_attr(s, "xlink:href", "#updates");
	svg_attr(s, "transform", tr);
	svg_attr(s, "stroke", cli_palette.update);
	svg_attr(s, "fill", "none");
	svg_attr(s, "stroke-opacity", "0.6");
	svg_close(s, "use");
	svg_open(s, "g");
	svg_attr(s, "class", "update-labels");
	svg_attr(s, "font-size", "11");
	svg_attr(s, "fill", cli_palette.update);
	for (size_t i = 0; i < p->n_marks; i++) {
		if (!p->marks[i].label)
			continue;
		char num[32];
		snprintf(num, sizeof(num), "%llu", (unsigned long long)p->marks[i].update);
		svg_open(s, "text");
		svg_attr_num(s, "x", p->marks[i].x + 2);
		svg_attr_num(s, "y", pn->top + LABEL_SIZE);
		svg_text(s, num);
		svg_close(s, "text");
	}
	svg_close(s, "g");
}

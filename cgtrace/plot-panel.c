/* SPDX-License-Identifier: MIT */
/*
 * One device's panel: step bands, grid, the stacked live bytes by category,
 * the training updates' starts, device used bytes, capacity, out-of-memory
 * failures and the peak.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "plot.h"

double plot_text_width(const char *s, double size)
{
	size_t chars = 0;
	for (const unsigned char *c = (const unsigned char *)s; *c; c++)
		chars += (*c & 0xc0) != 0x80;
	return (double)chars * size * 0.6;
}

void plot_text_fit(char *s, size_t cap, double size, double room)
{
	if (plot_text_width(s, size) <= room)
		return;
	/* Whole characters, then an ellipsis (3 bytes), within room and cap. */
	double fit_chars = room / (size * 0.6) - 1;
	size_t fit = fit_chars > 0 ? (size_t)fit_chars : 0, chars = 0, i = 0;
	for (; s[i]; i++)
		if (((unsigned char)s[i] & 0xc0) != 0x80 && chars++ == fit)
			break;
	while (i > 0 && (i + 4 > cap || ((unsigned char)s[i] & 0xc0) == 0x80))
		i--;
	if (i + 4 <= cap)
		memcpy(s + i, "\xe2\x80\xa6", 4);
}

/*
 * What the areas draw: runs of buckets at least a pixel wide, each showing
 * the bucket of the run whose device total was highest, so that no peak
 * falls between two pixels and the path has at most one point a pixel.
 */
struct sample {
	double x0, x1;
	size_t bucket;
};

static uint64_t bucket_start(const struct plot *p, const struct plot_panel *pn, size_t i)
{
	const struct cgtrace_view *v = pn->v;
	return i >= v->n_buckets ? p->t1 : pn->shift + v->start_ns + (uint64_t)i * v->bucket_ns;
}

static size_t samples_of(const struct plot *p, const struct plot_panel *pn, struct sample *out)
{
	const struct cgtrace_view_device *d = pn->d;
	size_t n = pn->v->n_buckets, m = 0;
	for (size_t i = 0; i < n;) {
		double x0 = plot_x(p, bucket_start(p, pn, i));
		size_t best = i, j = i;
		while (j + 1 < n && plot_x(p, bucket_start(p, pn, j + 1)) - x0 < 1.0) {
			j++;
			if (d->buckets[j].max_bytes > d->buckets[best].max_bytes)
				best = j;
		}
		out[m++] = (struct sample){x0, plot_x(p, bucket_start(p, pn, j + 1)), best};
		i = j + 1;
	}
	return m;
}

static void bands(struct plot *p, const struct plot_panel *pn)
{
	struct svg *s = &p->svg;
	for (int k = 0; k < PLOT_N_STEPS; k++) {
		if (!p->n_bands[k])
			continue;
		char href[64], tr[96], a[32], b[32];
		const char *name = cgtrace_step_name(plot_steps[k]);
		snprintf(href, sizeof(href), "#bands-%s", name);
		snprintf(tr, sizeof(tr), "translate(0 %s) scale(1 %s)", svg_num(a, pn->top),
		         svg_num_prec(b, pn->bottom - pn->top, 2));
		svg_open(s, "use");
		svg_attr(s, "class", "bands");
		svg_attr(s, "data-step", name);
		/* SVG 2's href for browsers, xlink:href for SVG 1.1 viewers. */
		svg_attr(s, "href", href);
		svg_attr(s, "xlink:href", href);
		svg_attr(s, "transform", tr);
		svg_attr(s, "fill", cli_palette.step[plot_steps[k]]);
		svg_attr(s, "fill-opacity", cli_palette.band_opacity);
		svg_close(s, "use");
	}
}

static void text_at(struct svg *s, double x, double y, const char *anchor, const char *cls,
                    const char *text)
{
	svg_open(s, "text");
	svg_attr_num(s, "x", x);
	svg_attr_num(s, "y", y);
	if (anchor)
		svg_attr(s, "text-anchor", anchor);
	if (cls)
		svg_attr(s, "class", cls);
	svg_text(s, text);
	svg_close(s, "text");
}

static void grid(struct plot *p, const struct plot_panel *pn)
{
	struct svg *s = &p->svg;
	char label[32];
	svg_open(s, "path");
	svg_attr(s, "class", "grid");
	svg_attr(s, "stroke", "#e4e4e4");
	svg_attr(s, "fill", "none");
	svg_d_begin(s, "d");
	for (size_t i = 1; i <= pn->bytes.n_steps; i++) {
		svg_d_move(s, p->left,
			   plot_y(pn, i == pn->bytes.n_steps ? pn->bytes.top : i * pn->bytes.step));
		svg_d_h(s, p->right);
	}
	for (uint64_t t = p->time.first; t <= p->t1; t += p->time.step) {
		svg_d_move(s, plot_x(p, t), pn->top);
		svg_d_v(s, pn->bottom);
		if (t > UINT64_MAX - p->time.step)
			break;
	}
	svg_d_end(s);
	svg_close(s, "path");
	svg_open(s, "g");
	svg_attr(s, "class", "y-ticks");
	svg_attr(s, "text-anchor", "end");
	for (size_t i = 0; i <= pn->bytes.n_steps; i++) {
		uint64_t v = i == pn->bytes.n_steps ? pn->bytes.top : i * pn->bytes.step;
		text_at(s, p->left - 6, plot_y(pn, v) + 4, NULL, NULL, plot_bytes_tick(label, v));
	}
	svg_close(s, "g");
	if (!pn->last)
		return;
	svg_open(s, "g");
	svg_attr(s, "class", "x-ticks");
	svg_attr(s, "text-anchor", "middle");
	for (uint64_t t = p->time.first; t <= p->t1; t += p->time.step) {
		text_at(s, plot_x(p, t), pn->bottom + 16, NULL, NULL,
		        plot_time_tick(label, &p->time, t));
		if (t > UINT64_MAX - p->time.step)
			break;
	}
	svg_close(s, "g");
}

/*
 * The area under the live bytes of the categories up to c, stacked: drawn
 * from the top category down, each over the one above, each band shows
 * its own category. A plateau a sample wide at the sample's bucket. A
 * job's physical device (c < 0) is one area, its bytes of every process.
 */
static void area(struct plot *p, const struct plot_panel *pn, const struct sample *smp, size_t n,
                 int c)
{
	struct svg *s = &p->svg;
	svg_open(s, "path");
	svg_attr(s, "class", "area");
	svg_attr(s, "data-category", c < 0 ? "all" : cgtrace_category_name((enum cgtrace_category)c));
	svg_attr(s, "fill", c < 0 ? cli_palette.job_sum : cli_palette.category[c]);
	svg_d_begin(s, "d");
	svg_d_move(s, smp[0].x0, pn->bottom);
	char cur[32] = "", y[32];
	double pending = -1;
	for (size_t i = 0; i < n; i++) {
		const struct cgtrace_view_bucket *b = &pn->d->buckets[smp[i].bucket];
		uint64_t sum = c < 0 ? b->max_bytes : 0;
		for (int k = 0; k <= c; k++)
			sum += b->max_by_category[k];
		svg_num(y, plot_y(pn, sum));
		/* Equal heights in a row make one plateau. */
		if (strcmp(y, cur) != 0) {
			if (pending >= 0)
				svg_d_h(s, pending);
			svg_d_v(s, plot_y(pn, sum));
			strcpy(cur, y);
		}
		pending = smp[i].x1;
	}
	svg_d_h(s, pending);
	svg_d_v(s, pn->bottom);
	svg_d_close(s);
	svg_d_end(s);
	svg_close(s, "path");
}

static int areas(struct plot *p, const struct plot_panel *pn)
{
	if (!pn->v->n_buckets)
		return 0;
	struct sample *smp = malloc(pn->v->n_buckets * sizeof(*smp));
	if (!smp)
		return -ENOMEM;
	size_t n = samples_of(p, pn, smp);
	bool present[CGTRACE_CAT_COUNT] = {0};
	for (size_t i = 0; i < n; i++)
		for (int c = 0; c < CGTRACE_CAT_COUNT; c++)
			present[c] |= pn->d->buckets[smp[i].bucket].max_by_category[c] > 0;
	svg_open(&p->svg, "g");
	svg_attr(&p->svg, "class", "areas");
	svg_attr_u64(&p->svg, "data-samples", n);
	for (int c = CGTRACE_CAT_COUNT - 1; c >= 0 && !pn->gpu; c--)
		if (present[c])
			area(p, pn, smp, n, c);
	if (pn->gpu)
		area(p, pn, smp, n, -1);
	svg_close(&p->svg, "g");
	free(smp);
	return 0;
}

/* Device used bytes: a step line, one point a pixel, the highest checkpoint in it. */
static void used_line(struct plot *p, const struct plot_panel *pn)
{
	const struct cgtrace_view_device *d = pn->d;
	if (!d->n_checkpoints)
		return;
	struct svg *s = &p->svg;
	svg_open(s, "path");
	svg_attr(s, "class", "used");
	svg_attr(s, "fill", "none");
	svg_attr(s, "stroke", cli_palette.used);
	svg_attr(s, "stroke-width", "1.2");
	svg_d_begin(s, "d");
	double x_end = p->left;
	for (size_t i = 0; i < d->n_checkpoints;) {
		double x = plot_x(p, pn->shift + d->checkpoints[i].timestamp_ns);
		uint64_t top = d->checkpoints[i].used_bytes;
		size_t j = i + 1;
		for (; j < d->n_checkpoints &&
		       plot_x(p, pn->shift + d->checkpoints[j].timestamp_ns) - x < 1.0;
		     j++)
			if (d->checkpoints[j].used_bytes > top)
				top = d->checkpoints[j].used_bytes;
		if (i == 0) {
			svg_d_move(s, x, plot_y(pn, top));
		} else {
			svg_d_h(s, x);
			svg_d_v(s, plot_y(pn, top));
		}
		x_end = x;
		i = j;
	}
	/* The last value held a little, so that a lone checkpoint still shows. */
	svg_d_h(s, x_end + 2 < p->right ? x_end + 2 : p->right);
	svg_d_end(s);
	svg_close(s, "path");
}

/* A dashed line; the panel's header names the figure, so nothing covers the peak's label. */
static void capacity(struct plot *p, const struct plot_panel *pn)
{
	if (!pn->capacity_shown)
		return;
	struct svg *s = &p->svg;
	double y = plot_y(pn, pn->d->capacity_bytes);
	svg_open(s, "path");
	svg_attr(s, "class", "capacity");
	svg_attr(s, "stroke", cli_palette.capacity);
	svg_attr(s, "stroke-dasharray", "6 4");
	svg_d_begin(s, "d");
	svg_d_move(s, p->left, y);
	svg_d_h(s, p->right);
	svg_d_end(s);
	svg_close(s, "path");
}

/* The marks of the out-of-memory failures: a line each, those within 3 px of each other as one. */
static void oom_marks(struct plot *p, const struct plot_panel *pn, bool lines)
{
	const struct cgtrace_view_device *d = pn->d;
	struct svg *s = &p->svg;
	svg_open(s, "path");
	if (lines) {
		svg_attr(s, "stroke", cli_palette.oom);
		svg_attr(s, "stroke-dasharray", "3 2");
	} else {
		svg_attr(s, "fill", cli_palette.oom);
	}
	svg_d_begin(s, "d");
	double last = -10;
	for (size_t i = 0; i < d->n_ooms_kept; i++) {
		double x = plot_x(p, pn->shift + d->ooms[i].timestamp_ns);
		if (x - last < 3.0)
			continue;
		last = x;
		svg_d_move(s, lines ? x : x - 5, pn->top);
		if (lines) {
			svg_d_v(s, pn->bottom);
		} else {
			svg_d_h(s, x + 5);
			svg_d_line(s, x, pn->top + 8);
			svg_d_close(s);
		}
	}
	svg_d_end(s);
	svg_close(s, "path");
}

/*
 * Out-of-memory failures: two paths whatever their count (the marks, then
 * the lines), and one tooltip that says how many, the first, the largest.
 */
static void ooms(struct plot *p, const struct plot_panel *pn)
{
	const struct cgtrace_view_device *d = pn->d;
	if (!d->n_ooms_kept)
		return;
	struct svg *s = &p->svg;
	uint64_t largest = 0;
	for (size_t i = 0; i < d->n_ooms_kept; i++)
		if (d->ooms[i].oom_request_bytes > largest)
			largest = d->ooms[i].oom_request_bytes;
	char n[32], t[32], b[32], l[32], title[256];
	snprintf(title, sizeof(title),
	         "%s out-of-memory failure%s on %s; the first at %s, %s requested; the largest "
	         "request %s",
	         cli_count(n, d->n_ooms), d->n_ooms == 1 ? "" : "s", d->device,
	         plot_time_text(t, d->ooms[0].timestamp_ns),
	         plot_bytes_text(b, d->ooms[0].oom_request_bytes), plot_bytes_text(l, largest));
	svg_open(s, "g");
	svg_attr(s, "class", "oom");
	svg_attr_u64(s, "data-count", d->n_ooms);
	svg_open(s, "title");
	svg_text(s, title);
	svg_close(s, "title");
	oom_marks(p, pn, true);
	oom_marks(p, pn, false);
	svg_close(s, "g");
}

static void peak(struct plot *p, const struct plot_panel *pn)
{
	const struct cgtrace_view_device *d = pn->d;
	struct svg *s = &p->svg;
	double x = plot_x(p, pn->shift + d->peak_ns), y = plot_y(pn, d->peak_bytes);
	char b[32], t[32], label[96];
	snprintf(label, sizeof(label), "peak %s at %s", plot_bytes_text(b, d->peak_bytes),
	         plot_time_text(t, pn->shift + d->peak_ns));
	svg_open(s, "circle");
	svg_attr(s, "class", "peak");
	svg_attr_num(s, "cx", x);
	svg_attr_num(s, "cy", y);
	svg_attr(s, "r", "4");
	svg_attr(s, "fill", cli_palette.peak);
	svg_attr(s, "stroke", "#ffffff");
	svg_close(s, "circle");
	/*
	 * Beside the dot on the side with room (inside the plot), else as far
	 * right as fits; above the dot when the panel leaves room there.
	 */
	double w = plot_text_width(label, 12), tx = x + 8;
	const char *anchor = NULL;
	if (tx + w > p->right && x - 8 - w >= p->left) {
		tx = x - 8;
		anchor = "end";
	} else if (tx + w > p->right) {
		tx = p->right - w > p->left ? p->right - w : p->left;
	}
	double ty = y - 8 - 12 >= pn->top ? y - 8 : y + 16;
	svg_open(s, "text");
	svg_attr(s, "class", "peak-label");
	svg_attr_num(s, "x", tx);
	svg_attr_num(s, "y", ty);
	if (anchor)
		svg_attr(s, "text-anchor", anchor);
	svg_attr(s, "fill", cli_palette.peak);
	svg_attr(s, "font-weight", "bold");
	svg_attr(s, "stroke", "#ffffff");
	svg_attr(s, "stroke-width", "3");
	svg_attr(s, "paint-order", "stroke");
	svg_text(s, label);
	svg_close(s, "text");
}

static void frame(struct plot *p, const struct plot_panel *pn)
{
	struct svg *s = &p->svg;
	svg_open(s, "path");
	svg_attr(s, "class", "axes");
	svg_attr(s, "stroke", "#888888");
	svg_attr(s, "fill", "none");
	svg_d_begin(s, "d");
	svg_d_move(s, p->left, pn->top);
	svg_d_v(s, pn->bottom);
	svg_d_h(s, p->right);
	svg_d_end(s);
	svg_close(s, "path");
}

/*
 * The device, its name and capacity; its totals on the right. What does not
 * fit the width is left out, the totals first.
 */
static void header(struct plot *p, const struct plot_panel *pn)
{
	struct svg *s = &p->svg;
	const struct cgtrace_view_device *d = pn->d;
	char b[32], c[32], dev[256], detail[256], totals[128];
	snprintf(dev, sizeof(dev), "%s", pn->name ? pn->name : d->device);
	plot_text_fit(dev, sizeof(dev), 13, p->right - p->left);
	size_t n = 0;
	detail[0] = '\0';
	if (pn->info_name)
		n += (size_t)snprintf(detail + n, sizeof(detail) - n, "  %s", pn->info_name);
	if (d->capacity_bytes && n < sizeof(detail))
		snprintf(detail + n, sizeof(detail) - n, "%s capacity %s%s",
		         pn->info_name ? "," : " ", plot_bytes_text(b, d->capacity_bytes),
		         pn->capacity_shown ? "" : " (off the scale)");
	if (pn->totals)
		snprintf(totals, sizeof(totals), "%s", pn->totals);
	else
		snprintf(totals, sizeof(totals), "%s allocations, %s at the end",
		         cli_count(c, d->alloc_count), plot_bytes_text(b, d->final_bytes));
	double room = p->right - p->left - plot_text_width(dev, 13);
	double dw = plot_text_width(detail, 12), tw = plot_text_width(totals, 12) + 16;
	bool show_detail = dw <= room, show_totals = dw + tw <= room;
	svg_open(s, "text");
	svg_attr(s, "class", "device");
	svg_attr_num(s, "x", p->left);
	svg_attr_num(s, "y", pn->top - 7);
	svg_open(s, "tspan");
	svg_attr(s, "font-weight", "bold");
	svg_attr(s, "font-size", "13");
	svg_text(s, dev);
	svg_close(s, "tspan");
	if (detail[0] && show_detail) {
		svg_open(s, "tspan");
		svg_attr(s, "fill", "#555555");
		svg_text(s, detail);
		svg_close(s, "tspan");
	}
	svg_close(s, "text");
	if (show_totals)
		text_at(s, p->right, pn->top - 7, "end", "totals", totals);
}

int plot_panel_draw(struct plot *p, const struct plot_panel *pn)
{
	struct svg *s = &p->svg;
	svg_open(s, "g");
	svg_attr(s, "class", "panel");
	svg_attr(s, "data-device", pn->d->device);
	svg_attr_u64(s, "data-peak-bytes", pn->d->peak_bytes);
	svg_attr_u64(s, "data-peak-ns", pn->d->peak_ns);
	svg_attr_u64(s, "data-y-top-bytes", pn->bytes.top);
	svg_attr_num(s, "data-plot-top", pn->top);
	svg_attr_num(s, "data-plot-bottom", pn->bottom);
	svg_attr_num(s, "data-plot-left", p->left);
	svg_attr_num(s, "data-plot-right", p->right);
	/* A job's panel says whose it is, for the tests and a reader of the file. */
	if (pn->process) {
		svg_attr_u64(s, "data-pid", pn->process->pid < 0 ? 0 : (uint64_t)pn->process->pid);
		if (pn->process->rank >= 0)
			svg_attr_u64(s, "data-rank", (uint64_t)pn->process->rank);
		svg_attr_u64(s, "data-start-ns", pn->shift);
	}
	if (pn->gpu) {
		svg_attr(s, "data-gpu", pn->gpu->uuid ? pn->gpu->uuid : pn->gpu->device);
		svg_attr_u64(s, "data-processes", pn->gpu->n_processes);
	}
	header(p, pn);
	bands(p, pn);
	grid(p, pn);
	int ret = areas(p, pn);
	plot_updates_draw(p, pn);
	used_line(p, pn);
	capacity(p, pn);
	ooms(p, pn);
	frame(p, pn);
	peak(p, pn);
	svg_close(s, "g");
	return ret;
}

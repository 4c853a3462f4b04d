/* SPDX-License-Identifier: MIT */
/* cgtrace plot: live bytes over time per device, stacked by category, as one SVG file. */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "job-load.h"
#include "plot.h"
#include "step-text.h"

struct plot_args {
	const char *out, *device;
	size_t width, height, buckets, processes, jobs;
};

static int run(int argc, char **argv);

const struct cli_cmd cli_plot = {
    .name = "plot",
    .args = "-o FILE.svg [--device D] [--width W] [--height H] [--buckets N] [--processes N] [--jobs N] TRACE... | DIR",
    .help = "Draws the live bytes of each device over time, stacked by category, as an\n"
            "SVG image: the peak marked and labelled, training steps (forward, backward,\n"
            "optimizer spans) as background bands, where each training update starts,\n"
            "the device's used bytes from its checkpoints, its capacity when known and\n"
            "out-of-memory failures. One panel per device with memory records, stacked,\n"
            "on one time axis (docs/plot.md).\n\n"
            "Several traces, or a folder of them (cgprobe -o DIR/), are one job\n"
            "(docs/jobs.md): a panel per process (its device D, else its device of\n"
            "highest peak), on the job's time axis, in tree order, then a panel per\n"
            "physical GPU with the bytes of all its processes summed and the peak\n"
            "marked. The --processes N processes of highest peak are drawn, and as\n"
            "many GPUs; a note in the picture counts those left out.\n\n",
    .label_width = 14,
    .opts = (const struct cli_opt[]){
        {.name = "output", .short_name = 'o', .kind = CLI_OPT_STR, .label = "-o FILE",
         .offset = offsetof(struct plot_args, out),
         .help = "the SVG file (- for standard output)"},
        {.name = "device", .kind = CLI_OPT_STR, .offset = offsetof(struct plot_args, device),
         .arg = "D", .help = "only device D (e.g. cpu, cuda:0)"},
        {.name = "width", .kind = CLI_OPT_COUNT, .offset = offsetof(struct plot_args, width),
         .arg = "W", .min = 320, .max = 16384,
         .help = "image width in px (default 1280, 320 to 16384)"},
        {.name = "height", .kind = CLI_OPT_COUNT, .offset = offsetof(struct plot_args, height),
         .arg = "H", .min = 240, .max = 16384,
         .help = "image height in px (default 720, 240 to 16384); it grows when\n"
                 "the panels would be under 80 px each"},
        {.name = "buckets", .kind = CLI_OPT_COUNT,
         .offset = offsetof(struct plot_args, buckets), .arg = "N", .min = 1, .max = 100000,
         .help = "time buckets the trace is reduced to (default 2000, at most\n"
                 "100000); each shows its highest live bytes, so the peak is\n"
                 "never lost, and the drawing keeps at most one point a pixel"},
        {.name = "processes", .kind = CLI_OPT_COUNT,
         .offset = offsetof(struct plot_args, processes), .arg = "N", .min = 1, .max = 256,
         .help = "a job: the processes drawn, those of highest peak, and as many\n"
                 "physical devices at most (default 16)"},
        CLI_OPT_JOBS(struct plot_args, jobs),
        {0},
    },
    .help_tail = "\nThe trace is read once, streamed, in memory bounded by the allocations\n"
                 "live at once plus the buckets; the file stays under a few hundred KB.\n\n"
                 CLI_OUT_HELP,
    .run = run,
};

/* Vertical layout, px. */
enum {
	TITLE_Y = 26,
	LEGEND_Y = 50, /* the first legend row's centre */
	LEGEND_ROW = 20,
	NOTE_ROW = 18, /* a job's note under the legend */
	PANEL_HEADER = 22, /* the device's line above its plot area */
	PANEL_GAP = 12,
	BOTTOM = 50, /* time labels and the axis title */
	MIN_PLOT_H = 80,
	LEFT = 92,
	RIGHT = 28,
};

enum legend_kind { LEG_SWATCH, LEG_BAND, LEG_DOT, LEG_DASH, LEG_LINE, LEG_OOM, LEG_UPDATE };

struct legend_item {
	enum legend_kind kind;
	const char *colour;
	char label[64];
};

#define MAX_LEGEND (CGTRACE_CAT_COUNT + PLOT_N_STEPS + 5)

struct legend {
	struct legend_item items[MAX_LEGEND];
	size_t n, rows;
};

static double item_width(const struct legend_item *it)
{
	return 14 + 6 + plot_text_width(it->label, 13) + 18;
}

static void legend_add(struct legend *l, enum legend_kind kind, const char *colour,
                       const char *label)
{
	struct legend_item *it = &l->items[l->n++];
	it->kind = kind;
	it->colour = colour;
	snprintf(it->label, sizeof(it->label), "%s", label);
}

/* What the picture holds, in the order people read it: categories, steps, marks. */
static void legend_build(const struct plot *p, struct legend *l)
{
	memset(l, 0, sizeof(*l));
	for (int c = 0; c < CGTRACE_CAT_COUNT; c++)
		if (p->category_present[c])
			legend_add(l, LEG_SWATCH, cli_palette.category[c],
			           cgtrace_category_name((enum cgtrace_category)c));
	for (int k = 0; k < PLOT_N_STEPS; k++)
		if (p->n_bands[k]) {
			char name[64];
			snprintf(name, sizeof(name), "%s step",
			         cgtrace_step_name(plot_steps[k]));
			legend_add(l, LEG_BAND, cli_palette.step[plot_steps[k]], name);
		}
	if (p->n_marks) {
		char name[64];
		snprintf(name, sizeof(name), "update starts (%s)",
		         cli_updates_from_name(p->v->steps->from));
		legend_add(l, LEG_UPDATE, cli_palette.update, name);
	}
	bool cap = false, used = false, sum = false;
	for (size_t i = 0; i < p->n_panels; i++)
		sum |= p->panels[i].gpu != NULL;
	if (sum)
		legend_add(l, LEG_SWATCH, cli_palette.job_sum, "every process on the device");
	legend_add(l, LEG_DOT, cli_palette.peak, "peak");
	uint64_t oom = 0;
	for (size_t i = 0; i < p->n_panels; i++) {
		cap |= p->panels[i].capacity_shown;
		used |= p->panels[i].d->n_checkpoints > 0;
		oom += p->panels[i].d->n_ooms;
	}
	if (used)
		legend_add(l, LEG_LINE, cli_palette.used, "device used");
	if (cap)
		legend_add(l, LEG_DASH, cli_palette.capacity, "capacity");
	if (oom) {
		char name[64], n[32];
		snprintf(name, sizeof(name), "out of memory (%s)", cli_count(n, oom));
		legend_add(l, LEG_OOM, cli_palette.oom, name);
	}
	double x = 0, room = p->right - p->left;
	l->rows = 1;
	for (size_t i = 0; i < l->n; i++) {
		double w = item_width(&l->items[i]);
		if (x > 0 && x + w > room) {
			l->rows++;
			x = 0;
		}
		x += w;
	}
}

static void legend_mark(struct svg *s, const struct legend_item *it, double x, double y)
{
	switch (it->kind) {
	case LEG_SWATCH:
	case LEG_BAND:
		svg_open(s, "rect");
		svg_attr_num(s, "x", x);
		svg_attr_num(s, "y", y - 6);
		svg_attr(s, "width", "14");
		svg_attr(s, "height", "12");
		svg_attr(s, "fill", it->colour);
		if (it->kind == LEG_BAND)
			svg_attr(s, "fill-opacity", cli_palette.band_opacity);
		svg_close(s, "rect");
		return;
	case LEG_DOT:
		svg_open(s, "circle");
		svg_attr_num(s, "cx", x + 7);
		svg_attr_num(s, "cy", y);
		svg_attr(s, "r", "4");
		svg_attr(s, "fill", it->colour);
		svg_close(s, "circle");
		return;
	case LEG_DASH:
	case LEG_LINE:
	case LEG_OOM:
	case LEG_UPDATE:
		svg_open(s, "path");
		svg_attr(s, "stroke", it->colour);
		if (it->kind == LEG_DASH)
			svg_attr(s, "stroke-dasharray", "6 4");
		else if (it->kind == LEG_OOM)
			svg_attr(s, "stroke-dasharray", "3 2");
		svg_attr(s, "stroke-width", it->kind == LEG_LINE ? "1.2" : "1");
		svg_d_begin(s, "d");
		if (it->kind == LEG_OOM || it->kind == LEG_UPDATE) {
			svg_d_move(s, x + 7, y - 7);
			svg_d_v(s, y + 7);
		} else {
			svg_d_move(s, x, y);
			svg_d_h(s, x + 14);
		}
		svg_d_end(s);
		svg_close(s, "path");
	}
}

static void legend_draw(struct plot *p, const struct legend *l)
{
	struct svg *s = &p->svg;
	svg_open(s, "g");
	svg_attr(s, "class", "legend");
	svg_attr(s, "font-size", "13");
	double x = 0, room = p->right - p->left;
	size_t row = 0;
	for (size_t i = 0; i < l->n; i++) {
		const struct legend_item *it = &l->items[i];
		double w = item_width(it);
		if (x > 0 && x + w > room) {
			row++;
			x = 0;
		}
		double y = LEGEND_Y + (double)row * LEGEND_ROW;
		legend_mark(s, it, p->left + x, y);
		svg_open(s, "text");
		svg_attr_num(s, "x", p->left + x + 20);
		svg_attr_num(s, "y", y + 4.5);
		svg_text(s, it->label);
		svg_close(s, "text");
		x += w;
	}
	svg_close(s, "g");
}

static bool has_memory(const struct cgtrace_view_device *d)
{
	return d->alloc_count || d->free_count || d->peak_bytes;
}

static const char *info_name(const struct cgtrace_doc *doc, const char *device)
{
	size_t n = doc ? cgtrace_doc_count(doc, CGTRACE_KIND_DEVICE_INFO) : 0;
	for (size_t i = 0; i < n; i++) {
		struct cgtrace_device_info info;
		cgtrace_doc_device_info(doc, i, &info);
		if (strcmp(info.device, device) == 0)
			return info.name;
	}
	return NULL;
}

/* The devices drawn: device, or every one with memory records. CLI_FAIL printed. */
static int pick_devices(struct plot *p, const char *path, const char *device)
{
	const struct cgtrace_view *v = p->v;
	p->panels = calloc(v->n_devices ? v->n_devices : 1, sizeof(*p->panels));
	if (!p->panels) {
		fprintf(stderr, "%s: %s\n", cli_path_name(path), strerror(ENOMEM));
		return CLI_FAIL;
	}
	for (size_t i = 0; i < v->n_devices; i++) {
		const struct cgtrace_view_device *d = &v->devices[i];
		if (!has_memory(d) || (device && strcmp(device, d->device) != 0))
			continue;
		struct plot_panel *pn = &p->panels[p->n_panels++];
		pn->d = d;
		pn->v = v;
		pn->info_name = info_name(v->doc, d->device);
	}
	if (p->n_panels == 0 || v->n_buckets == 0) {
		fprintf(stderr, "%s: no memory records%s%s to plot\n", cli_path_name(path),
		        device ? " for device " : "", device ? device : "");
		return CLI_FAIL;
	}
	for (size_t i = 0; i < p->n_panels; i++)
		for (size_t b = 0; b < v->n_buckets; b++)
			for (int c = 0; c < CGTRACE_CAT_COUNT; c++)
				p->category_present[c] |=
				    p->panels[i].d->buckets[b].max_by_category[c] > 0;
	return CLI_OK;
}

/*
 * A panel's range: its peak and highest used bytes, and its capacity when
 * that is within 4 times of them (a 80 GiB card with 1 GiB in use would
 * flatten the picture: then the capacity is only named).
 */
static void panel_range(struct plot_panel *pn)
{
	const struct cgtrace_view_device *d = pn->d;
	for (size_t i = 0; i < d->n_checkpoints; i++)
		if (d->checkpoints[i].used_bytes > pn->used_max)
			pn->used_max = d->checkpoints[i].used_bytes;
	uint64_t data = d->peak_bytes > pn->used_max ? d->peak_bytes : pn->used_max;
	uint64_t max = data;
	pn->capacity_shown = d->capacity_bytes && d->capacity_bytes / 4 <= data;
	if (pn->capacity_shown && d->capacity_bytes > max)
		max = d->capacity_bytes;
	/* Headroom over the highest point, so that the peak's dot and label sit inside. */
	pn->range = max > UINT64_MAX - max / 25 ? UINT64_MAX : max + max / 25;
}

/* The bytes axis: ticks some 24 px apart at least, 2 to 8 of them. */
static void panel_scale(struct plot_panel *pn)
{
	size_t ticks = (size_t)((pn->bottom - pn->top) / 24);
	plot_bytes_axis(&pn->bytes, pn->range, ticks < 2 ? 2 : ticks > 8 ? 8 : ticks);
}

/* Time ticks at least their label's width apart. */
static void time_scale(struct plot *p)
{
	double w = p->right - p->left;
	for (size_t max = (size_t)(w / 60); max >= 1; max--) {
		plot_time_axis(&p->time, p->t0, p->t1, max);
		char a[32], b[32];
		double lw = plot_text_width(plot_time_tick(a, &p->time, p->t1), 12);
		double fw = plot_text_width(plot_time_tick(b, &p->time, p->time.first), 12);
		double px = (double)p->time.step / (double)(p->t1 - p->t0) * w;
		if (px >= (lw > fw ? lw : fw) + 16)
			return;
	}
}

/* The time axis across the width: the view's, or a job's as plot_job_read set it. */
static void layout_x(struct plot *p, double width)
{
	const struct cgtrace_view *v = p->v;
	p->width = width;
	p->left = LEFT;
	p->right = width - RIGHT;
	if (v) {
		p->t0 = v->start_ns;
		p->t1 = v->start_ns + (uint64_t)v->n_buckets * v->bucket_ns;
		if (v->end_ns > p->t1)
			p->t1 = v->end_ns;
	}
	if (p->t1 <= p->t0)
		p->t1 = p->t0 + 1;
	time_scale(p);
}

/* The legend, then the panels down the height (which grows for many devices). */
static void layout_y(struct plot *p, double height, struct legend *l)
{
	for (size_t i = 0; i < p->n_panels; i++)
		panel_range(&p->panels[i]);
	legend_build(p, l);
	double top = LEGEND_Y + (double)(l->rows - 1) * LEGEND_ROW + 16 + (p->note ? NOTE_ROW : 0);
	double n = (double)p->n_panels;
	double plot_h = (height - top - BOTTOM - PANEL_GAP * (n - 1)) / n - PANEL_HEADER;
	if (plot_h < MIN_PLOT_H) {
		plot_h = MIN_PLOT_H;
		height = top + BOTTOM + PANEL_GAP * (n - 1) + n * (plot_h + PANEL_HEADER);
	}
	p->height = height;
	for (size_t i = 0; i < p->n_panels; i++) {
		struct plot_panel *pn = &p->panels[i];
		pn->top = top + (double)i * (PANEL_HEADER + plot_h + PANEL_GAP) + PANEL_HEADER;
		pn->bottom = pn->top + plot_h;
		pn->last = i + 1 == p->n_panels;
		panel_scale(pn);
	}
}

/* <text class= x= y=: the caller adds its own attributes, then text_end. */
static void text_begin(struct svg *s, const char *cls, double x, double y)
{
	svg_open(s, "text");
	svg_attr(s, "class", cls);
	svg_attr_num(s, "x", x);
	svg_attr_num(s, "y", y);
}

static void text_end(struct svg *s, const char *text)
{
	svg_text(s, text);
	svg_close(s, "text");
}

static void titles(struct plot *p, const char *path, const struct legend *l)
{
	struct svg *s = &p->svg;
	const struct cgtrace_doc *doc = p->v ? p->v->doc : NULL;
	char title[512] = "Live bytes by category";
	if (p->title) {
		snprintf(title, sizeof(title), "%s", p->title);
	} else if (doc && cgtrace_doc_count(doc, CGTRACE_KIND_META)) {
		struct cgtrace_meta m;
		cgtrace_doc_meta(doc, &m);
		if (m.entrypoint && m.entrypoint[0])
			snprintf(title, sizeof(title), "Live bytes by category: %s", m.entrypoint);
	}
	plot_text_fit(title, sizeof(title), 17, p->right - p->left);
	text_begin(s, "title", p->left, TITLE_Y);
	svg_attr(s, "font-size", "17");
	svg_attr(s, "font-weight", "bold");
	text_end(s, title);
	const char *base = strrchr(path, '/');
	const char *name = p->name                   ? p->name
			   : strcmp(path, "-") == 0 ? "standard input"
			   : base                   ? base + 1
						    : path;
	/* The trace's name on the right, when the title leaves room for it. */
	if (plot_text_width(title, 17) + plot_text_width(name, 12) + 24 > p->right - p->left)
		name = NULL;
	if (name) {
		text_begin(s, "trace", p->right, TITLE_Y);
		svg_attr(s, "text-anchor", "end");
		svg_attr(s, "fill", "#555555");
		text_end(s, name);
	}

	/* What a job's picture leaves out, under the legend where it is read first. */
	if (p->note) {
		char note[512];
		snprintf(note, sizeof(note), "%s", p->note);
		plot_text_fit(note, sizeof(note), 12, p->right - p->left);
		text_begin(s, "note", p->left, LEGEND_Y + (double)(l->rows - 1) * LEGEND_ROW + 4 +
						       NOTE_ROW);
		svg_attr(s, "fill", "#555555");
		text_end(s, note);
	}
	char axis[96];
	snprintf(axis, sizeof(axis), "time since the %s start (%s)", p->v ? "session" : "job's first",
		 p->time.unit);
	text_begin(s, "x-title", (p->left + p->right) / 2, p->height - 10);
	svg_attr(s, "text-anchor", "middle");
	text_end(s, axis);
	double mid = (p->panels[0].top + p->panels[p->n_panels - 1].bottom) / 2;
	char tr[96], a[32];
	snprintf(tr, sizeof(tr), "rotate(-90 18 %s)", svg_num(a, mid));
	text_begin(s, "y-title", 18, mid);
	svg_attr(s, "transform", tr);
	svg_attr(s, "text-anchor", "middle");
	text_end(s, "live bytes");
}

static int draw(struct plot *p, const struct legend *l, const char *path)
{
	struct svg *s = &p->svg;
	char vb[96], a[32], b[32];
	uint64_t peak = 0;
	for (size_t i = 0; i < p->n_panels; i++)
		if (p->panels[i].d->peak_bytes > peak)
			peak = p->panels[i].d->peak_bytes;
	svg_open(s, "svg");
	svg_attr(s, "xmlns", "http://www.w3.org/2000/svg");
	svg_attr(s, "xmlns:xlink", "http://www.w3.org/1999/xlink");
	svg_attr_num(s, "width", p->width);
	svg_attr_num(s, "height", p->height);
	snprintf(vb, sizeof(vb), "0 0 %s %s", svg_num(a, p->width), svg_num(b, p->height));
	svg_attr(s, "viewBox", vb);
	svg_attr(s, "font-family", "DejaVu Sans, Helvetica, Arial, sans-serif");
	svg_attr(s, "font-size", "12");
	svg_attr_u64(s, "data-peak-bytes", peak);
	svg_attr_u64(s, "data-devices", p->n_panels);
	svg_attr_u64(s, "data-buckets", p->v ? p->v->n_buckets : p->panels[0].v->n_buckets);
	svg_attr_u64(s, "data-start-ns", p->t0);
	svg_attr_u64(s, "data-end-ns", p->t1);
	svg_attr_u64(s, "data-updates", p->n_updates);
	svg_open(s, "rect");
	svg_attr(s, "width", "100%");
	svg_attr(s, "height", "100%");
	svg_attr(s, "fill", "#ffffff");
	svg_close(s, "rect");
	if (plot_bands_any(p) || p->n_marks) {
		svg_open(s, "defs");
		plot_bands_defs(p);
		plot_updates_defs(p);
		svg_close(s, "defs");
	}
	titles(p, path, l);
	legend_draw(p, l);
	int ret = 0;
	for (size_t i = 0; i < p->n_panels && ret == 0; i++)
		ret = plot_panel_draw(p, &p->panels[i]);
	svg_close(s, "svg");
	return ret;
}

/* The picture laid out, written to a.out; status CLI_OK, or CLI_FAIL printed. */
static int write_out(struct plot *p, const struct plot_args *a, const char *path)
{
	struct legend l;
	struct cli_out o;
	layout_y(p, (double)a->height, &l);
	int status = cli_out_open(&o, a->out);
	if (status == CLI_OK) {
		svg_begin(&p->svg, o.f);
		int ret = draw(p, &l, path);
		if (ret < 0)
			fprintf(stderr, "%s: %s\n", cli_path_name(path), strerror(-ret));
		status = cli_out_close(&o, ret == 0);
	}
	return status;
}

/* A job's picture: its name on the right, the folder's or the traces' count. */
static int run_job(int argc, char **argv, const struct plot_args *a)
{
	size_t n;
	char **paths = cli_job_paths_of(argc, argv, &n), name[256];
	if (!paths)
		return CLI_FAIL;
	const char *dir = argv[optind], *base;
	size_t len = strlen(dir);
	/* "runs/job/" names the folder job. */
	while (len > 1 && dir[len - 1] == '/')
		len--;
	for (base = dir + len; base > dir && base[-1] != '/'; base--)
		;
	if (argc - optind == 1)
		snprintf(name, sizeof(name), "%.*s", (int)(dir + len - base), base);
	else
		snprintf(name, sizeof(name), "%zu traces", n);
	const struct plot_job_opts jo = {
	    .device = a->device,
	    .buckets = a->buckets,
	    .processes = a->processes ? a->processes : 16,
	    .jobs = a->jobs,
	};
	struct plot p = {.name = name};
	struct plot_job *pj;
	bool failed = false;
	int status = plot_job_read(&p, &pj, paths, n, &jo, &failed);
	if (status == CLI_OK) {
		layout_x(&p, (double)a->width);
		status = write_out(&p, a, name);
	}
	free(p.panels);
	plot_job_free(pj);
	free(paths);
	return failed ? CLI_FAIL : status;
}

static int run(int argc, char **argv)
{
	struct plot_args a = {.width = 1280, .height = 720};
	int status;
	if (!cli_parse(&cli_plot, argc, argv, &a, &status))
		return status;
	if (!a.out)
		return cli_usage_error(&cli_plot, "-o FILE is required (- for standard output)");
	if (cli_job_args(argc, argv))
		return run_job(argc, argv, &a);
	const char *path = cli_trace_arg(&cli_plot, argc, argv, &status);
	if (!path)
		return status;
	/* The allocations one by one are the report's: the plot draws the buckets only. */
	struct cgtrace_view_options vo = {.buckets = a.buckets, .max_allocs = 1};
	struct cgtrace_view *v = cli_view_load(path, &vo, CGTRACE_READ_SKIP_STACKS);
	if (!v)
		return CLI_FAIL;
	struct plot p = {.v = v};
	status = pick_devices(&p, path, a.device);
	if (status == CLI_OK) {
		layout_x(&p, (double)a.width);
		/* Bands and updates at the time axis's resolution; the legend names them. */
		if (plot_bands_collect(&p) < 0 || plot_updates_collect(&p) < 0) {
			fprintf(stderr, "%s: %s\n", cli_path_name(path), strerror(ENOMEM));
			status = CLI_FAIL;
		}
	}
	if (status == CLI_OK)
		status = write_out(&p, &a, path);
	plot_bands_free(&p);
	plot_updates_free(&p);
	free(p.panels);
	cgtrace_view_free(v);
	return status;
}

/* SPDX-License-Identifier: MIT */
/* cgtrace plot's picture: what the command lays out and the panels draw. */
#ifndef CGTRACE_PLOT_H
#define CGTRACE_PLOT_H

#include "cli.h"
#include "palette.h"
#include "plot-axis.h"
#include "svg.h"

/* The step kinds drawn as background bands, in the view's order of bands. */
#define PLOT_N_STEPS 3
extern const enum cgtrace_step plot_steps[PLOT_N_STEPS];

/* One band of the view's step bands, in px along the time axis. */
struct plot_band {
	double x0, x1;
};

/* Where a training update starts, in px along the time axis, and whether it is labelled. */
struct plot_update_mark {
	double x;
	uint64_t update;
	bool label;
};

/* One device's panel; its plot area is [p->left, p->right] x [top, bottom]. */
struct plot_panel {
	const struct cgtrace_view_device *d;
	const struct cgtrace_view *v; /* whose grid d's buckets are on */
	uint64_t shift;               /* the view's time 0 on the picture's axis (a job's process) */
	const char *info_name; /* the device's name from its identity, NULL when none */
	/* A job's: the header's first words instead of the device's name, its totals instead. */
	const char *name, *totals;
	const struct cgtrace_process *process; /* a job's process, NULL: none */
	/* A job's physical device: d is its sum over the processes, drawn in one colour. */
	const struct cgtrace_job_gpu *gpu;
	double top, bottom;
	struct plot_bytes_axis bytes;
	bool capacity_shown; /* the capacity is on the scale (else only named) */
	uint64_t used_max;   /* the highest used bytes of its checkpoints */
	uint64_t range;      /* what the bytes axis must reach */
	bool last;           /* the bottom panel: the time labels go under it */
};

struct plot {
	const struct cgtrace_view *v; /* NULL for a job: each panel has its own */
	/* A job's title, the name on its right, and a line under the legend (NULL: none). */
	const char *title, *name, *note;
	struct svg svg;
	double width, height;
	double left, right; /* the plot areas' x extent, px */
	uint64_t t0, t1;    /* the time axis, ns (t1 > t0) */
	struct plot_time_axis time;
	struct plot_panel *panels;
	size_t n_panels;
	bool category_present[CGTRACE_CAT_COUNT];
	/* Bands per step kind, in time order, whole pixel columns; no two of a kind overlap. */
	struct plot_band *bands[PLOT_N_STEPS];
	size_t n_bands[PLOT_N_STEPS];
	/* The training updates (view->steps) and the starts drawn, thinned out (plot-updates.c). */
	size_t n_updates;
	struct plot_update_mark *marks;
	size_t n_marks;
};

static inline double plot_x(const struct plot *p, uint64_t t)
{
	if (t <= p->t0)
		return p->left;
	if (t >= p->t1)
		return p->right;
	return p->left + (double)(t - p->t0) / (double)(p->t1 - p->t0) * (p->right - p->left);
}

static inline double plot_y(const struct plot_panel *pn, uint64_t bytes)
{
	double f = (double)bytes / (double)pn->bytes.top;
	return pn->bottom - (f > 1 ? 1 : f) * (pn->bottom - pn->top);
}

/* The view's step bands at the picture's resolution; -ENOMEM. */
int plot_bands_collect(struct plot *p);
void plot_bands_free(struct plot *p);
bool plot_bands_any(const struct plot *p);
/* In <defs>: each step kind's bands as one path of unit height, which panels scale. */
void plot_bands_defs(struct plot *p);

/* The training updates' starts at the picture's resolution, thinned out; -ENOMEM. */
int plot_updates_collect(struct plot *p);
void plot_updates_free(struct plot *p);
/* In <defs>: the starts drawn as one path of unit height, which panels scale. */
void plot_updates_defs(struct plot *p);
/* In a panel: the starts' lines and the update numbers. */
void plot_updates_draw(struct plot *p, const struct plot_panel *pn);

/* Everything inside one panel; -ENOMEM. */
int plot_panel_draw(struct plot *p, const struct plot_panel *pn);

/* A job's panels (plot-job.c). */
struct plot_job_opts {
	const char *device;  /* each process's device of that name, NULL: its of highest peak */
	size_t buckets;      /* each process's view's, and the physical devices' grid */
	size_t processes;    /* the processes, and the physical devices, drawn at most */
	size_t jobs;         /* traces read at once */
};
struct plot_job; /* what the panels point into */
/*
 * Reads the job of paths and fills p's panels (the processes', then the
 * physical devices'), time axis, title and note: CLI_OK, or CLI_FAIL
 * printed with nothing to draw. *failed: a trace could not be read
 * (printed), the others drawn. Free *job with plot_job_free after p.
 */
int plot_job_read(struct plot *p, struct plot_job **job, char *const *paths, size_t n,
		  const struct plot_job_opts *o, bool *failed);
void plot_job_free(struct plot_job *job);

/* Text width estimate for layout: sans-serif at size px, about 0.6 em a character. */
double plot_text_width(const char *s, double size);
/* Cuts s (a buffer of cap bytes) at a character to fit room px, ending it with an ellipsis. */
void plot_text_fit(char *s, size_t cap, double size, double room);

#endif

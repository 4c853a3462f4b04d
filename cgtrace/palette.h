/* SPDX-License-Identifier: MIT */
/*
 * The colours of the pictures, one table (docs/views.md): the SVG plot
 * draws with it, and the HTML report gets it in its data block, so the
 * two never disagree. The data's colours only: each picture's own chrome
 * (text, grid lines, axes) is its own.
 */
#ifndef CGTRACE_PALETTE_H
#define CGTRACE_PALETTE_H

#include "cli.h"

/* The marks, each named once: X(member, colour). */
#define CLI_PALETTE_MARKS(X)                                                                       \
	X(peak, "#c00000")     /* the peak's dot and label */                                      \
	X(oom, "#6a3d9a")      /* out-of-memory failures */                                        \
	X(used, "#333333")     /* the device's used bytes at its checkpoints */                    \
	X(capacity, "#555555") /* the device's capacity */                                         \
	X(rest, "#d0d0d0")     /* the allocations not kept one by one */                           \
	X(update, "#5b6770")   /* where each training update starts */                             \
	X(job_sum, "#44546a")  /* a physical device's bytes of every process of a job */    \
	X(baseline, "#8a7967") /* the baseline run's live bytes (report --baseline), muted */

struct cli_palette {
	const char *category[CGTRACE_CAT_COUNT];
	const char *step[CGTRACE_STEP_OPTIMIZER + 1]; /* NULL for CGTRACE_STEP_NONE */
	/* A step band's opacity over the picture: where bands of every kind meet, still a background. */
	const char *band_opacity;
#define CLI_PALETTE_MEMBER(name, colour) const char *name;
	CLI_PALETTE_MARKS(CLI_PALETTE_MEMBER)
#undef CLI_PALETTE_MEMBER
};

extern const struct cli_palette cli_palette;

/*
 * The palette as one JSON object: "category" and "step" arrays (indexed
 * by the enums; null for no step), "band_opacity" a number, a string per
 * mark.
 */
void cli_palette_json(struct cli_jw *w);

#endif

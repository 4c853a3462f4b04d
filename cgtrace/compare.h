/* SPDX-License-Identifier: MIT */
/*
 * Two sides' measures matched (compare.c): processes by rank, devices and
 * physical GPUs by name, training rows by update number and phase, sites
 * by their symbolized frame's name and device, never by an address, so
 * two runs loaded at different addresses match (docs/compare.md).
 */
#ifndef CGTRACE_COMPARE_H
#define CGTRACE_COMPARE_H

#include "measure.h"

/* One thing of either side: its index on each, -1 where that side has none. */
struct cli_pair {
	long base, new;
};

/*
 * The processes paired: by rank; a process without one (a launcher, a
 * worker) by its executable and its order among those of that
 * executable; one process each side with each other whatever they are.
 * In the base's order, then the new side's own. -ENOMEM; free(*out).
 */
int cli_pair_procs(const struct cli_measure *a, const struct cli_measure *b, struct cli_pair **out,
                   size_t *n);
/* The devices of two processes (either NULL: none), by name. */
int cli_pair_devs(const struct cli_mproc *a, const struct cli_mproc *b, struct cli_pair **out,
                  size_t *n);
/* The physical GPUs, by key (gpu:UUID). */
int cli_pair_gpus(const struct cli_measure *a, const struct cli_measure *b, struct cli_pair **out,
                  size_t *n);
/* The training rows, by update number and phase: only the rows both sides have. */
int cli_pair_rows(const struct cli_mproc *a, const struct cli_mproc *b, struct cli_pair **out,
                  size_t *n);

/* A site's bytes at the peak on each side. */
struct cli_site_change {
	const char *name, *device;
	uint64_t base, new;
};
/*
 * The sites of two processes (either NULL) on device (NULL: every one),
 * matched by name and device, whose bytes at the peak differ, the largest
 * change first (either way), then by name. -ENOMEM; free(*out).
 */
int cli_site_changes(const struct cli_mproc *a, const struct cli_mproc *b, const char *device,
                     struct cli_site_change **out, size_t *n);

/* new - base as a signed double, and the change in percent of base (NaN when base is 0). */
double cli_change(uint64_t base, uint64_t new);
double cli_change_pct(uint64_t base, uint64_t new);

#endif

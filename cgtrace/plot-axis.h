/* SPDX-License-Identifier: MIT */
/* The plot's axes: steps people read at a glance, and the labels written on them. */
#ifndef CGTRACE_PLOT_AXIS_H
#define CGTRACE_PLOT_AXIS_H

#include <stddef.h>
#include <stdint.h>

/*
 * A bytes axis from 0: the smallest power-of-two step (256 MiB, 512 MiB,
 * 1 GiB, ...) with which at most max_ticks steps (at least 1) reach max;
 * top is the first multiple of the step at or above max (at least one step).
 */
struct plot_bytes_axis {
	uint64_t step, top;
	size_t n_steps; /* top / step */
};
void plot_bytes_axis(struct plot_bytes_axis *a, uint64_t max, size_t max_ticks);
/*
 * A tick's label: v in the largest binary unit it fills, up to two decimals
 * ("1.25 GiB"), in a smaller unit where two decimals would not be exact.
 */
const char *plot_bytes_tick(char buf[32], uint64_t v);

/* A time axis over [t0, t1] ns: 1/2/5 x 10^k ns steps, labels in one unit. */
struct plot_time_axis {
	uint64_t step;    /* ns */
	uint64_t first;   /* the first tick: the first multiple of step at or after t0 */
	double unit_ns;   /* 1e9: labels in seconds, 1e6 ms, 1e3 us, 1 ns */
	const char *unit; /* "s", "ms", "us", "ns" */
	int decimals;     /* what the step needs in that unit */
};
/* The smallest step with at most max_ticks ticks over [t0, t1] (at least one). */
void plot_time_axis(struct plot_time_axis *a, uint64_t t0, uint64_t t1, size_t max_ticks);
/* A tick's label, without the unit (the axis title names it). */
const char *plot_time_tick(char buf[32], const struct plot_time_axis *a, uint64_t t);

/* "1.23 GiB", "512 B": two decimals in the largest unit the value fills. */
const char *plot_bytes_text(char buf[32], uint64_t bytes);
/* "4.56 s", "12.30 ms", "1.50 us", "800 ns". */
const char *plot_time_text(char buf[32], uint64_t ns);

#endif

/* SPDX-License-Identifier: MIT */
/* Axis steps and labels for cgtrace plot. */
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "plot-axis.h"

static const char *const byte_units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
#define N_BYTE_UNITS (sizeof(byte_units) / sizeof(byte_units[0]))

static uint64_t div_up(uint64_t a, uint64_t b)
{
	return a / b + (a % b != 0);
}

void plot_bytes_axis(struct plot_bytes_axis *a, uint64_t max, size_t max_ticks)
{
	if (max_ticks == 0)
		max_ticks = 1;
	if (max == 0)
		max = 1;
	uint64_t step = 1;
	while (div_up(max, step) > max_ticks && step < (UINT64_C(1) << 63))
		step <<= 1;
	a->step = step;
	a->n_steps = (size_t)div_up(max, step);
	/* Near 2^64 bytes the last tick is past what a count holds: the top is the largest one. */
	a->top = step > UINT64_MAX / a->n_steps ? UINT64_MAX : a->n_steps * step;
}

/* Drops the zeros after the point, and the point when nothing follows it. */
static void trim_decimals(char *buf)
{
	char *dot = strchr(buf, '.');
	if (!dot)
		return;
	char *end = buf + strlen(buf);
	while (end > dot + 1 && end[-1] == '0')
		end--;
	*(end == dot + 1 ? dot : end) = '\0';
}

/* bytes / 1024^u for the largest unit u it fills, as it reads once rounded to decimals. */
static size_t bytes_unit(uint64_t bytes, int decimals, double *scaled)
{
	double v = (double)bytes, scale = pow(10, decimals);
	size_t u = 0;
	for (; v >= 1024 && u + 1 < N_BYTE_UNITS; u++)
		v /= 1024;
	/* 1023.999 MiB would print as 1024.00 MiB: one unit up it reads 1.00 GiB. */
	if (u + 1 < N_BYTE_UNITS && round(v * scale) / scale >= 1024) {
		v /= 1024;
		u++;
	}
	*scaled = v;
	return u;
}

const char *plot_bytes_tick(char buf[32], uint64_t v)
{
	double s;
	size_t u = bytes_unit(v, 2, &s);
	/*
	 * A tick reads exactly: 1152 MiB rather than 1.13 GiB. Two decimals
	 * of 1024^u bytes are exact for multiples of 1024^u / 4 (100 = 4 x 25).
	 */
	while (u > 0 && v % ((UINT64_C(1) << (10 * u)) / 4) != 0) {
		u--;
		s = (double)v / (double)(UINT64_C(1) << (10 * u));
	}
	if (u == 0) {
		snprintf(buf, 32, "%" PRIu64 " B", v);
		return buf;
	}
	char num[24];
	snprintf(num, sizeof(num), "%.2f", s);
	trim_decimals(num);
	snprintf(buf, 32, "%s %s", num, byte_units[u]);
	return buf;
}

const char *plot_bytes_text(char buf[32], uint64_t bytes)
{
	double s;
	size_t u = bytes_unit(bytes, 2, &s);
	if (u == 0)
		snprintf(buf, 32, "%" PRIu64 " B", bytes);
	else
		snprintf(buf, 32, "%.2f %s", s, byte_units[u]);
	return buf;
}

const char *plot_time_text(char buf[32], uint64_t ns)
{
	if (ns >= 1000000000)
		snprintf(buf, 32, "%.2f s", (double)ns / 1e9);
	else if (ns >= 1000000)
		snprintf(buf, 32, "%.2f ms", (double)ns / 1e6);
	else if (ns >= 1000)
		snprintf(buf, 32, "%.2f us", (double)ns / 1e3);
	else
		snprintf(buf, 32, "%" PRIu64 " ns", ns);
	return buf;
}

void plot_time_axis(struct plot_time_axis *a, uint64_t t0, uint64_t t1, size_t max_ticks)
{
	static const uint64_t mant[] = {1, 2, 5};
	if (max_ticks == 0)
		max_ticks = 1;
	if (t1 < t0)
		t1 = t0;
	uint64_t span = t1 - t0, step = 1;
	for (uint64_t p = 1;; p *= 10) {
		bool found = false;
		for (size_t i = 0; i < 3 && !found; i++) {
			step = mant[i] * p;
			found = span / step < max_ticks; /* span / step + 1 ticks, never past 2^64 */
		}
		if (found || p > UINT64_MAX / 100)
			break;
	}
	a->step = step;
	/* The first tick at or after t0; t0 itself where that would pass 2^64. */
	a->first = t0 / step < UINT64_MAX / step ? div_up(t0, step) * step : t0;
	/* The unit of the largest tick, so that every label reads in it without a long tail of
	 * zeros. */
	uint64_t last = t1 / step * step;
	a->unit_ns = last >= 1000000000 ? 1e9 : last >= 1000000 ? 1e6 : last >= 1000 ? 1e3 : 1;
	a->unit = last >= 1000000000 ? "s" : last >= 1000000 ? "ms" : last >= 1000 ? "us" : "ns";
	double step_u = (double)step / a->unit_ns;
	a->decimals = step_u >= 1 ? 0 : (int)ceil(-log10(step_u) - 1e-9);
}

const char *plot_time_tick(char buf[32], const struct plot_time_axis *a, uint64_t t)
{
	snprintf(buf, 32, "%.*f", a->decimals, (double)t / a->unit_ns);
	return buf;
}

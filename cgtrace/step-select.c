/* SPDX-License-Identifier: MIT */
/* Which training updates a bounded picture lists (step-select.h). */
#include <errno.h>
#include <stdlib.h>

#include "step-select.h"

/* Sorting context: qsort has none, and the comparison needs one device's figures. */
static const struct cgtrace_step_figures *sort_figures;

/* The highest peak first, the earlier row among equals. */
static int by_peak(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	uint64_t px = sort_figures[x].peak_bytes, py = sort_figures[y].peak_bytes;
	if (px != py)
		return px > py ? -1 : 1;
	return x < y ? -1 : x > y;
}

/* On each device, its top rows by peak among the update rows ur[0..n). */
static void keep_top(const struct cgtrace_steps *st, size_t *ur, size_t n, size_t top, bool *keep,
                     size_t *kept, size_t limit)
{
	size_t *order = ur + n; /* the second half of the caller's buffer */
	for (size_t d = 0; d < st->n_devices; d++) {
		for (size_t i = 0; i < n; i++)
			order[i] = ur[i];
		sort_figures = st->figures[d];
		qsort(order, n, sizeof(*order), by_peak);
		for (size_t i = 0; i < n && i < top && *kept < limit; i++)
			if (!keep[order[i]]) {
				keep[order[i]] = true;
				++*kept;
			}
	}
}

int cli_step_select(const struct cgtrace_steps *st, size_t limit, bool **keep_out, size_t *kept)
{
	size_t n = 0;
	bool *keep = calloc(st->n_rows ? st->n_rows : 1, sizeof(*keep));
	/* The update rows, then room to sort them. */
	size_t *ur = malloc((st->n_rows ? st->n_rows : 1) * 2 * sizeof(*ur));
	if (!keep || !ur) {
		free(keep);
		free(ur);
		return -ENOMEM;
	}
	for (size_t r = 0; r < st->n_rows; r++)
		if (!st->rows[r].is_phase)
			ur[n++] = r;
	*kept = 0;
	if (n <= limit) {
		for (size_t i = 0; i < n; i++)
			keep[ur[i]] = true;
		*kept = n;
	} else {
		keep[ur[0]] = keep[ur[n - 1]] = true;
		*kept = 2;
		size_t top = st->n_devices ? limit / 4 / st->n_devices : 0;
		keep_top(st, ur, n, top ? top : 1, keep, kept, limit);
		/* The others, evenly: want of the free rows, spread over their order. */
		size_t free_rows = 0, want = limit - *kept;
		for (size_t i = 0; i < n; i++)
			if (!keep[ur[i]])
				ur[n + free_rows++] = ur[i];
		for (size_t j = 0; j < want; j++)
			keep[ur[n + j * free_rows / want]] = true;
		*kept = limit;
	}
	free(ur);
	*keep_out = keep;
	return 0;
}

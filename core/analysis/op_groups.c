/* SPDX-License-Identifier: MIT */
/* What made the peak: the live allocations at the peak, grouped by op_name. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "op_groups.h"
#include "export.h"
#include "sat.h"

/* Bytewise, an absent op_name before every present one ("" included). */
static int name_cmp(const char *a, const char *b)
{
	if (!a || !b)
		return (a != NULL) - (b != NULL);
	return strcmp(a, b);
}

static int by_name(const void *a, const void *b, void *live)
{
	const struct cgtrace_live_alloc *l = live;
	const size_t *x = a, *y = b;
	return name_cmp(l[*x].op_name, l[*y].op_name);
}

static int by_bytes(const void *a, const void *b)
{
	const struct cgtrace_op_group *x = a, *y = b;
	if (x->bytes != y->bytes)
		return x->bytes > y->bytes ? -1 : 1;
	return name_cmp(x->op_name, y->op_name);
}

void cg_op_groups_sort(struct cgtrace_op_group *g, size_t n)
{
	if (n)
		qsort(g, n, sizeof(*g), by_bytes);
}

CG_EXPORT int cgtrace_memory_peak_by_op(const struct cgtrace_memory_report *rep,
					struct cgtrace_op_group **out, size_t *n_out)
{
	size_t n = rep->n_breakdown, n_groups = 0;
	*out = NULL;
	*n_out = 0;
	/* A bounded breakdown's groups were made from every allocation at the peak. */
	if (rep->op_groups) {
		if (!rep->n_op_groups)
			return 0;
		*out = malloc(rep->n_op_groups * sizeof(**out));
		if (!*out)
			return -ENOMEM;
		memcpy(*out, rep->op_groups, rep->n_op_groups * sizeof(**out));
		*n_out = rep->n_op_groups;
		return 0;
	}
	if (!n)
		return 0;
	/* Sorting indices by name keeps this O(n log n) for 300,000 live allocations. */
	size_t *idx = malloc(n * sizeof(*idx));
	struct cgtrace_op_group *g = calloc(n, sizeof(*g));
	if (!idx || !g) {
		free(idx);
		free(g);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++)
		idx[i] = i;
	qsort_r(idx, n, sizeof(*idx), by_name, rep->peak_breakdown);
	for (size_t i = 0; i < n; i++) {
		const struct cgtrace_live_alloc *a = &rep->peak_breakdown[idx[i]];
		if (!n_groups || name_cmp(g[n_groups - 1].op_name, a->op_name) != 0)
			g[n_groups++].op_name = a->op_name;
		g[n_groups - 1].count++;
		g[n_groups - 1].bytes = cg_sat_add(g[n_groups - 1].bytes, a->bytes);
	}
	free(idx);
	cg_op_groups_sort(g, n_groups);
	*out = g;
	*n_out = n_groups;
	return 0;
}

CG_EXPORT void cgtrace_op_groups_free(struct cgtrace_op_group *groups)
{
	free(groups);
}

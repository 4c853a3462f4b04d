/* SPDX-License-Identifier: MIT */
/* Growth by site for cgtrace steps --growth (step-growth.h). */
#include "step-growth.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* One piece of growth with its site's name, to be sorted into rows. */
struct named {
	const struct cgtrace_step_growth *g;
	const struct cgtrace_frame *site;
	char *name;
};

static int named_cmp(const void *a, const void *b)
{
	const struct named *x = a, *y = b;
	int c = strcmp(x->g->device, y->g->device);
	if (!c)
		c = strcmp(x->name, y->name);
	if (!c)
		c = (x->g->update > y->g->update) - (x->g->update < y->g->update);
	return c;
}

/* The sites that grew in more than one update first, then by bytes, then by name. */
static int row_cmp(const void *a, const void *b)
{
	const struct step_growth_row *x = a, *y = b;
	bool rx = x->updates > 1, ry = y->updates > 1;
	if (rx != ry)
		return rx ? -1 : 1;
	if (x->bytes != y->bytes)
		return x->bytes > y->bytes ? -1 : 1;
	int c = strcmp(x->name, y->name);
	return c ? c : strcmp(x->device, y->device);
}

uint64_t step_growth_per_update(const struct step_growth_row *r)
{
	uint64_t span = r->last >= r->first ? r->last - r->first + 1 : 1;
	return r->bytes / span;
}

static int fold(struct named *v, size_t n, struct step_growth_row **rows, size_t *out)
{
	struct step_growth_row *r = calloc(n ? n : 1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	size_t m = 0;
	for (size_t i = 0; i < n; i++) {
		const struct cgtrace_step_growth *g = v[i].g;
		struct step_growth_row *cur = m ? &r[m - 1] : NULL;
		if (!cur || strcmp(cur->device, g->device) || strcmp(cur->name, v[i].name)) {
			cur = &r[m++];
			*cur = (struct step_growth_row){.device = g->device, .stack_id = g->stack_id,
							.site = v[i].site, .name = v[i].name,
							.first = g->update};
			v[i].name = NULL;
		}
		cur->bytes += g->bytes;
		cur->count += g->count;
		/* In update order within a site: a new update shows as a new last. */
		if (!cur->updates || cur->last != g->update)
			cur->updates++;
		cur->last = g->update;
	}
	qsort(r, m, sizeof(*r), row_cmp);
	*rows = r;
	*out = m;
	return 0;
}

int step_growth_rows(struct cli_sites *s, const struct cgtrace_steps *st, const char *device,
		     struct step_growth_row **rows, size_t *n)
{
	struct named *v = calloc(st->n_growth ? st->n_growth : 1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	size_t k = 0;
	int ret = 0;
	char buf[600];
	for (size_t i = 0; ret == 0 && i < st->n_growth; i++) {
		const struct cgtrace_step_growth *g = &st->growth[i];
		if (device && strcmp(device, g->device))
			continue;
		const struct cgtrace_frame *site = cli_alloc_site(s, g->stack_id, false);
		v[k] = (struct named){g, site, strdup(cli_frame_name(buf, sizeof(buf), site))};
		if (!v[k++].name)
			ret = -ENOMEM;
	}
	if (ret == 0) {
		qsort(v, k, sizeof(*v), named_cmp);
		ret = fold(v, k, rows, n);
	}
	for (size_t i = 0; i < k; i++)
		free(v[i].name);
	free(v);
	return ret;
}

void step_growth_free(struct step_growth_row *rows, size_t n)
{
	for (size_t i = 0; rows && i < n; i++)
		free(rows[i].name);
	free(rows);
}

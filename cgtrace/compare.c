/* SPDX-License-Identifier: MIT */
/*
 * Matching two sides (compare.h): each side's items sorted by a key and
 * merged, one sort and one pass whatever the count, so a side of
 * thousands of sites or updates matches in n log n.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compare.h"

/* A side's items to match: their count and how two compare by key. */
struct side {
	const void *items;
	size_t n;
	int (*cmp)(const void *x, const void *y); /* two items, each of either side */
	const void *(*at)(const void *items, size_t i);
};

static int index_cmp(const void *x, const void *y, void *ctx)
{
	const struct side *s = ctx;
	const size_t *i = x, *j = y;
	int c = s->cmp(s->at(s->items, *i), s->at(s->items, *j));
	return c ? c : (*i > *j) - (*i < *j);
}

static size_t *sorted(const struct side *s)
{
	size_t *ix = malloc((s->n ? s->n : 1) * sizeof(*ix));
	if (!ix)
		return NULL;
	for (size_t i = 0; i < s->n; i++)
		ix[i] = i;
	qsort_r(ix, s->n, sizeof(*ix), index_cmp, (void *)s);
	return ix;
}

static int pair_cmp(const void *x, const void *y)
{
	const struct cli_pair *p = x, *q = y;
	/* Base items in their order, then the new side's alone in theirs. */
	long a = p->base >= 0 ? p->base : LONG_MAX / 2 + p->new;
	long b = q->base >= 0 ? q->base : LONG_MAX / 2 + q->new;
	return (a > b) - (a < b);
}

/* Both sides merged by key: pairs of equal keys, and the items of one side alone unless both_only.
 */
static int merge(const struct side *a, const struct side *b, bool both_only, struct cli_pair **out,
                 size_t *n)
{
	size_t *ia = sorted(a), *ib = sorted(b), i = 0, j = 0, k = 0;
	struct cli_pair *p = malloc((a->n + b->n ? a->n + b->n : 1) * sizeof(*p));
	if (!ia || !ib || !p) {
		free(ia), free(ib), free(p);
		return -ENOMEM;
	}
	while (i < a->n || j < b->n) {
		int c = i == a->n   ? 1
		        : j == b->n ? -1
		                    : a->cmp(a->at(a->items, ia[i]), b->at(b->items, ib[j]));
		if (c == 0)
			p[k++] = (struct cli_pair){(long)ia[i++], (long)ib[j++]};
		else if (c < 0 && !both_only)
			p[k++] = (struct cli_pair){(long)ia[i++], -1};
		else if (c > 0 && !both_only)
			p[k++] = (struct cli_pair){-1, (long)ib[j++]};
		else if (c < 0)
			i++;
		else
			j++;
	}
	free(ia);
	free(ib);
	qsort(p, k, sizeof(*p), pair_cmp);
	*out = p;
	*n = k;
	return 0;
}

double cli_change(uint64_t base, uint64_t new)
{
	return (double)new - (double)base;
}

double cli_change_pct(uint64_t base, uint64_t new)
{
	return base ? cli_change(base, new) * 100.0 / (double)base : NAN;
}

/* ---- processes ---- */

/* A process's key: "r" and its rank, or "x", its executable and its order among those. */
struct proc_key {
	char *key;
};

static const void *key_at(const void *items, size_t i)
{
	return &((const struct proc_key *)items)[i];
}

static int key_cmp(const void *x, const void *y)
{
	return strcmp(((const struct proc_key *)x)->key, ((const struct proc_key *)y)->key);
}

static struct proc_key *proc_keys(const struct cli_measure *m)
{
	struct proc_key *k = calloc(m->n_procs ? m->n_procs : 1, sizeof(*k));
	for (size_t i = 0; k && i < m->n_procs; i++) {
		const struct cli_mproc *p = &m->procs[i];
		const char *exe = p->executable ? p->executable : "";
		size_t order = 0;
		for (size_t j = 0; j < i; j++)
			order += m->procs[j].rank < 0 && p->rank < 0 && m->procs[j].executable &&
			         strcmp(m->procs[j].executable, exe) == 0;
		size_t len = strlen(exe) + 48;
		if (!(k[i].key = malloc(len))) {
			for (size_t j = 0; j < i; j++)
				free(k[j].key);
			free(k);
			return NULL;
		}
		if (p->rank >= 0)
			snprintf(k[i].key, len, "r%020lld", (long long)p->rank);
		else
			snprintf(k[i].key, len, "x%s#%zu", exe, order);
	}
	return k;
}

int cli_pair_procs(const struct cli_measure *a, const struct cli_measure *b, struct cli_pair **out,
                   size_t *n)
{
	if (a->n_procs == 1 && b->n_procs == 1) {
		if (!(*out = malloc(sizeof(**out))))
			return -ENOMEM;
		**out = (struct cli_pair){0, 0};
		*n = 1;
		return 0;
	}
	struct proc_key *ka = proc_keys(a), *kb = proc_keys(b);
	int r = -ENOMEM;
	if (ka && kb) {
		const struct side sa = {ka, a->n_procs, key_cmp, key_at};
		const struct side sb = {kb, b->n_procs, key_cmp, key_at};
		r = merge(&sa, &sb, false, out, n);
	}
	for (size_t i = 0; ka && i < a->n_procs; i++)
		free(ka[i].key);
	for (size_t i = 0; kb && i < b->n_procs; i++)
		free(kb[i].key);
	free(ka);
	free(kb);
	return r;
}

/* ---- devices, GPUs, rows ---- */

static const void *dev_at(const void *items, size_t i)
{
	return &((const struct cli_mdev *)items)[i];
}

static int dev_cmp(const void *x, const void *y)
{
	return strcmp(((const struct cli_mdev *)x)->device, ((const struct cli_mdev *)y)->device);
}

int cli_pair_devs(const struct cli_mproc *a, const struct cli_mproc *b, struct cli_pair **out,
                  size_t *n)
{
	const struct side sa = {a ? a->devs : NULL, a ? a->n_devs : 0, dev_cmp, dev_at};
	const struct side sb = {b ? b->devs : NULL, b ? b->n_devs : 0, dev_cmp, dev_at};
	return merge(&sa, &sb, false, out, n);
}

static const void *gpu_at(const void *items, size_t i)
{
	return &((const struct cli_mgpu *)items)[i];
}

static int gpu_cmp(const void *x, const void *y)
{
	return strcmp(((const struct cli_mgpu *)x)->key, ((const struct cli_mgpu *)y)->key);
}

int cli_pair_gpus(const struct cli_measure *a, const struct cli_measure *b, struct cli_pair **out,
                  size_t *n)
{
	const struct side sa = {a->gpus, a->n_gpus, gpu_cmp, gpu_at};
	const struct side sb = {b->gpus, b->n_gpus, gpu_cmp, gpu_at};
	return merge(&sa, &sb, false, out, n);
}

static const void *row_at(const void *items, size_t i)
{
	return &((const struct cgtrace_step_row *)items)[i];
}

/* By update, its own row first, then its phases by name (time in none first). */
static int row_cmp(const void *x, const void *y)
{
	const struct cgtrace_step_row *p = x, *q = y;
	if (p->update != q->update)
		return p->update < q->update ? -1 : 1;
	if (p->is_phase != q->is_phase)
		return p->is_phase ? 1 : -1;
	if (!p->phase || !q->phase)
		return !q->phase - !p->phase;
	return strcmp(p->phase, q->phase);
}

int cli_pair_rows(const struct cli_mproc *a, const struct cli_mproc *b, struct cli_pair **out,
                  size_t *n)
{
	const struct side sa = {a->rows, a->n_rows, row_cmp, row_at};
	const struct side sb = {b->rows, b->n_rows, row_cmp, row_at};
	return merge(&sa, &sb, true, out, n);
}

/* ---- sites ---- */

static const void *site_at(const void *items, size_t i)
{
	return &((const struct cli_msite *)items)[i];
}

static double magnitude(const struct cli_site_change *c)
{
	return fabs(cli_change(c->base, c->new));
}

static int change_cmp(const void *x, const void *y)
{
	const struct cli_site_change *p = x, *q = y;
	double a = magnitude(p), b = magnitude(q);
	if (a != b)
		return a > b ? -1 : 1;
	int c = strcmp(p->name, q->name);
	return c ? c : strcmp(p->device, q->device);
}

int cli_site_changes(const struct cli_mproc *a, const struct cli_mproc *b, const char *device,
                     struct cli_site_change **out, size_t *n)
{
	const struct side sa = {a ? a->sites : NULL, a ? a->n_sites : 0, cli_msite_key_cmp, site_at};
	const struct side sb = {b ? b->sites : NULL, b ? b->n_sites : 0, cli_msite_key_cmp, site_at};
	struct cli_pair *p;
	size_t np, k = 0;
	int r = merge(&sa, &sb, false, &p, &np);
	if (r < 0)
		return r;
	struct cli_site_change *c = malloc((np ? np : 1) * sizeof(*c));
	if (!c) {
		free(p);
		return -ENOMEM;
	}
	for (size_t i = 0; i < np; i++) {
		const struct cli_msite *x = p[i].base >= 0 ? &a->sites[p[i].base] : NULL;
		const struct cli_msite *y = p[i].new >= 0 ? &b->sites[p[i].new] : NULL;
		const struct cli_msite *any = x ? x : y;
		if (device && strcmp(any->device, device) != 0)
			continue;
		c[k] = (struct cli_site_change){any->name, any->device, x ? x->peak_bytes : 0,
		                                y ? y->peak_bytes : 0};
		k += c[k].base != c[k].new;
	}
	free(p);
	qsort(c, k, sizeof(*c), change_cmp);
	*out = c;
	*n = k;
	return 0;
}

/* SPDX-License-Identifier: MIT */
/*
 * The rows of top, leaks and the folded export: the per-stack figures
 * summed by site (the site frame's name and the device) or taken one per
 * stack, the largest first. A framework's trace holds hundreds of
 * thousands of stacks and some thousands of sites, so the sums are kept
 * per row as the figures are walked, never a copy per stack.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* FNV-1a: names are short, and hashed once each. */
static uint64_t str_hash(const char *s, uint64_t h)
{
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
	return h;
}

static size_t ptr_hash(const void *p)
{
	return (size_t)(((uintptr_t)p * 0x9e3779b97f4a7c15ull) >> 24);
}

/* A distinct name: equal names of two frames (two addresses on one line) are one. */
struct name {
	char *text;
	uint64_t hash;
};

/*
 * Open addressing, each table a vector of u32 (index + 1, 0: empty) over
 * the entries it indexes.
 */
struct tab {
	uint32_t *slot;
	size_t cap, n;
};

struct row {
	struct cli_site_row row;
	uint32_t name; /* in names; UINT32_MAX by stack */
	uint64_t hash;
};

struct site_rows {
	struct tab frames;                    /* by frame pointer, over frame_name */
	const struct cgtrace_frame **frame;   /* beside frames.slot: the key */
	uint32_t *frame_name;                 /* beside frames.slot: index in names */
	struct tab by_text;                   /* by name text, over names */
	struct name *names;
	size_t n_names, cap_names;
	struct tab by_row;                    /* by (name, device), over rows */
	struct row *rows;
	size_t n_rows, cap_rows;
};

static int grow_array(void **p, size_t *cap, size_t need, size_t size)
{
	if (need <= *cap)
		return 0;
	size_t c = *cap ? *cap * 2 : 256;
	void *n = realloc(*p, c * size);
	if (!n)
		return -ENOMEM;
	*p = n;
	*cap = c;
	return 0;
}

/* ---- site frames to names ---- */

static int frames_grow(struct site_rows *t)
{
	size_t cap = t->frames.cap ? t->frames.cap * 2 : 1024;
	const struct cgtrace_frame **frame = calloc(cap, sizeof(*frame));
	uint32_t *name = calloc(cap, sizeof(*name));
	if (!frame || !name) {
		free(frame);
		free(name);
		return -ENOMEM;
	}
	for (size_t i = 0; i < t->frames.cap; i++) {
		if (!t->frame[i])
			continue;
		size_t j = ptr_hash(t->frame[i]) & (cap - 1);
		while (frame[j])
			j = (j + 1) & (cap - 1);
		frame[j] = t->frame[i];
		name[j] = t->frame_name[i];
	}
	free(t->frame);
	free(t->frame_name);
	t->frame = frame;
	t->frame_name = name;
	t->frames.cap = cap;
	return 0;
}

/*
 * The table grown to twice its slots (1024 at first), over n entries of
 * stride bytes from base, each with its hash at offset off.
 */
static int tab_grow(struct tab *tab, const void *base, size_t n, size_t stride, size_t off)
{
	size_t cap = tab->cap ? tab->cap * 2 : 1024;
	uint32_t *slot = calloc(cap, sizeof(*slot));
	if (!slot)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		uint64_t h;
		memcpy(&h, (const char *)base + i * stride + off, sizeof(h));
		size_t j = h & (cap - 1);
		while (slot[j])
			j = (j + 1) & (cap - 1);
		slot[j] = (uint32_t)i + 1;
	}
	free(tab->slot);
	*tab = (struct tab){slot, cap, n};
	return 0;
}

static int texts_grow(struct site_rows *t)
{
	return tab_grow(&t->by_text, t->names, t->n_names, sizeof(*t->names),
			offsetof(struct name, hash));
}

/* The name's index, the text added (and owned) when new; -ENOMEM. */
static long intern_text(struct site_rows *t, const char *text)
{
	uint64_t h = str_hash(text, 0xcbf29ce484222325ull);
	if ((t->n_names + 1) * 2 > t->by_text.cap && texts_grow(t) < 0)
		return -ENOMEM;
	size_t j = h & (t->by_text.cap - 1);
	for (; t->by_text.slot[j]; j = (j + 1) & (t->by_text.cap - 1)) {
		const struct name *n = &t->names[t->by_text.slot[j] - 1];
		if (n->hash == h && strcmp(n->text, text) == 0)
			return t->by_text.slot[j] - 1;
	}
	if (grow_array((void **)&t->names, &t->cap_names, t->n_names + 1, sizeof(*t->names)) < 0)
		return -ENOMEM;
	char *copy = strdup(text);
	if (!copy)
		return -ENOMEM;
	t->names[t->n_names] = (struct name){copy, h};
	t->by_text.slot[j] = (uint32_t)++t->n_names;
	return (long)t->n_names - 1;
}

/* The name of site frame f (NULL: "(no stack)"), formatted once per frame; -ENOMEM. */
static long name_of(struct site_rows *t, const struct cgtrace_frame *f)
{
	static const struct cgtrace_frame none;
	const struct cgtrace_frame *k = f ? f : &none;
	if ((t->frames.n + 1) * 2 > t->frames.cap && frames_grow(t) < 0)
		return -ENOMEM;
	size_t j = ptr_hash(k) & (t->frames.cap - 1);
	for (; t->frame[j]; j = (j + 1) & (t->frames.cap - 1))
		if (t->frame[j] == k)
			return t->frame_name[j];
	char buf[600];
	long name = intern_text(t, cli_frame_name(buf, sizeof(buf), f));
	if (name < 0)
		return name;
	t->frame[j] = k;
	t->frame_name[j] = (uint32_t)name;
	t->frames.n++;
	return name;
}

/* ---- rows ---- */

static uint64_t sat(uint64_t a, uint64_t b)
{
	return a + b < a ? UINT64_MAX : a + b;
}

void cli_stat_add(struct cgtrace_stack_stat *to, const struct cgtrace_stack_stat *s)
{
	to->count = sat(to->count, s->count);
	to->total_bytes = sat(to->total_bytes, s->total_bytes);
	to->peak_count = sat(to->peak_count, s->peak_count);
	to->peak_bytes = sat(to->peak_bytes, s->peak_bytes);
	to->leaked_count = sat(to->leaked_count, s->leaked_count);
	to->leaked_bytes = sat(to->leaked_bytes, s->leaked_bytes);
	to->temporary_count = sat(to->temporary_count, s->temporary_count);
}

static int rows_grow(struct site_rows *t)
{
	return tab_grow(&t->by_row, t->rows, t->n_rows, sizeof(*t->rows), offsetof(struct row, hash));
}

static int row_append(struct site_rows *t, const struct cli_site_row *row, uint32_t name,
                      uint64_t hash)
{
	if (grow_array((void **)&t->rows, &t->cap_rows, t->n_rows + 1, sizeof(*t->rows)) < 0)
		return -ENOMEM;
	t->rows[t->n_rows++] = (struct row){*row, name, hash};
	return 0;
}

/* Adds the stat to its site's row on its device, the row made when new. */
static int add_by_site(struct site_rows *t, const struct cli_site_row *row, uint32_t name)
{
	uint64_t h = str_hash(row->device, t->names[name].hash ^ name);
	if ((t->n_rows + 1) * 2 > t->by_row.cap && rows_grow(t) < 0)
		return -ENOMEM;
	size_t j = h & (t->by_row.cap - 1);
	for (; t->by_row.slot[j]; j = (j + 1) & (t->by_row.cap - 1)) {
		size_t r = t->by_row.slot[j] - 1;
		struct cli_site_row *to = &t->rows[r].row;
		if (t->rows[r].name == name && strcmp(to->device, row->device) == 0) {
			cli_stat_add(&to->sum, &row->sum);
			to->n_stacks++;
			if (row->stack_id < to->stack_id) {
				to->stack_id = row->stack_id;
				to->site = row->site;
			}
			return 0;
		}
	}
	if (row_append(t, row, name, h) < 0)
		return -ENOMEM;
	t->by_row.slot[j] = (uint32_t)t->n_rows;
	return 0;
}

static void site_rows_free(struct site_rows *t)
{
	for (size_t i = 0; i < t->n_names; i++)
		free(t->names[i].text);
	free(t->names);
	free(t->frame);
	free(t->frame_name);
	free(t->by_text.slot);
	free(t->by_row.slot);
	free(t->rows);
}

/* ---- ranking ---- */

struct ranked {
	const struct cli_site_row *row;
	const char *name; /* NULL: by stack */
	enum cli_by by;
};

/* The largest first; ties by name (or stack id), then device, so the order is the trace's. */
static int ranked_cmp(const void *a, const void *b)
{
	const struct ranked *x = a, *y = b;
	uint64_t u = cli_by_value(&x->row->sum, x->by), v = cli_by_value(&y->row->sum, y->by);
	if (u != v)
		return u > v ? -1 : 1;
	int c = 0;
	if (x->name && y->name)
		c = strcmp(x->name, y->name);
	else if (x->row->stack_id != y->row->stack_id)
		c = x->row->stack_id < y->row->stack_id ? -1 : 1;
	return c ? c : strcmp(x->row->device, y->row->device);
}

static int rank(struct site_rows *t, enum cli_by by, struct cli_site_row **rows, size_t *n)
{
	struct ranked *k = calloc(t->n_rows ? t->n_rows : 1, sizeof(*k));
	struct cli_site_row *out = calloc(t->n_rows ? t->n_rows : 1, sizeof(*out));
	if (!k || !out) {
		free(k);
		free(out);
		return -ENOMEM;
	}
	for (size_t i = 0; i < t->n_rows; i++) {
		uint32_t nm = t->rows[i].name;
		k[i] = (struct ranked){&t->rows[i].row, nm == UINT32_MAX ? NULL : t->names[nm].text,
		                       by};
	}
	qsort(k, t->n_rows, sizeof(*k), ranked_cmp);
	for (size_t i = 0; i < t->n_rows; i++)
		out[i] = *k[i].row;
	free(k);
	*rows = out;
	*n = t->n_rows;
	return 0;
}

struct walk {
	struct cli_sites *s;
	struct site_rows *t;
	const char *device, *first_device;
	bool by_stack;
	enum cli_by by;
};

/*
 * One figure: counted in its row. A row's stack is its lowest id, so the
 * rows do not depend on the order of the walk.
 */
static int walk_one(void *user, const struct cgtrace_stack_stat *st)
{
	struct walk *w = user;
	if (!w->first_device)
		w->first_device = st->device;
	else if (st->device != w->first_device && strcmp(st->device, w->first_device) != 0)
		w->s->several_devices = true;
	if ((w->device && strcmp(w->device, st->device) != 0) || !cli_by_value(st, w->by))
		return 0;
	const struct cgtrace_frame *site = cli_alloc_site(w->s, st->stack_id, st->preexisting);
	struct cli_site_row row = {st->device, st->stack_id, site, *st, 1};
	if (w->by_stack)
		return row_append(w->t, &row, UINT32_MAX, 0);
	long name = name_of(w->t, site);
	return name < 0 ? (int)name : add_by_site(w->t, &row, (uint32_t)name);
}

int cli_site_rows(struct cli_sites *s, const char *device, bool by_stack, enum cli_by by,
                  struct cli_site_row **rows, size_t *n)
{
	struct site_rows t = {0};
	struct walk w = {s, &t, device, NULL, by_stack, by};
	*rows = NULL;
	*n = 0;
	s->several_devices = false;
	int r = cgtrace_stack_stats_each(s->doc, walk_one, &w);
	if (r == 0)
		r = rank(&t, by, rows, n);
	site_rows_free(&t);
	return r;
}

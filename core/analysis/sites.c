/* SPDX-License-Identifier: MIT */
/*
 * Per-stack figures (cgtrace_stack_stats). A streamed document counted
 * allocations, bytes and temporaries per (stack, device) as it applied
 * them (doc_stream.c); what was live at each device's peak and at the end
 * is read off its entries here, each carrying its figure's index. A full
 * document replays its records in analysis order the same way: once for
 * each device's peak position, once more to collect the live set there.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "doc.h"
#include "doc_stream.h"
#include "doc_view.h"
#include "export.h"
#include "memory_replay.h"
#include "sat.h"

static const char *dev_str(const struct cgtrace_doc *d, uint16_t dev)
{
	return cg_doc_str(d, cg_doc_device_str(d, dev));
}

static int stat_cmp(const void *a, const void *b)
{
	const struct cgtrace_stack_stat *x = a, *y = b;
	int c = strcmp(x->device, y->device);
	if (c)
		return c;
	return x->stack_id < y->stack_id ? -1 : x->stack_id > y->stack_id;
}

/* The figures as stats, indexed as figs, sorted once filled. */
static int stats_from(const struct cgtrace_doc *d, const struct cg_stack_figs *f,
                      struct cgtrace_stack_stat **out, size_t *len)
{
	size_t n = f->figs.len;
	*len = n;
	struct cgtrace_stack_stat *st = calloc(n ? n : 1, sizeof(*st));
	if (!st)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		const struct cg_stack_fig *g = CG_VEC_AT(&f->figs, struct cg_stack_fig, i);
		st[i] = (struct cgtrace_stack_stat){
		    .stack_id = g->id,
		    .device = dev_str(d, g->dev),
		    .count = g->count,
		    .total_bytes = g->total,
		    .temporary_count = g->temporary,
		};
	}
	*out = st;
	return 0;
}

static void add_live(struct cgtrace_stack_stat *s, uint64_t bytes, bool at_peak, bool live)
{
	if (at_peak) {
		s->peak_count++;
		s->peak_bytes = cg_sat_add(s->peak_bytes, bytes);
	}
	if (live) {
		s->leaked_count++;
		s->leaked_bytes = cg_sat_add(s->leaked_bytes, bytes);
	}
}

static int stream_stats(const struct cgtrace_doc *d, struct cgtrace_stack_stat **out, size_t *len)
{
	const struct cg_stream *s = d->stream;
	int r = stats_from(d, &s->figs, out, len);
	for (uint32_t i = 0; r == 0 && i < s->n_ent; i++) {
		const struct cg_stream_entry *e = &s->ent[i];
		if (e->state != CG_ENT_FREE)
			add_live(&(*out)[e->fig], e->bytes, cg_stream_entry_at_dev_peak(e),
			         cg_stream_entry_live(e));
	}
	return r;
}

/* ---- a full document: two replays ---- */

struct full {
	const struct cgtrace_doc *d;
	struct cg_stack_figs figs;
	uint32_t *fig_of; /* memory record -> its alloc's figure */
	size_t *peak_pos; /* per device: the position after which it peaked */
};

/* First replay: figures, counts, temporaries, and where each device peaked. */
static int full_first(struct full *f, struct cg_replay *r)
{
	const struct cgtrace_doc *d = f->d;
	size_t last_alloc = SIZE_MAX;
	uint64_t *peak = calloc(r->n_dev ? r->n_dev : 1, sizeof(*peak));
	if (!peak)
		return -ENOMEM;
	int ret = 0;
	while (ret == 0 && r->pos < d->memory.len) {
		size_t idx = cg_replay_index(r, r->pos);
		const struct cg_mem *m = CG_VEC_AT(&d->memory, struct cg_mem, idx);
		const struct cg_mem_class *c = cg_doc_class(d, m->cls);
		uint32_t prev = r->live_of[m->tensor_id];
		size_t pos = r->pos;
		uint16_t dev = cg_replay_step(r);
		if (c->action == CGTRACE_ALLOC) {
			struct cgtrace_memory v;
			cg_doc_mem_view(d, idx, &v);
			ret = cg_stack_fig_at(&f->figs, v.stack_id, dev, &f->fig_of[idx]);
			if (ret < 0)
				break;
			struct cg_stack_fig *g =
			    CG_VEC_AT(&f->figs.figs, struct cg_stack_fig, f->fig_of[idx]);
			g->count++;
			g->total = cg_sat_add(g->total, m->bytes);
			last_alloc = idx;
		} else {
			/* Freed right after it was made, nothing in between: as heaptrack counts. */
			if (prev && prev - 1 == last_alloc)
				CG_VEC_AT(&f->figs.figs, struct cg_stack_fig, f->fig_of[prev - 1])
				    ->temporary++;
			if (prev)
				f->fig_of[idx] = f->fig_of[prev - 1];
			last_alloc = SIZE_MAX;
		}
		if (r->dev[dev].live > peak[dev]) {
			peak[dev] = r->dev[dev].live;
			f->peak_pos[dev] = pos;
		}
	}
	free(peak);
	return ret;
}

/* The allocations live after the replay's last step on device dev (any when dev < 0). */
static void collect(struct full *f, const struct cg_replay *r, long dev,
                    struct cgtrace_stack_stat *st)
{
	const struct cgtrace_doc *d = f->d;
	for (uint32_t t = 0; t < d->pool.count; t++) {
		if (!r->live_of[t])
			continue;
		size_t idx = r->live_of[t] - 1;
		const struct cg_mem *m = CG_VEC_AT(&d->memory, struct cg_mem, idx);
		if (dev >= 0 && cg_doc_class(d, m->cls)->device != dev)
			continue;
		add_live(&st[f->fig_of[idx]], m->bytes, dev >= 0, dev < 0);
	}
}

static int full_stats(const struct cgtrace_doc *d, struct cgtrace_stack_stat **out, size_t *len)
{
	struct full f = {.d = d};
	struct cg_replay r;
	int ret = cg_replay_init(&r, d);
	if (ret < 0)
		return ret;
	f.fig_of = calloc(d->memory.len ? d->memory.len : 1, sizeof(*f.fig_of));
	f.peak_pos = malloc((r.n_dev ? r.n_dev : 1) * sizeof(*f.peak_pos));
	if (!f.fig_of || !f.peak_pos)
		ret = -ENOMEM;
	for (size_t i = 0; ret == 0 && i < r.n_dev; i++)
		f.peak_pos[i] = SIZE_MAX;
	if (ret == 0)
		ret = full_first(&f, &r);
	if (ret == 0)
		ret = stats_from(d, &f.figs, out, len);
	if (ret == 0) {
		collect(&f, &r, -1, *out);
		cg_replay_reset(&r);
		while (r.pos < d->memory.len) {
			size_t pos = r.pos;
			uint16_t dev = cg_replay_step(&r);
			if (f.peak_pos[dev] == pos)
				collect(&f, &r, dev, *out);
		}
	}
	cg_replay_fini(&r);
	cg_stack_figs_free(&f.figs);
	free(f.fig_of);
	free(f.peak_pos);
	return ret;
}

CG_EXPORT int cgtrace_stack_stats(const struct cgtrace_doc *d, struct cgtrace_stack_stat **out,
                                  size_t *n)
{
	*out = NULL;
	*n = 0;
	struct cgtrace_stack_stat *st = NULL;
	size_t len = 0;
	int r = cg_doc_streamed(d) ? stream_stats(d, &st, &len) : full_stats(d, &st, &len);
	if (r < 0) {
		free(st);
		return r;
	}
	if (!len) {
		free(st);
		return 0;
	}
	qsort(st, len, sizeof(*st), stat_cmp);
	*out = st;
	*n = len;
	return 0;
}

CG_EXPORT void cgtrace_stack_stats_free(struct cgtrace_stack_stat *stats)
{
	free(stats);
}

/* SPDX-License-Identifier: MIT */
/*
 * Per-stack figures (cgtrace_stack_stats). The memory analysis counted
 * allocations, bytes and temporaries per (stack, device) as it applied
 * them (memory_stream.c): a streamed document's while it was read, a full
 * document's as its records are replayed. What was live at each device's
 * peak and at the end is read off its entries, each carrying its figure's
 * index.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "doc.h"
#include "export.h"
#include "memory_replay.h"
#include "memory_stream.h"
#include "stream_sink.h"
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

static int stats_of(const struct cg_stream *s, struct cgtrace_stack_stat **out, size_t *len)
{
	int r = stats_from(s->doc, &s->figs, out, len);
	for (uint32_t i = 0; r == 0 && i < s->n_ent; i++) {
		const struct cg_stream_entry *e = &s->ent[i];
		if (e->state != CG_ENT_FREE)
			add_live(&(*out)[e->fig], e->bytes, cg_stream_entry_at_dev_peak(e),
			         cg_stream_entry_live(e));
	}
	return r;
}

CG_EXPORT int cgtrace_stack_stats(const struct cgtrace_doc *d, struct cgtrace_stack_stat **out,
                                  size_t *n)
{
	*out = NULL;
	*n = 0;
	struct cgtrace_stack_stat *st = NULL;
	size_t len = 0;
	struct cg_stream *own = NULL;
	if (d->stacks_light)
		return -ENODATA;
	const struct cg_stream *s = cg_stream_of(d);
	int r = s ? 0 : cg_replay_run(d, NULL, &own);
	if (r == 0)
		r = stats_of(s ? s : own, &st, &len);
	cg_stream_free(own);
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

/* SPDX-License-Identifier: MIT */
/*
 * Per-stack figures (cgtrace_stack_stats, one at a time by
 * cgtrace_stack_stats_each). The memory analysis counted
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
	if (x->stack_id != y->stack_id)
		return x->stack_id < y->stack_id ? -1 : 1;
	return (int)x->preexisting - (int)y->preexisting;
}

/*
 * What was live at each device's peak and at the end, grouped by figure:
 * a counting sort of the entries that were either, 9 bytes each and 4 a
 * figure, instead of a whole stat per figure.
 */
struct live_by_fig {
	uint32_t *start; /* by figure: index of its first in bytes; [n_figs]: the end */
	uint64_t *bytes;
	uint8_t *how; /* beside bytes: LIVE_AT_PEAK, LIVE_AT_END */
};

enum { LIVE_AT_PEAK = 1, LIVE_AT_END = 2 };

static uint8_t live_how(const struct cg_stream_entry *e)
{
	if (e->state == CG_ENT_FREE)
		return 0;
	return (uint8_t)((cg_stream_entry_at_dev_peak(e) ? LIVE_AT_PEAK : 0) |
			 (cg_stream_entry_live(e) ? LIVE_AT_END : 0));
}

static int live_by_fig(const struct cg_stream *s, struct live_by_fig *out)
{
	size_t n_figs = s->figs.figs.len;
	uint32_t *start = calloc(n_figs + 1, sizeof(*start));
	if (!start)
		return -ENOMEM;
	uint32_t n = 0;
	for (uint32_t i = 0; i < s->n_ent; i++)
		if (live_how(&s->ent[i])) {
			start[s->ent[i].fig]++;
			n++;
		}
	uint64_t *bytes = malloc((n ? n : 1) * sizeof(*bytes));
	uint8_t *how = malloc(n ? n : 1);
	if (!bytes || !how) {
		free(start);
		free(bytes);
		free(how);
		return -ENOMEM;
	}
	/* Each figure's count becomes its end, then moves back to its start as it fills. */
	uint32_t sum = 0;
	for (size_t k = 0; k <= n_figs; k++) {
		sum += start[k];
		start[k] = sum;
	}
	for (uint32_t i = s->n_ent; i-- > 0;) {
		const struct cg_stream_entry *e = &s->ent[i];
		uint8_t h = live_how(e);
		if (h) {
			uint32_t k = --start[e->fig];
			bytes[k] = e->bytes;
			how[k] = h;
		}
	}
	*out = (struct live_by_fig){start, bytes, how};
	return 0;
}

static void add_live(struct cgtrace_stack_stat *s, uint64_t bytes, uint8_t how)
{
	if (how & LIVE_AT_PEAK) {
		s->peak_count++;
		s->peak_bytes = cg_sat_add(s->peak_bytes, bytes);
	}
	if (how & LIVE_AT_END) {
		s->leaked_count++;
		s->leaked_bytes = cg_sat_add(s->leaked_bytes, bytes);
	}
}

static int walk(const struct cg_stream *s, cgtrace_stack_stat_fn fn, void *user)
{
	struct live_by_fig lf = {0};
	int r = live_by_fig(s, &lf);
	for (size_t i = 0; r == 0 && i < s->figs.figs.len; i++) {
		const struct cg_stack_fig *g = CG_VEC_AT(&s->figs.figs, struct cg_stack_fig, i);
		struct cgtrace_stack_stat st = {
		    .stack_id = g->id,
		    .device = dev_str(s->doc, cg_stack_fig_dev(g)),
		    .count = g->count,
		    .total_bytes = g->total,
		    .temporary_count = cg_stack_fig_temporary(g),
		    .preexisting = g->temp_dev & CG_FIG_PRE,
		};
		for (uint32_t k = lf.start[i]; k < lf.start[i + 1]; k++)
			add_live(&st, lf.bytes[k], lf.how[k]);
		r = fn(user, &st);
	}
	free(lf.start);
	free(lf.bytes);
	free(lf.how);
	return r;
}

CG_EXPORT int cgtrace_stack_stats_each(const struct cgtrace_doc *d, cgtrace_stack_stat_fn fn,
				       void *user)
{
	if (d->stacks_light)
		return -ENODATA;
	const struct cg_stream *s;
	struct cg_stream *own;
	int r = cg_replay_or_stream(d, &s, &own);
	if (r == 0)
		r = walk(s, fn, user);
	cg_stream_free(own);
	return r;
}

struct stat_array {
	struct cgtrace_stack_stat *v;
	size_t n;
};

static int push_stat(void *user, const struct cgtrace_stack_stat *s)
{
	struct stat_array *a = user;
	a->v[a->n++] = *s;
	return 0;
}

CG_EXPORT int cgtrace_stack_stats(const struct cgtrace_doc *d, struct cgtrace_stack_stat **out,
                                  size_t *n)
{
	*out = NULL;
	*n = 0;
	if (d->stacks_light)
		return -ENODATA;
	const struct cg_stream *s;
	struct cg_stream *own;
	int r = cg_replay_or_stream(d, &s, &own);
	size_t len = r == 0 ? s->figs.figs.len : 0;
	struct stat_array a = {len ? calloc(len, sizeof(*a.v)) : NULL, 0};
	if (r == 0 && len && !a.v)
		r = -ENOMEM;
	if (r == 0 && len)
		r = walk(s, push_stat, &a);
	cg_stream_free(own);
	if (r < 0) {
		free(a.v);
		return r;
	}
	if (a.n)
		qsort(a.v, a.n, sizeof(*a.v), stat_cmp);
	*out = a.v;
	*n = a.n;
	return 0;
}

CG_EXPORT void cgtrace_stack_stats_free(struct cgtrace_stack_stat *stats)
{
	free(stats);
}

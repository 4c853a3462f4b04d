/* SPDX-License-Identifier: MIT */
/* Allocations that outlive their update (steps_growth.h). */
#include "steps_growth.h"

#include <errno.h>
#include <stdlib.h>

#include "doc.h"

struct cg_growth_cand {
	uint64_t alloc_ts, free_ts, bytes, stack;
	uint16_t dev;
};

int cg_growth_record(struct cg_growth *g, const struct cg_stream_seen *x)
{
	/* Only a free of an allocation made before the latest update began may count. */
	if (x->action == CGTRACE_ALLOC || x->entry == UINT32_MAX || !g->any ||
	    x->alloc_ts >= g->since)
		return 0;
	struct cg_growth_cand *c = CG_VEC_PUSH(&g->cand, struct cg_growth_cand);
	if (!c)
		return -ENOMEM;
	*c = (struct cg_growth_cand){x->alloc_ts, x->ts, x->bytes, x->stack, x->dev};
	return 0;
}

/* A piece of growth: its update's ordinal, then stack and device. */
struct piece {
	uint64_t u, stack, bytes;
	uint16_t dev;
};

static int piece_cmp(const void *a, const void *b)
{
	const struct piece *x = a, *y = b;
	if (x->u != y->u)
		return x->u < y->u ? -1 : 1;
	if (x->stack != y->stack)
		return x->stack < y->stack ? -1 : 1;
	return (x->dev > y->dev) - (x->dev < y->dev);
}

/*
 * The ordinal (from 1) of the update an allocation at ts was made in: the
 * last one begun by then, so that what a loop does after its optimizer
 * step and before the next update (its logging, a list of losses) is its
 * update's; 0 before the first.
 */
static size_t update_of(const struct cg_growth_rows *r, uint64_t ts)
{
	size_t lo = 0, hi = r->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (r->rows[r->update_rows[mid]].start_ns <= ts)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Made after warm-up, in an update before the last: a piece of growth. */
static int add(struct cg_vec *pieces, const struct cg_growth_rows *r, uint64_t alloc_ts,
	       uint64_t bytes, uint64_t stack, uint16_t dev)
{
	size_t u = update_of(r, alloc_ts);
	if (!u || u <= r->warmup || u >= r->n)
		return 0;
	struct piece *p = CG_VEC_PUSH(pieces, struct piece);
	if (!p)
		return -ENOMEM;
	*p = (struct piece){u, stack, bytes, dev};
	return 0;
}

static int sum(const struct cg_vec *pieces, const struct cg_growth_rows *r, struct cgtrace_steps *out)
{
	struct piece *p = pieces->p;
	if (pieces->len)
		qsort(p, pieces->len, sizeof(*p), piece_cmp);
	out->growth = calloc(pieces->len ? pieces->len : 1, sizeof(*out->growth));
	if (!out->growth)
		return -ENOMEM;
	for (size_t i = 0; i < pieces->len; i++) {
		struct cgtrace_step_growth *g = out->n_growth ? &out->growth[out->n_growth - 1] : NULL;
		uint64_t number = r->rows[r->update_rows[p[i].u - 1]].update;
		if (g && i && !piece_cmp(&p[i], &p[i - 1])) {
			g->bytes += p[i].bytes;
			g->count++;
			continue;
		}
		out->growth[out->n_growth++] = (struct cgtrace_step_growth){
			.update = number,
			.stack_id = p[i].stack,
			.device = r->dev_names[p[i].dev],
			.bytes = p[i].bytes,
			.count = 1,
		};
	}
	return 0;
}

int cg_growth_finish(struct cg_growth *g, const struct cg_stream *s, const struct cg_growth_rows *r,
		     struct cgtrace_steps *out)
{
	out->has_growth = true;
	struct cg_vec pieces = {0};
	int ret = 0;
	const struct cgtrace_step_row *last = r->n ? &r->rows[r->update_rows[r->n - 1]] : NULL;
	/* An update the trace ended in was outlived by nothing freed before that end. */
	const struct cg_growth_cand *c = g->cand.p;
	for (size_t i = 0; last && !last->open && ret == 0 && i < g->cand.len; i++)
		if (c[i].free_ts >= last->end_ns)
			ret = add(&pieces, r, c[i].alloc_ts, c[i].bytes, c[i].stack, c[i].dev);
	for (uint32_t i = 0; last && ret == 0 && i < s->n_ent; i++) {
		const struct cg_stream_entry *e = &s->ent[i];
		if (!cg_stream_entry_live(e))
			continue;
		const struct cg_stack_fig *f = CG_VEC_AT(&s->figs.figs, struct cg_stack_fig, e->fig);
		ret = add(&pieces, r, e->timestamp_ns, e->bytes, f->id,
			  cg_doc_class(s->doc, e->cls)->device);
	}
	if (ret == 0)
		ret = sum(&pieces, r, out);
	cg_vec_free(&pieces, sizeof(struct piece));
	cg_growth_fini(g);
	return ret;
}

void cg_growth_fini(struct cg_growth *g)
{
	cg_vec_free(&g->cand, sizeof(struct cg_growth_cand));
}

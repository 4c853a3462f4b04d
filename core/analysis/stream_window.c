/* SPDX-License-Identifier: MIT */
/*
 * The reorder window (stream_window.h): records wait in sorted runs before
 * the memory analysis applies them. A record extends a run whose last
 * record it follows, or starts one, and once the window is full the least
 * run head is applied. A record that sorts before one already applied
 * cannot be placed: the trace is read again in full (out_of_order). A
 * record whose timestamp is the latest seen always waits, so that equal
 * timestamps sort whatever the window.
 */
#include "stream_window.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hash.h"
#include "memory_stream.h"
#include "num_scan.h"

uint32_t cg_stream_window = CG_STREAM_WINDOW;

/* A record's tensor_id bytes: its string, or its key formatted as the canonical hex it was. */
static struct cg_sv rec_id(const struct cg_stream_rec *g, char *buf)
{
	return g->str ? (struct cg_sv){g->str, g->str_len} : cg_stream_key_hex(g->key, buf);
}

/* Analysis order but for file order: timestamp, alloc before free, tensor_id bytewise. */
static int rec_cmp(const struct cg_stream_rec *x, const struct cg_stream_rec *y)
{
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	if (x->action != y->action)
		return x->action < y->action ? -1 : 1;
	if (!x->str && !y->str && x->key == y->key)
		return 0;
	char bx[20], by[20];
	struct cg_sv a = rec_id(x, bx), b = rec_id(y, by);
	int c = memcmp(a.p, b.p, a.n < b.n ? a.n : b.n);
	if (c)
		return c;
	return a.n < b.n ? -1 : a.n > b.n;
}

/* The full analysis order: ties keep file order. */
static bool rec_before(const struct cg_stream_rec *x, const struct cg_stream_rec *y)
{
	int c = rec_cmp(x, y);
	return c ? c < 0 : x->index < y->index;
}

static struct cg_stream_rec *run_at(const struct cg_stream_run *run, uint32_t k)
{
	return &run->r[(run->head + k) & (run->cap - 1)];
}

static int run_push(struct cg_stream_run *run, const struct cg_stream_rec *g)
{
	if (run->len == run->cap) {
		uint32_t cap = run->cap ? run->cap * 2 : 256;
		struct cg_stream_rec *r = malloc(cap * sizeof(*r));
		if (!r)
			return -ENOMEM;
		for (uint32_t k = 0; k < run->len; k++)
			r[k] = *run_at(run, k);
		free(run->r);
		run->r = r;
		run->cap = cap;
		run->head = 0;
	}
	*run_at(run, run->len++) = *g;
	return 0;
}

/* The run whose last record g follows most closely; UINT32_MAX when none. */
static uint32_t run_for(const struct cg_stream *s, const struct cg_stream_rec *g)
{
	const struct cg_stream_run *lr = &s->runs[s->last_run];
	/* The common case: the latest run goes on, later in time. */
	if (s->last_run < s->n_runs && lr->len && g->ts > run_at(lr, lr->len - 1)->ts)
		return s->last_run;
	uint32_t best = UINT32_MAX;
	for (uint32_t k = 0; k < s->n_runs; k++) {
		const struct cg_stream_run *run = &s->runs[k];
		const struct cg_stream_rec *tail = run->len ? run_at(run, run->len - 1) : NULL;
		if (!tail || !rec_before(g, tail)) {
			const struct cg_stream_run *b = best == UINT32_MAX ? NULL : &s->runs[best];
			if (!b || !b->len || (tail && rec_before(run_at(b, b->len - 1), tail)))
				best = k;
		}
	}
	return best;
}

/* The run whose head is the least record waiting (there is one). */
static uint32_t least_run(const struct cg_stream *s)
{
	uint32_t best = 0;
	for (uint32_t k = 1; k < s->n_runs; k++)
		if (rec_before(run_at(&s->runs[k], 0), run_at(&s->runs[best], 0)))
			best = k;
	return best;
}

/* Applies the head of run best; the run goes once empty. */
static int apply_head(struct cg_stream *s, uint32_t best)
{
	struct cg_stream_run *run = &s->runs[best];
	struct cg_stream_rec g = *run_at(run, 0);
	run->head = (run->head + 1) & (run->cap - 1);
	run->len--;
	s->pending--;
	if (!run->len) {
		if (run->cap > s->spare.cap) {
			free(s->spare.r);
			s->spare = (struct cg_stream_run){.r = run->r, .cap = run->cap};
		} else {
			free(run->r);
		}
		s->runs[best] = s->runs[--s->n_runs];
		s->runs[s->n_runs] = (struct cg_stream_run){0};
		if (s->last_run == s->n_runs)
			s->last_run = best;
	}
	/* What later records must not sort before: its order key, its id kept aside. */
	s->last = g;
	s->applied_any = true;
	if (g.str) {
		if (cg_vec_grow(&s->last_id, 1, g.str_len ? g.str_len : 1) < 0) {
			free(g.str);
			return -ENOMEM;
		}
		memcpy(s->last_id.p, g.str, g.str_len);
		s->last.str = s->last_id.p;
	}
	int r = cg_stream_apply(s, &g);
	free(g.str);
	return r;
}

/*
 * In order, the one record waiting (of the latest timestamp) goes once a
 * later one comes, which takes its place: what window_add would do, without
 * the runs' bookkeeping, for nearly every record of an in-order trace.
 */
static bool window_pass(const struct cg_stream *s, uint64_t ts)
{
	return s->window == 0 && s->n_runs == 1 && s->pending == 1 && ts > s->max_ts &&
	       !run_at(&s->runs[0], 0)->str;
}

/*
 * The record held is applied where it waits, and the one of time ts is to
 * take its place (the caller writes it to *at): no copy of either on the
 * way. Only what the order check reads of the last record applied is kept
 * (window_pass: it has no string).
 */
static int window_swap(struct cg_stream *s, uint64_t ts, struct cg_stream_rec **at)
{
	struct cg_stream_rec *slot = run_at(&s->runs[0], 0);
	*at = slot;
	s->last.ts = slot->ts;
	s->last.key = slot->key;
	s->last.action = slot->action;
	s->last.str = NULL;
	s->last.str_len = 0;
	s->max_ts = ts;
	s->last_run = 0;
	s->applied_any = true;
	return cg_stream_apply(s, slot);
}

/* g waits in the window (it takes g's string), and what may go is applied. */
static int window_add(struct cg_stream *s, struct cg_stream_rec *g)
{
	if (s->applied_any && rec_cmp(g, &s->last) < 0) {
		s->out_of_order = true;
		return -ECANCELED;
	}
	uint32_t k = run_for(s, g);
	if (k == UINT32_MAX) {
		if (s->n_runs == CG_STREAM_RUNS) {
			s->out_of_order = true;
			return -ECANCELED;
		}
		k = s->n_runs++;
		s->runs[k] = s->spare;
		s->spare = (struct cg_stream_run){0};
	}
	int r = run_push(&s->runs[k], g);
	if (r < 0)
		return r;
	g->str = NULL;
	s->last_run = k;
	s->pending++;
	if (g->ts > s->max_ts)
		s->max_ts = g->ts;
	/* A record of the latest timestamp waits: one of that timestamp may sort before it. */
	while (r == 0 && s->pending > s->window) {
		uint32_t least = least_run(s);
		if (run_at(&s->runs[least], 0)->ts >= s->max_ts)
			break;
		r = apply_head(s, least);
	}
	return r;
}

/* A record handed on, as the window holds it: its id the key, or a string of its own. */
static inline struct cg_stream_rec rec_of(const struct cg_sink_mem *m, uint64_t key, char *str,
					  uint32_t n)
{
	return (struct cg_stream_rec){
		.ts = m->ts,
		.bytes = m->bytes,
		.key = key,
		.index = m->index,
		.stack = m->stack,
		.str = str,
		.str_len = n,
		.cls = m->cls,
		.shape = m->shape,
		.action = m->action,
	};
}

int cg_window_memory(struct cg_stream *s, const struct cg_sink_mem *m)
{
	uint64_t key = m->addr;
	char *str = NULL;
	uint32_t n = 0;
	/* Most ids are heap addresses as the probe writes them: their value is the key, no string kept. */
	bool vmm;
	if (m->id.p && (!cg_scan_hex_id(m->id.p, m->id.n, &vmm, &key) || vmm)) {
		n = m->id.n;
		key = cg_hash_bytes(m->id.p, n);
		str = malloc(n + 1);
		if (!str)
			return -ENOMEM;
		memcpy(str, m->id.p, n);
		str[n] = '\0';
	}
	cg_stream_prefetch(s, key);
	/* In order, nearly every record: the one held applies and this one takes its slot. */
	if (window_pass(s, m->ts)) {
		struct cg_stream_rec *slot;
		int r = window_swap(s, m->ts, &slot);
		*slot = rec_of(m, key, str, n);
		return r;
	}
	struct cg_stream_rec g = rec_of(m, key, str, n);
	int r = window_add(s, &g);
	if (g.str)
		free(g.str);
	return r;
}

void cg_window_init(struct cg_stream *s)
{
	s->window = cg_stream_window;
}

void cg_window_in_order(struct cg_stream *s)
{
	s->window = 0;
}

int cg_window_drain(struct cg_stream *s)
{
	int r = 0;
	while (r == 0 && s->pending)
		r = apply_head(s, least_run(s));
	return r;
}

void cg_window_free(struct cg_stream *s)
{
	for (uint32_t k = 0; k < s->n_runs; k++) {
		struct cg_stream_run *run = &s->runs[k];
		for (uint32_t j = 0; j < run->len; j++)
			free(run_at(run, j)->str);
		free(run->r);
	}
	free(s->spare.r);
	cg_vec_free(&s->last_id, 1);
}

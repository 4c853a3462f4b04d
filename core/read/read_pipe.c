/* SPDX-License-Identifier: MIT */
/*
 * Two-stage reading: a producer thread reads (and decompresses) blocks of
 * whole lines and runs the fast parser over them; the caller's thread
 * applies records to the document in file order, running the reference
 * parser on the lines the fast one declined. Both halves cost about the
 * same, so a 2-core machine reads about twice as fast, and errors are still
 * found and reported in file order.
 */
#include "read_pipe.h"

#include "parse_fast.h"
#include "worker.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N_BATCH 3

enum item_state { ITEM_BLANK, ITEM_FAST, ITEM_SLOW };

struct item {
	const char *line;
	size_t len;
	uint8_t state;
};

struct batch {
	char *buf;
	size_t cap;
	struct item *items;
	struct cg_rec *recs;
	size_t n, cap_items;
	bool unterminated; /* the last item had no newline */
	bool last;         /* nothing follows this batch */
	int err;           /* read error, with the message in lines->err */
	struct cg_parse parse;
};

struct pipe {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct batch b[N_BATCH];
	unsigned filled, head, tail;
	bool stop;
	struct cg_lines *lines;
};

static int batch_reserve(struct batch *b, size_t bytes, size_t items)
{
	if (b->cap < bytes) {
		char *p = realloc(b->buf, bytes);
		if (!p)
			return -ENOMEM;
		b->buf = p;
		b->cap = bytes;
	}
	if (b->cap_items < items) {
		size_t n = items + items / 2 + 64;
		struct item *it = realloc(b->items, n * sizeof(*it));
		if (it)
			b->items = it;
		struct cg_rec *r = it ? realloc(b->recs, n * sizeof(*r)) : NULL;
		if (!r)
			return -ENOMEM;
		b->recs = r;
		b->cap_items = n;
	}
	return 0;
}

/* Copies a block of lines into the batch and fast-parses each. */
static int fill_batch(struct batch *b, const char *data, size_t len, bool unterminated)
{
	int r = batch_reserve(b, len, 0);
	if (r < 0)
		return r;
	memcpy(b->buf, data, len);
	b->n = 0;
	b->unterminated = unterminated;
	cg_arena_reset(&b->parse.arena);
	for (size_t at = 0; at < len;) {
		const char *s = b->buf + at;
		const char *nl = memchr(s, '\n', len - at);
		size_t n = nl ? (size_t)(nl - s) : len - at;
		if (b->n == b->cap_items && batch_reserve(b, len, b->n + 1) < 0)
			return -ENOMEM;
		struct item *it = &b->items[b->n];
		it->line = s;
		it->len = n;
		if (cg_line_blank(s, n))
			it->state = ITEM_BLANK;
		else
			it->state = cg_parse_fast(&b->parse, s, n, &b->recs[b->n]) == 0 ? ITEM_FAST
											 : ITEM_SLOW;
		b->n++;
		at += n + 1;
	}
	return 0;
}

/* Reads and parses one batch into the next free slot; false after the last one. */
static bool producer_step(struct pipe *p)
{
	{
		struct batch *b = &p->b[p->tail % N_BATCH];
		const char *data;
		size_t len;
		bool unterminated;
		int r = cg_lines_next_block(p->lines, &data, &len, &unterminated);
		b->n = 0;
		b->err = r < 0 ? r : r > 0 ? fill_batch(b, data, len, unterminated) : 0;
		b->last = r <= 0 || b->err < 0;
		pthread_mutex_lock(&p->mu);
		p->tail++;
		p->filled++;
		pthread_cond_broadcast(&p->cv);
		pthread_mutex_unlock(&p->mu);
		return !b->last;
	}
}

static void *producer(void *arg)
{
	struct pipe *p = arg;
	for (;;) {
		pthread_mutex_lock(&p->mu);
		while (p->filled == N_BATCH && !p->stop)
			pthread_cond_wait(&p->cv, &p->mu);
		bool stop = p->stop;
		pthread_mutex_unlock(&p->mu);
		if (stop || !producer_step(p))
			break;
	}
	return NULL;
}

static int consume(struct cg_read_ctx *ctx, struct batch *b, struct cg_parse *ref)
{
	for (size_t i = 0; i < b->n; i++) {
		const struct item *it = &b->items[i];
		ctx->line_no++;
		if (it->state == ITEM_BLANK)
			continue;
		bool last = b->unterminated && i + 1 == b->n;
		int r = cg_read_apply(ctx, ref, it->line, it->len, !last,
				      it->state == ITEM_FAST ? &b->recs[i] : NULL);
		if (r != 0)
			return r;
	}
	return 0;
}

int cg_read_pipe(struct cg_read_ctx *ctx, struct cg_lines *lines)
{
	struct pipe *p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->cv, NULL);
	p->lines = lines;
	for (int i = 0; i < N_BATCH; i++)
		cg_parse_init(&p->b[i].parse);

	struct cg_thread producer_thread;
	cg_thread_start(&producer_thread, producer, p);

	struct cg_parse ref;
	cg_parse_init(&ref);
	int ret = 0;
	while (ret == 0) {
		/* Without a thread (none could be made) the producer's half runs inline. */
		if (!producer_thread.started)
			producer_step(p);
		pthread_mutex_lock(&p->mu);
		while (p->filled == 0)
			pthread_cond_wait(&p->cv, &p->mu);
		pthread_mutex_unlock(&p->mu);
		struct batch *b = &p->b[p->head % N_BATCH];
		ret = consume(ctx, b, &ref);
		if (ret == 0 && b->err < 0)
			ret = cg_read_io_error(ctx, b->err);
		bool last = b->last;
		pthread_mutex_lock(&p->mu);
		p->head++;
		p->filled--;
		if (ret != 0)
			p->stop = true;
		pthread_cond_broadcast(&p->cv);
		pthread_mutex_unlock(&p->mu);
		if (last)
			break;
	}
	cg_thread_join(&producer_thread);
	cg_parse_fini(&ref);
	for (int i = 0; i < N_BATCH; i++) {
		free(p->b[i].buf);
		free(p->b[i].items);
		free(p->b[i].recs);
		cg_parse_fini(&p->b[i].parse);
	}
	pthread_mutex_destroy(&p->mu);
	pthread_cond_destroy(&p->cv);
	free(p);
	return ret > 0 ? 0 : ret;
}

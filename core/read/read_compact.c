/* SPDX-License-Identifier: MIT */
/*
 * A compact trace reads as its JSONL would: TEXT items go through the line
 * parsers (fast, else reference) and packed records straight to the same
 * rules, with "record N" where a JSONL trace names its line.
 *
 * The document reader decodes on a thread of its own, a batch of records
 * ahead of the caller's thread, which applies them in order: decoding and
 * applying cost about the same, so a 2-core machine reads about twice as
 * fast (read_pipe.c does the same for lines). The decoder writes packed
 * records and their ids straight into the batch, which also keeps copies
 * of TEXT lines; the strings of the decoder's tables stay where they are,
 * as they live as long as it does.
 */
#include "read_compact.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_relax.h"
#include "doc.h"
#include "doc_build.h"
#include "doc_stacks.h"
#include "parse_fast.h"
#include "worker.h"

/*
 * A wakeup per batch makes the scheduler put the woken thread on the
 * waker's core, and the two then take turns on one core. So the producer,
 * once all batches are full, sleeps until half are free, and the consumer
 * polls a while (about a batch's decoding) before it sleeps on an empty one.
 */
#define N_BATCH 4
#define BATCH_RECS 4096
#define SPIN 2000
#define BATCH_TEXT (1u << 18) /* a batch ends once its TEXT lines reach this */

/* Parses a TEXT item as the JSONL reader parses a line: fast, else reference. */
static int parse_text(struct cg_read_ctx *ctx, struct cg_parse *ref, const char *line,
		      size_t len, struct cg_rec *scratch, const struct cg_rec **rec)
{
	cg_arena_reset(&ref->arena);
	const struct cg_rec *fast = NULL;
	if (cg_parse_fast(ref, line, len, scratch) == 0)
		fast = scratch;
	int ret = cg_read_parse(ctx, ref, line, len, true, fast, scratch, rec);
	return ret < 0 ? ret : 1;
}

/* The decoder's end: its error, or the warning of a cut file. */
static int at_end(struct cg_read_ctx *ctx, struct cg_cdec *d, int ret)
{
	ctx->records = true;
	ctx->line_no = cg_cdec_records(d);
	if (ret < 0) {
		/* A batch's own copy can fail too, with the decoder still fine. */
		const char *msg = cg_cdec_error(d)[0] ? cg_cdec_error(d) : strerror(-ret);
		snprintf(ctx->err, ctx->errlen, "%s: %s", ctx->name, msg);
		return ret;
	}
	if (cg_cdec_truncated(d))
		cg_read_truncated_after(ctx, cg_cdec_records(d));
	return 0;
}

int cg_read_compact_next(struct cg_read_ctx *ctx, struct cg_cdec *d, struct cg_parse *ref,
			 struct cg_rec *scratch, const struct cg_rec **rec)
{
	struct cg_cdec_out out;
	int ret = cg_cdec_next(d, &out);
	if (ret <= 0)
		return at_end(ctx, d, ret);
	ctx->records = true;
	ctx->line_no = cg_cdec_records(d);
	if (ret == CG_CDEC_REC) {
		*rec = out.rec;
		return 1;
	}
	return parse_text(ctx, ref, out.line, out.len, scratch, rec);
}

/* ---- the document reader's pipeline ---- */

struct entry {
	uint32_t text_off, text_len; /* a TEXT item's line in the batch's text */
	bool text;
	bool packed_memory; /* pk holds what the analysis needs, so it leaves rec alone */
	/*
	 * packed_memory: the record's gist, written by the decoder in place
	 * (a copy made right after it wrote its own stalls the decoder's
	 * thread on store forwarding) and read only by the consumer.
	 */
	struct cg_cdec_mem mem;
};

/* A stack block skipped unread (cg_cdec_skip_stacks), before the batch's record pos. */
struct skipped {
	size_t pos;
	uint64_t first, last;
};

struct batch {
	struct cg_rec *recs;
	struct entry *entries;
	char *ids; /* CG_CDEC_IDS bytes a record */
	char *text;
	size_t text_len, text_cap;
	struct cg_arena frames; /* the frames of the stacks the batch's records define */
	struct cg_vec skipped;  /* struct skipped, in order */
	size_t n;
	uint64_t first; /* the number of the batch's first record */
	bool last;      /* nothing follows: ret is the decoder's end (0) or error */
	int ret;
};

struct pipe {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct batch b[N_BATCH];
	atomic_uint filled; /* changed under mu, polled without it */
	unsigned head, tail;
	unsigned sleepers; /* threads waiting on cv, under mu */
	bool stop;
	struct cg_cdec *d;
};

static int add_text(struct batch *b, const struct cg_cdec_out *out)
{
	if (out->len > UINT32_MAX || b->text_cap - b->text_len < out->len) {
		size_t cap = b->text_len + out->len + BATCH_TEXT;
		char *t = out->len <= UINT32_MAX ? realloc(b->text, cap) : NULL;
		if (!t)
			return -ENOMEM;
		b->text = t;
		b->text_cap = cap;
	}
	memcpy(b->text + b->text_len, out->line, out->len);
	b->entries[b->n] = (struct entry){.text_off = (uint32_t)b->text_len, .text_len = (uint32_t)out->len, .text = true};
	b->text_len += out->len;
	return 0;
}

/* Decodes the next batch into the next free slot; false after the last one. */
static bool producer_step(struct pipe *p)
{
	struct batch *b = &p->b[p->tail % N_BATCH];
	b->n = 0;
	b->text_len = 0;
	cg_arena_reset(&b->frames);
	b->skipped.len = 0;
	cg_cdec_frames_to(p->d, &b->frames);
	b->first = cg_cdec_records(p->d) + 1;
	b->last = false;
	while (b->n < BATCH_RECS && b->text_len < BATCH_TEXT) {
		struct cg_cdec_out out;
		cg_cdec_target(p->d, &b->recs[b->n], b->ids + b->n * CG_CDEC_IDS, &b->entries[b->n].mem);
		int r = cg_cdec_next(p->d, &out);
		if (r == CG_CDEC_STACKS) {
			struct skipped *k = CG_VEC_PUSH(&b->skipped, struct skipped);
			if (k) {
				*k = (struct skipped){b->n, out.stacks_first, out.stacks_last};
				continue;
			}
			r = -ENOMEM;
		}
		if (r == CG_CDEC_TEXT && add_text(b, &out) < 0)
			r = -ENOMEM;
		if (r <= 0) {
			b->last = true;
			b->ret = r;
			break;
		}
		struct entry *e = &b->entries[b->n];
		e->text = r == CG_CDEC_TEXT;
		e->packed_memory = out.mem != NULL;
		b->n++;
	}
	pthread_mutex_lock(&p->mu);
	p->tail++;
	atomic_fetch_add(&p->filled, 1);
	if (p->sleepers)
		pthread_cond_broadcast(&p->cv);
	pthread_mutex_unlock(&p->mu);
	return !b->last;
}

/* The consumer polls a while for the next batch, which is usually about done, before it sleeps. */
static void spin(struct pipe *p)
{
	for (int k = 0; k < SPIN && atomic_load_explicit(&p->filled, memory_order_acquire) == 0; k++)
		cg_cpu_relax();
}

static void *producer(void *arg)
{
	struct pipe *p = arg;
	for (;;) {
		pthread_mutex_lock(&p->mu);
		/* Once full, wait for half the batches: a wakeup a batch keeps both on one core. */
		if (p->filled == N_BATCH) {
			while (p->filled > N_BATCH / 2 && !p->stop) {
				p->sleepers++;
				pthread_cond_wait(&p->cv, &p->mu);
				p->sleepers--;
			}
		}
		bool stop = p->stop;
		pthread_mutex_unlock(&p->mu);
		if (stop || !producer_step(p))
			break;
	}
	return NULL;
}

/* The stacks of the blocks skipped before record i (b->n: after the last) count as defined. */
static int skipped_to(struct cg_read_ctx *ctx, const struct batch *b, size_t *k, size_t i)
{
	const struct skipped *v = b->skipped.p;
	for (; *k < b->skipped.len && v[*k].pos <= i; ++*k)
		if (cg_doc_stacks_skipped(ctx->doc, v[*k].first, v[*k].last) < 0)
			return cg_read_fail(ctx, -ENOMEM, "out of memory");
	return 0;
}

static int consume(struct cg_read_ctx *ctx, struct batch *b, struct cg_parse *ref,
		   struct cg_rec *scratch)
{
	ctx->records = true;
	size_t k = 0;
	for (size_t i = 0; i < b->n; i++) {
		if (k < b->skipped.len && skipped_to(ctx, b, &k, i) < 0)
			return -ENOMEM;
		const struct entry *e = &b->entries[i];
		const struct cg_rec *rec = &b->recs[i];
		ctx->line_no = b->first + i;
		if (e->text) {
			const char *line = b->text + e->text_off;
			int r = parse_text(ctx, ref, line, e->text_len, scratch, &rec);
			if (r < 0)
				return r;
		}
		int r;
		if (e->packed_memory) {
			const struct cg_cdec_mem *m = &e->mem;
			struct cg_doc_packed pk = {
			    .ts = m->ts,
			    .bytes = m->bytes,
			    .addr = m->addr,
			    .stack = m->stack,
			    .def_frames = m->def_frames,
			    .def_tree = m->def_tree,
			    .def_parent = m->def_parent,
			    .dec_cls = m->cls,
			    .action = m->free ? CGTRACE_FREE : CGTRACE_ALLOC,
			    .vmm = m->vmm,
			    .pre = m->pre,
			};
			r = cg_read_apply_packed(ctx, rec, &pk, m->full);
		} else {
			r = cg_read_apply_rec(ctx, rec);
		}
		if (r < 0)
			return r;
	}
	return skipped_to(ctx, b, &k, b->n);
}

static void pipe_free(struct pipe *p)
{
	for (int i = 0; i < N_BATCH; i++) {
		free(p->b[i].recs);
		free(p->b[i].entries);
		free(p->b[i].ids);
		free(p->b[i].text);
		cg_arena_fini(&p->b[i].frames);
		cg_vec_free(&p->b[i].skipped, sizeof(struct skipped));
	}
	pthread_mutex_destroy(&p->mu);
	pthread_cond_destroy(&p->cv);
	free(p);
}

static struct pipe *pipe_new(struct cg_cdec *d)
{
	struct pipe *p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->cv, NULL);
	p->d = d;
	bool ok = true;
	for (int i = 0; i < N_BATCH; i++) {
		struct batch *b = &p->b[i];
		b->recs = calloc(BATCH_RECS, sizeof(*b->recs)); /* zeroed: see cg_cdec_target */
		b->entries = malloc(BATCH_RECS * sizeof(*b->entries));
		b->ids = malloc(BATCH_RECS * CG_CDEC_IDS);
		ok = ok && b->recs && b->entries && b->ids;
	}
	if (!ok) {
		pipe_free(p);
		return NULL;
	}
	return p;
}

int cg_read_compact(struct cg_read_ctx *ctx, struct cg_cdec *d)
{
	struct pipe *p = pipe_new(d);
	if (!p) {
		snprintf(ctx->err, ctx->errlen, "%s: out of memory", ctx->name);
		return -ENOMEM;
	}
	/* A streamed document reads only the gist of most packed records (consume). */
	/* Extensions are counted off whole records. */
	cg_cdec_lean(d, cg_doc_streamed(ctx->doc) && !ctx->doc->track_ext);
	cg_cdec_no_frames(d, ctx->doc->stacks_light);
	cg_cdec_skip_stacks(d, ctx->doc->stacks_skip);
	struct cg_thread producer_thread;
	cg_thread_start(&producer_thread, producer, p);

	struct cg_parse ref;
	struct cg_rec scratch;
	cg_parse_init(&ref);
	int ret = 0;
	for (;;) {
		/* Without a thread (none could be made) the producer's half runs inline. */
		if (!producer_thread.started)
			producer_step(p);
		else
			spin(p);
		pthread_mutex_lock(&p->mu);
		while (p->filled == 0) {
			p->sleepers++;
			pthread_cond_wait(&p->cv, &p->mu);
			p->sleepers--;
		}
		pthread_mutex_unlock(&p->mu);
		struct batch *b = &p->b[p->head % N_BATCH];
		/* The header was read before the first batch was handed over. */
		if (p->head == 0 && cg_cdec_in_order(d))
			cg_doc_in_order(ctx->doc);
		ret = consume(ctx, b, &ref, &scratch);
		bool last = b->last;
		/* The producer is done with the decoder once it handed over the last batch. */
		if (ret == 0 && last)
			ret = at_end(ctx, d, b->ret);
		pthread_mutex_lock(&p->mu);
		p->head++;
		atomic_fetch_sub(&p->filled, 1);
		if (ret != 0)
			p->stop = true;
		if (p->sleepers && (p->filled <= N_BATCH / 2 || p->stop))
			pthread_cond_broadcast(&p->cv);
		pthread_mutex_unlock(&p->mu);
		if (last || ret != 0)
			break;
	}
	cg_thread_join(&producer_thread);
	cg_parse_fini(&ref);
	cg_cdec_frames_to(d, NULL); /* the batches' arenas go with the pipe */
	pipe_free(p);
	return ret;
}

/* SPDX-License-Identifier: MIT */
#include "encoding.h"

#include "compact_out.h"
#include "format.h"

static struct {
	const struct cg_encoder_ops *trace, *copy;
	struct cg_out *copy_out;
} tee;

static uint64_t t_alloc(const struct cg_event *e, uint64_t ts, struct cg_enc_stack *st)
{
	uint64_t ord = tee.trace->alloc(e, ts, st);
	tee.copy->alloc(e, ts, st);
	return ord;
}

static void t_free(const struct cg_event *e, uint64_t ts, uint64_t ord,
		   const struct cg_enc_stack *st)
{
	tee.trace->free(e, ts, ord, st);
	tee.copy->free(e, ts, ord, st);
}

static uint64_t t_device_alloc(const struct cg_event *e, uint64_t ts, struct cg_enc_stack *st,
			       const struct cg_device_ident *id)
{
	uint64_t ord = tee.trace->device_alloc(e, ts, st, id);
	tee.copy->device_alloc(e, ts, st, id);
	return ord;
}

static void t_device_free(const struct cg_event *e, uint64_t ts, uint8_t device, uint64_t ord,
			  const struct cg_enc_stack *st, const struct cg_device_ident *id)
{
	tee.trace->device_free(e, ts, device, ord, st, id);
	tee.copy->device_free(e, ts, device, ord, st, id);
}

static uint64_t t_preexisting(uint64_t ts, uint64_t addr, uint64_t bytes, uint8_t device,
			      uint8_t category, bool vmm, const struct cg_device_ident *id)
{
	uint64_t ord = tee.trace->preexisting(ts, addr, bytes, device, category, vmm, id);
	tee.copy->preexisting(ts, addr, bytes, device, category, vmm, id);
	return ord;
}

static void t_device_memory(const struct cg_event *e, uint64_t ts, const uint64_t *oom,
			    const struct cg_device_ident *id)
{
	tee.trace->device_memory(e, ts, oom, id);
	tee.copy->device_memory(e, ts, oom, id);
}

static void t_span_start(const struct cg_event *e, uint64_t ts, uint64_t tid)
{
	tee.trace->span_start(e, ts, tid);
	tee.copy->span_start(e, ts, tid);
}

static void t_span_end(uint64_t span, uint64_t duration_ns)
{
	tee.trace->span_end(span, duration_ns);
	tee.copy->span_end(span, duration_ns);
}

static void t_gradient(const struct cg_event *e)
{
	tee.trace->gradient(e);
	tee.copy->gradient(e);
}

static void t_checkpoint(const struct cg_event *e, uint64_t ts)
{
	tee.trace->checkpoint(e, ts);
	tee.copy->checkpoint(e, ts);
}

static void t_text(const char *p, size_t n)
{
	tee.trace->text(p, n);
	tee.copy->text(p, n);
}

/* Blocks are the trace's; the copy's lines go out when they fill and at each round's end. */
static void t_thread(uint64_t tid)
{
	tee.trace->thread(tid);
}

static void t_room(void)
{
	tee.trace->room();
}

static bool t_block_due(void)
{
	return tee.trace->block_due();
}

static void t_end_block(void)
{
	tee.trace->end_block();
}

static void t_write_out(void)
{
	tee.copy->write_out();
}

static void t_round_end(bool now)
{
	tee.trace->round_end(now);
	tee.copy->round_end(now);
}

/* The copy's errors are its own. */
static int t_flush(void)
{
	int r = tee.trace->flush();
	tee.copy->flush();
	return r;
}

static void t_end_head(const struct cg_enc_end *v)
{
	tee.trace->end_head(v);
	tee.copy->end_head(v);
}

static uint64_t t_due_in(void)
{
	return tee.trace->due_in();
}

static void t_close(void)
{
	cg_out_close(tee.copy_out);
}

static void t_stats(struct cg_enc_stats *s)
{
	tee.trace->stats(s);
}

/* Filled when the tee is chosen: its full flag is the copy's. */
static struct cg_encoder_ops tee_ops;

const struct cg_encoder_ops *cg_encoding_open(struct cg_out *out, bool compact,
					      struct cg_out *copy, uint64_t flush_ms, bool stats,
					      int *err)
{
	if (!compact)
		return cg_jsonl_open(out, flush_ms, stats, err);
	const struct cg_encoder_ops *c = cg_cout_open(out, flush_ms, stats, err);
	if (!c || !copy)
		return c;
	/* The copy is not timed: CGPROBE_STATS times the trace's encoding. */
	const struct cg_encoder_ops *j = cg_jsonl_open(copy, flush_ms, false, err);
	if (!j)
		return NULL;
	tee.trace = c;
	tee.copy = j;
	tee.copy_out = copy;
	tee_ops = (struct cg_encoder_ops)CG_ENCODER_TABLE(t, j->full);
	return &tee_ops;
}

void cg_encoding_forget(void)
{
	cg_cout_forget();
}

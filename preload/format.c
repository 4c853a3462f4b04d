/* SPDX-License-Identifier: MIT */
#include "format.h"

#include <errno.h>
#include <math.h>
#include <string.h>
#include <time.h>

#include "device_source.h"
#include "fmt_num.h"
#include "jsonl_format.h"
#include "jsonl_heap.h"
#include "meta_end.h"
#include "record.h"
#include "resident.h"
#include "span_blob.h"

static struct cg_sv span_id(char out[24], uint64_t id)
{
	out[0] = 's';
	return (struct cg_sv){out, (uint32_t)(1 + cg_fmt_u64(out + 1, id))};
}

/* The op-dependent middle of each heap line, made once. */
static const struct cg_heap_op *heap_op(uint8_t op)
{
	static struct cg_heap_op ops[CG_OP_COUNT];
	if (!ops[op].len)
		cg_heap_op_init(&ops[op], cg_op_names[op]);
	return &ops[op];
}

void cg_format_heap(struct cg_buf *b, const struct cg_event *e, uint64_t ts,
		    const struct cg_enc_stack *st)
{
	struct cg_heap_rec r = {
		.timestamp_ns = ts,
		.addr = e->addr,
		.span = e->span,
		.op = heap_op(e->op < CG_OP_COUNT ? e->op : CG_OP_MALLOC),
		.bytes = e->size,
		.action = e->kind == CG_EV_ALLOC ? CGTRACE_ALLOC : CGTRACE_FREE,
		.category = (enum cgtrace_category)e->category,
		.stack = st->id,
		.frames = st->frames,
		.n_frames = st->frames ? st->n_frames : 0,
		/* The probe's definitions are all tree definitions (docs/stacks.md). */
		.has_stack_parent = st->frames != NULL,
		.stack_parent = st->parent,
		.modules = st->modules,
		.n_modules = st->modules ? st->n_modules : 0,
		.py_codes = st->py_codes,
		.n_py_codes = st->py_codes ? st->n_py_codes : 0,
	};
	cg_jsonl_format_heap(b, &r);
}

void cg_format_span_end(struct cg_buf *b, uint64_t span, uint64_t duration_ns)
{
	char id[24];
	struct cg_rec r = {.kind = CGTRACE_KIND_SPAN_END};
	r.u.span_end = (struct cg_rec_span_end){.id = span_id(id, span),
						.duration_ns = duration_ns};
	cg_jsonl_format(b, &r);
}

void cg_format_span_start(struct cg_buf *b, const struct cg_event *e, uint64_t ts, uint64_t tid)
{
	char id[24], parent[24];
	const char *blob = (const char *)(uintptr_t)e->addr;
	struct cg_span_view v = {"?", NULL, NULL, NULL};
	if (blob)
		cg_span_blob_read(blob, e->category, &v);
	struct cg_rec r = {.kind = CGTRACE_KIND_SPAN_START};
	r.u.span_start = (struct cg_rec_span_start){
		.id = span_id(id, e->span),
		.parent_id = span_id(parent, e->size),
		.name = cg_sv_c(v.name),
		.start_ns = ts,
		.span_kind = e->op <= CGTRACE_SPAN_MODULE ? e->op : CGTRACE_SPAN_FUNCTION,
		.measured = (e->category & CG_SPAN_MEASURED) != 0,
		.step = e->step,
		.has_thread = tid != 0,
		.cgprobe_thread = tid,
		.cgprobe_thread_name = v.thread ? cg_sv_c(v.thread) : CG_SV_NONE,
		.cgprobe_phase = v.phase ? cg_sv_c(v.phase) : CG_SV_NONE,
	};
	if (v.extra) {
		r.u.span_start.has_update = v.extra->update != 0;
		r.u.span_start.cgprobe_update = v.extra->update;
		r.u.span_start.has_rank = v.extra->rank != 0;
		r.u.span_start.cgprobe_rank = v.extra->rank - 1;
		r.u.span_start.has_world_size = v.extra->world_size != 0;
		r.u.span_start.cgprobe_world_size = v.extra->world_size;
		r.u.span_start.parameters = v.extra->values;
		r.u.span_start.n_parameters = (uint32_t)v.extra->n_values;
	}
	cg_jsonl_format(b, &r);
}

void cg_format_gradient(struct cg_buf *b, const struct cg_event *e)
{
	char id[24];
	struct cg_grad_blob *g = (struct cg_grad_blob *)(uintptr_t)e->addr;
	id[0] = 'g';
	struct cg_rec r = {.kind = CGTRACE_KIND_GRADIENT};
	r.u.gradient = (struct cg_rec_gradient){
		.event_id = {id, (uint32_t)(1 + cg_fmt_u64(id + 1, e->span))},
		.root = cg_sv_c(g->strings),
		.key = cg_sv_c(g->strings + strlen(g->strings) + 1),
		.state = g->state,
		.has_norm = !isnan(g->norm),
		.norm = g->norm,
	};
	cg_jsonl_format(b, &r);
}

void cg_format_checkpoint(struct cg_buf *b, const struct cg_event *e, uint64_t ts)
{
	struct cg_ckpt_blob *c = (struct cg_ckpt_blob *)(uintptr_t)e->addr;
	struct cg_rec r = {.kind = CGTRACE_KIND_DEVICE_MEMORY};
	r.u.device_memory = (struct cg_rec_device_memory){
		.timestamp_ns = ts,
		.device = cg_sv_c(c->device),
		.used_bytes = c->used,
		.free_bytes = c->free_bytes,
		.has_reserved = c->reserved != UINT64_MAX,
		.reserved_bytes = c->reserved,
		.has_allocated = c->allocated != UINT64_MAX,
		.cgprobe_allocated_bytes = c->allocated,
	};
	cg_jsonl_format(b, &r);
}

static struct cg_sv device_name(char out[32], uint8_t device)
{
	return (struct cg_sv){out, (uint32_t)cg_device_name(out, device)};
}

static struct cg_sv hex_id(char out[32], uint64_t v, bool vmm)
{
	size_t n = 0;
	if (vmm) {
		memcpy(out, "vmm:", 4);
		n = 4;
	}
	out[n++] = '0';
	out[n++] = 'x';
	n += cg_fmt_hex(out + n, v);
	return (struct cg_sv){out, (uint32_t)n};
}

/*
 * A strict trace/6 reader rejects unknown kinds, so the identity is fields
 * of the device's first record rather than a record of its own.
 */
#define SET_IDENTITY(x, id)                                                                        \
	do {                                                                                       \
		if (!(id))                                                                         \
			break;                                                                     \
		const char *uuid_ = (id)->strings, *name_ = uuid_ + strlen(uuid_) + 1;             \
		(x)->cgprobe_device_uuid = cg_sv_c(uuid_);                                         \
		(x)->cgprobe_device_name = name_[0] ? cg_sv_c(name_) : CG_SV_NONE;                 \
		(x)->has_device_total = (id)->total_bytes != 0;                                    \
		(x)->cgprobe_device_total_bytes = (id)->total_bytes;                               \
	} while (0)

void cg_format_device(struct cg_buf *b, const struct cg_event *e, uint64_t ts_ns, uint8_t device,
		      const char *op, const struct cg_device_ident *ident,
		      const struct cg_enc_stack *st)
{
	char id[32], dev[32], span[24];
	bool alloc = (e->kind & CG_EV_KIND_MASK) == CG_EV_DEV_ALLOC;
	if (!op)
		op = cg_device_op_name(e->op);
	struct cg_rec r = {.kind = CGTRACE_KIND_MEMORY};
	r.u.memory = (struct cg_rec_memory){
		.timestamp_ns = ts_ns,
		.tensor_id = hex_id(id, e->addr, e->kind & CG_PROBE_VMM),
		.span_id = span_id(span, e->span),
		.op_name = cg_sv_c(op),
		.device = device_name(dev, device),
		.bytes = e->size,
		.action = alloc ? CGTRACE_ALLOC : CGTRACE_FREE,
		.category = e->category,
		.managed = alloc && (e->kind & CG_PROBE_MANAGED),
		.shape = &e->size,
		.ndim = 1,
		.dtype = CG_SV_LIT("u8"),
	};
	SET_IDENTITY(&r.u.memory, ident);
	r.u.memory.stack = st->id;
	r.u.memory.stack_frames = st->frames;
	r.u.memory.n_stack_frames = st->frames ? st->n_frames : 0;
	r.u.memory.has_stack_parent = st->frames != NULL;
	r.u.memory.cgprobe_stack_parent = st->parent;
	r.u.memory.modules = st->modules;
	r.u.memory.n_modules = st->modules ? st->n_modules : 0;
	r.u.memory.py_codes = st->py_codes;
	r.u.memory.n_py_codes = st->py_codes ? st->n_py_codes : 0;
	cg_jsonl_format(b, &r);
}

void cg_format_meminfo(struct cg_buf *b, const struct cg_event *e, uint64_t ts_ns,
		       const uint64_t *oom_request, const struct cg_device_ident *ident)
{
	char dev[32];
	struct cg_rec r = {.kind = CGTRACE_KIND_DEVICE_MEMORY};
	r.u.device_memory = (struct cg_rec_device_memory){
		.timestamp_ns = ts_ns,
		.device = device_name(dev, e->step),
		.used_bytes = e->addr,
		.free_bytes = e->size,
		.has_oom_request = oom_request != NULL,
		.oom_request_bytes = oom_request ? *oom_request : 0,
	};
	SET_IDENTITY(&r.u.device_memory, ident);
	cg_jsonl_format(b, &r);
}

void cg_format_preexisting(struct cg_buf *b, uint64_t ts_ns, uint64_t addr, uint64_t bytes,
			   uint8_t device, uint8_t category, bool vmm, const struct cg_device_ident *ident)
{
	char id[32], dev[32];
	struct cg_rec r = {.kind = CGTRACE_KIND_MEMORY};
	r.u.memory = (struct cg_rec_memory){
		.timestamp_ns = ts_ns,
		.tensor_id = hex_id(id, addr, vmm),
		.span_id = CG_SV_LIT("s1"),
		.op_name = cg_sv_c(device == CG_PROBE_HOST ? cg_op_names[CG_OP_MALLOC]
							  : cg_device_op_name(0)),
		.device = device_name(dev, device),
		.bytes = bytes,
		.action = CGTRACE_ALLOC,
		.category = category,
		.cgprobe_preexisting = true,
		.shape = &bytes,
		.ndim = 1,
		.dtype = CG_SV_LIT("u8"),
	};
	SET_IDENTITY(&r.u.memory, ident);
	cg_jsonl_format(b, &r);
}

/* The encoder: lines into buf, written to out when it fills and at each round's end. */
static struct {
	struct cg_out *out;
	struct cg_buf buf;
	bool stats;
	uint64_t flush_ns;
	uint64_t output_ns;  /* with stats: writer CPU in cg_out_write and cg_out_flush */
	uint64_t text_bytes; /* lines written, past the head */
} j;

/* The buffer passed its flush mark: the writer calls j_write_out between events. */
static bool full;

/* The meta record, the file's first line, as it went out: the end rewrites it in place. */
static struct {
	char line[CG_HEAD_MAX];
	size_t n;
} head;

static uint64_t thread_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* After each line: a full buffer goes out between events, where a fork may go on. */
static inline void line_done(void)
{
	if (__builtin_expect(j.buf.len >= CG_FORMAT_BUF_FLUSH, 0))
		full = true;
}

static uint64_t j_alloc(const struct cg_event *e, uint64_t ts, struct cg_enc_stack *st)
{
	cg_format_heap(&j.buf, e, ts, st);
	line_done();
	return CG_ENC_NO_ORD;
}

static void j_free(const struct cg_event *e, uint64_t ts, uint64_t ord,
		   const struct cg_enc_stack *st)
{
	(void)ord;
	cg_format_heap(&j.buf, e, ts, st);
	line_done();
}

static uint64_t j_device_alloc(const struct cg_event *e, uint64_t ts, struct cg_enc_stack *st,
			       const struct cg_device_ident *id)
{
	cg_format_device(&j.buf, e, ts, e->step, NULL, id, st);
	line_done();
	return CG_ENC_NO_ORD;
}

static void j_device_free(const struct cg_event *e, uint64_t ts, uint8_t device, uint64_t ord,
			  const struct cg_enc_stack *st, const struct cg_device_ident *id)
{
	(void)ord;
	bool host_op = (e->kind & CG_EV_KIND_MASK) == CG_EV_FREE;
	cg_format_device(&j.buf, e, ts, device, host_op ? cg_op_names[CG_OP_FREE] : NULL, id, st);
	line_done();
}

static uint64_t j_preexisting(uint64_t ts, uint64_t addr, uint64_t bytes, uint8_t device,
			      uint8_t category, bool vmm, const struct cg_device_ident *id)
{
	cg_format_preexisting(&j.buf, ts, addr, bytes, device, category, vmm, id);
	line_done();
	return CG_ENC_NO_ORD;
}

static void j_device_memory(const struct cg_event *e, uint64_t ts, const uint64_t *oom,
			    const struct cg_device_ident *id)
{
	cg_format_meminfo(&j.buf, e, ts, oom, id);
	line_done();
}

static void j_span_start(const struct cg_event *e, uint64_t ts, uint64_t tid)
{
	cg_format_span_start(&j.buf, e, ts, tid);
	line_done();
}

static void j_span_end(uint64_t span, uint64_t duration_ns)
{
	cg_format_span_end(&j.buf, span, duration_ns);
	line_done();
}

static void j_gradient(const struct cg_event *e)
{
	cg_format_gradient(&j.buf, e);
	line_done();
}

static void j_checkpoint(const struct cg_event *e, uint64_t ts)
{
	cg_format_checkpoint(&j.buf, e, ts);
	line_done();
}

/* The head goes straight to the file, ahead of any record. */
static void j_text(const char *p, size_t n)
{
	const char *nl = memchr(p, '\n', n);
	/* Only a plain file's first bytes are the head: a compressed one's are zstd's. */
	if (j.out->written == 0 && !j.out->z && nl && (size_t)(nl - p) <= sizeof(head.line)) {
		head.n = (size_t)(nl - p);
		memcpy(head.line, p, head.n);
	}
	cg_out_write(j.out, p, n);
}

static void j_end_head(const struct cg_enc_end *v)
{
	if (head.n && cg_meta_end_patch(head.line, head.n, v))
		cg_out_write_at(j.out, 0, head.line, head.n);
}

/* Lines have no blocks: nothing to make room for or end. */
static void j_room(void)
{
}

static void j_end_block(void)
{
}

static void j_close(void)
{
}

static void j_thread(uint64_t tid)
{
	(void)tid;
}

static bool j_block_due(void)
{
	return false;
}

static void j_write_out(void)
{
	full = false;
	if (!j.buf.len)
		return;
	uint64_t t = j.stats ? thread_ns() : 0;
	cg_out_write(j.out, j.buf.p, j.buf.len);
	j.text_bytes += j.buf.len;
	if (t)
		j.output_ns += thread_ns() - t;
	j.buf.len = 0;
}

/* Every round's lines reach the file: a JSONL trace has no blocks to fill. */
static void j_round_end(bool now)
{
	(void)now;
	j_write_out();
	uint64_t t = j.stats ? thread_ns() : 0;
	cg_out_flush(j.out);
	if (t)
		j.output_ns += thread_ns() - t;
}

static int j_flush(void)
{
	j_write_out();
	return cg_out_flush(j.out);
}

static uint64_t j_due_in(void)
{
	return j.flush_ns;
}

static void j_stats(struct cg_enc_stats *s)
{
	s->name = "jsonl";
	s->work = "format";
	s->raw_bytes = j.text_bytes;
	s->write_ns = j.out->write_ns;
	s->compress_ns = j.output_ns > s->write_ns ? j.output_ns - s->write_ns : 0;
	s->resident = cg_resident(j.buf.p, j.buf.cap);
}

static const struct cg_encoder_ops jsonl_ops = CG_ENCODER_TABLE(j, &full);

const struct cg_encoder_ops *cg_jsonl_open(struct cg_out *out, uint64_t flush_ms, bool stats,
					   int *err)
{
	j.out = out;
	j.stats = stats;
	j.flush_ns = flush_ms * 1000000u;
	j.output_ns = j.text_bytes = 0;
	j.buf.len = 0;
	full = false;
	head.n = 0;
	/* Made up front: the writer thread allocates nothing once running. */
	if (!cg_buf_reserve(&j.buf, CG_FORMAT_BUF_RESERVE)) {
		*err = -ENOMEM;
		return NULL;
	}
	return &jsonl_ops;
}

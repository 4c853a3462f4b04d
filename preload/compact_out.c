/* SPDX-License-Identifier: MIT */
#include "compact_out.h"

#include "compact_format.h"

#include <errno.h>
#include <string.h>
#include <time.h>

#include "buf.h"
#include "cgtrace.h"
#include "clock.h"
#include "compact_enc.h"
#include "crc32.h"
#include "device_source.h"
#include "event.h"
#include "fmt_num.h"
#include "format.h"
#include "meta_end.h"
#include "resident.h"

/*
 * The writer checks for room every few hundred events (c_room): a block
 * ends this far before the encoder's own limit, so that blocks end in
 * c_flush, where CGPROBE_STATS can time their compression, rather than
 * inside a hot call.
 */
#define ROOM_MARGIN (64u << 10)

static struct cg_cenc *enc;

static struct {
	struct cg_out *out;
	bool stats, in_flush;
	uint64_t flush_ns; /* thread CPU time when the block being flushed was ended */
	uint64_t compress_ns, write_ns;
	uint64_t period_ns; /* CGPROBE_FLUSH_MS */
	uint64_t block_ns;  /* when the last block ended (cg_clock_raw) */
	uint32_t device_str[256];
	bool device_set[256];
} c;

/* The JSONL of a record the packed forms do not take, sent as TEXT. */
static struct cg_buf text;

/* The class cache: direct-mapped, a program uses a handful of classes at a time. */
#define CACHE_BITS 10
static struct {
	uint64_t key; /* 0: empty */
	uint32_t cls;
} cache[1u << CACHE_BITS];

/* A memory record's op: an index of cg_op_names, or DEVICE_OP plus the device source's op index. */
#define DEVICE_OP 0x100

static uint64_t thread_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/*
 * The head's block, stored, as it went out and where (c_flush): the end
 * rewrites its meta record in place, and so its checksum (c_end_head).
 */
static struct {
	uint8_t bytes[CG_COMPACT_BLOCK_HEADER_LEN + CG_HEAD_MAX];
	size_t n;
	uint64_t at;
	bool keep; /* the next block is the head */
} head;

static void keep_head(const void *p, size_t n)
{
	const uint8_t *b = p;
	/* A stack block that goes out first is not the head (docs/stacks.md). */
	if (n >= CG_COMPACT_BLOCK_HEADER_LEN &&
	    (b[0] == CG_CF_BLOCK_STACKS_ZSTD || b[0] == CG_CF_BLOCK_STACKS_STORED))
		return;
	head.keep = false;
	if (n > sizeof(head.bytes) || n < CG_COMPACT_BLOCK_HEADER_LEN || b[0] != 'R')
		return;
	memcpy(head.bytes, p, n);
	head.n = n;
	head.at = c.out->written;
}

/* Each finished block (and the file header) in one write. */
static int write_block(void *user, const void *p, size_t n)
{
	(void)user;
	if (!c.out)
		return -EBADF;
	if (head.keep)
		keep_head(p, n);
	if (!c.stats)
		return cg_out_write(c.out, p, n);
	uint64_t t = thread_ns();
	if (c.in_flush)
		c.compress_ns += t - c.flush_ns;
	int r = cg_out_write(c.out, p, n);
	uint64_t end = thread_ns();
	c.write_ns += end - t;
	c.flush_ns = end;
	return r;
}

/* A block ended by end (its compression and write timed for CGPROBE_STATS); the sticky error. */
static int timed_flush(int (*end)(struct cg_cenc *))
{
	if (!enc)
		return 0;
	if (c.stats) {
		c.in_flush = true;
		c.flush_ns = thread_ns();
	}
	int r = end(enc);
	c.in_flush = false;
	return r;
}

/* Ends the block being built and writes it; returns the sticky error. */
static int flush_block(void)
{
	return timed_flush(cg_cenc_flush);
}

static void c_end_block(void)
{
	flush_block();
}

/* Whether the next items (more bytes) might not fit: room_for(more) then ends the block. */
static bool room_due(size_t more)
{
	return enc && cg_cenc_pending(enc) + more + ROOM_MARGIN > CG_PROBE_BLOCK_RAW;
}

static void room_for(size_t more)
{
	if (room_due(more))
		flush_block();
}

static uint32_t device_string(uint8_t device)
{
	if (!c.device_set[device]) {
		char name[32];
		size_t n = cg_device_name(name, device);
		c.device_str[device] = cg_cenc_string(enc, name, n);
		c.device_set[device] = true;
	}
	return c.device_str[device];
}

static uint32_t span_string(uint64_t span)
{
	char id[24];
	id[0] = 's';
	return cg_cenc_string(enc, id, 1 + cg_fmt_u64(id + 1, span));
}

/*
 * A memory record's class: its span, op, device, category and CG_CLASS_*
 * flags, which make its key in the cache; a key not there has its strings
 * and class defined, CG_CENC_NONE when it cannot be.
 */
static __attribute__((noinline)) uint32_t class_miss(uint64_t key, uint32_t span, uint16_t op,
						     uint8_t device, uint8_t category,
						     uint8_t flags)
{
	uint32_t cls = CG_CENC_NONE;
	if (category <= CGTRACE_CAT_OTHER) {
		const char *name =
		    op & DEVICE_OP ? cg_device_op_name((uint8_t)op) : cg_op_names[op];
		uint32_t s = span_string(span), o = cg_cenc_string(enc, name, strlen(name));
		cls = cg_cenc_class(enc, s, o, device_string(device), category, flags);
	}
	size_t i = (size_t)((key * 0x9e3779b97f4a7c15ull) >> (64 - CACHE_BITS));
	cache[i].key = key;
	cache[i].cls = cls;
	return cls;
}

static inline uint32_t class_of(uint32_t span, uint16_t op, uint8_t device, uint8_t category,
				uint8_t flags)
{
	uint64_t key = (uint64_t)span | (uint64_t)(op & 0x1ff) << 32 | (uint64_t)device << 41 |
		       (uint64_t)(category & 15) << 49 | (uint64_t)(flags & 3) << 53 | 1ull << 63;
	size_t i = (size_t)((key * 0x9e3779b97f4a7c15ull) >> (64 - CACHE_BITS));
	if (__builtin_expect(cache[i].key == key, 1))
		return cache[i].cls;
	return class_miss(key, span, op, device, category, flags);
}

/* A host record's op: malloc for one the table does not know. */
static inline uint16_t host_op(const struct cg_event *e)
{
	return e->op < CG_OP_COUNT ? e->op : CG_OP_MALLOC;
}

/*
 * The host heap's classes for the span and category of the last host
 * record, by op (a class number plus 1, 0 not known yet): records in a
 * row share their span and category, and building the cache's key and
 * hashing it was most of this file's work for each record.
 */
static struct {
	uint32_t span;
	uint8_t category;
	uint32_t cls[CG_OP_COUNT];
} host;

static __attribute__((noinline)) uint32_t host_class_miss(const struct cg_event *e, uint16_t op)
{
	if (e->span != host.span || e->category != host.category) {
		memset(&host, 0, sizeof(host));
		host.span = e->span;
		host.category = e->category;
	}
	uint32_t cls = class_of(e->span, op, CG_PROBE_HOST, e->category, 0);
	if (cls != CG_CENC_NONE)
		host.cls[op] = cls + 1;
	return cls;
}

/* The memo's class for e plus 1; 0 when it holds none for e's span, category and op. */
static inline uint32_t host_known(const struct cg_event *e)
{
	return e->span == host.span && e->category == host.category ? host.cls[host_op(e)] : 0;
}

static inline uint32_t host_class(const struct cg_event *e)
{
	uint32_t known = host_known(e);
	if (__builtin_expect(known != 0, 1))
		return known - 1;
	return host_class_miss(e, host_op(e));
}

static inline uint8_t device_flags(const struct cg_event *e)
{
	bool alloc = (e->kind & CG_EV_KIND_MASK) == CG_EV_DEV_ALLOC;
	return (alloc && (e->kind & CG_PROBE_MANAGED) ? CG_CLASS_MANAGED : 0) |
	       (e->kind & CG_PROBE_VMM ? CG_CLASS_VMM : 0);
}

/* The JSONL lines in text, each ending in a newline, as TEXT items. */
static void c_text(const char *p, size_t n)
{
	while (n) {
		const char *nl = memchr(p, '\n', n);
		size_t len = nl ? (size_t)(nl - p) : n;
		room_for(len + 16);
		cg_cenc_text(enc, p, len);
		len += nl != NULL;
		p += len;
		n -= len;
	}
}

/* The record formatted into text, then sent: start with text_begin(). */
static inline struct cg_buf *text_begin(void)
{
	text.len = 0;
	return &text;
}

static void text_end(void)
{
	c_text(text.p, text.len);
}

/*
 * An allocation whose call stack is st's, defining it first when frames
 * is set (its first use); a definition the encoder refuses leaves the
 * record without a stack, and st refused.
 */
static inline uint64_t alloc_stack(uint32_t cls, uint64_t ts, uint64_t addr, uint64_t bytes,
				   struct cg_enc_stack *st)
{
	uint64_t id = st->id;
	if (st->frames && !cg_cenc_tree(enc, id, st->parent, st->frames, st->n_frames)) {
		st->refused = id != 0;
		id = 0;
	}
	return cg_cenc_alloc_stack(enc, cls, ts, addr, bytes, id);
}

/* Room for a stack's definition, in the stack block, ahead of the record it rides on. */
static inline void stack_room(const struct cg_enc_stack *st)
{
	if (st->frames && enc &&
	    cg_cenc_stacks_pending(enc) + st->n_frames * 10u + 48 + ROOM_MARGIN > CG_PROBE_BLOCK_RAW)
		timed_flush(cg_cenc_flush_stacks);
}

/* Pending modules and code objects make a record TEXT: they are rare. */
static __attribute__((noinline)) uint64_t c_alloc_slow(const struct cg_event *e, uint64_t ts,
						       struct cg_enc_stack *st)
{
	if (__builtin_expect(!st->n_modules && !st->n_py_codes, 1)) {
		stack_room(st);
		uint32_t cls = host_class(e);
		if (__builtin_expect(cls != CG_CENC_NONE, 1))
			return alloc_stack(cls, ts, e->addr, e->size, st);
	}
	cg_format_heap(text_begin(), e, ts, st);
	text_end();
	return CG_ENC_NO_ORD;
}

/*
 * The host heap's records, most of a trace: a class known and no stack to
 * define go straight to the encoder (a tail call, no frame of its own);
 * anything else the way above. Returns the class plus 1, 0 for the slow way.
 */
static inline uint32_t host_plain(const struct cg_event *e, const struct cg_enc_stack *st)
{
	if (__builtin_expect(st->frames || st->n_modules || st->n_py_codes, 0))
		return 0;
	return host_known(e);
}

static uint64_t c_alloc(const struct cg_event *e, uint64_t ts, struct cg_enc_stack *st)
{
	uint32_t known = host_plain(e, st);
	if (__builtin_expect(!known, 0))
		return c_alloc_slow(e, ts, st);
	return cg_cenc_alloc_stack(enc, known - 1, ts, e->addr, e->size, st->id);
}

static __attribute__((noinline)) void c_free_slow(const struct cg_event *e, uint64_t ts,
						  uint64_t ord, const struct cg_enc_stack *st)
{
	if (__builtin_expect(!st->n_modules, 1)) {
		uint32_t cls = host_class(e);
		/* The writer's times never go back: no block ends for an early one. */
		if (__builtin_expect(cls != CG_CENC_NONE, 1)) {
			cg_cenc_free(enc, cls, ts, e->addr, ord);
			return;
		}
	}
	cg_format_heap(text_begin(), e, ts, st);
	text_end();
}

static void c_free(const struct cg_event *e, uint64_t ts, uint64_t ord,
		   const struct cg_enc_stack *st)
{
	uint32_t known = host_plain(e, st);
	if (__builtin_expect(!known, 0)) {
		c_free_slow(e, ts, ord, st);
		return;
	}
	cg_cenc_free(enc, known - 1, ts, e->addr, ord);
}

static uint64_t c_device_alloc(const struct cg_event *e, uint64_t ts, struct cg_enc_stack *st,
			       const struct cg_device_ident *id)
{
	if (!id && !st->n_modules && !st->n_py_codes) {
		stack_room(st);
		uint32_t cls = class_of(e->span, (uint16_t)(DEVICE_OP | e->op), e->step,
					e->category, device_flags(e));
		if (cls != CG_CENC_NONE)
			return alloc_stack(cls, ts, e->addr, e->size, st);
	}
	cg_format_device(text_begin(), e, ts, e->step, NULL, id, st);
	text_end();
	return CG_ENC_NO_ORD;
}

static void c_device_free(const struct cg_event *e, uint64_t ts, uint8_t device, uint64_t ord,
			  const struct cg_enc_stack *st, const struct cg_device_ident *id)
{
	bool host_op = (e->kind & CG_EV_KIND_MASK) == CG_EV_FREE;
	if (!id && !st->n_modules) {
		uint32_t cls =
		    class_of(e->span, (uint16_t)(host_op ? CG_OP_FREE : DEVICE_OP | e->op), device,
			     e->category, device_flags(e));
		if (cls != CG_CENC_NONE) {
			cg_cenc_free(enc, cls, ts, e->addr, ord);
			return;
		}
	}
	cg_format_device(text_begin(), e, ts, device, host_op ? cg_op_names[CG_OP_FREE] : NULL, id,
			 st);
	text_end();
}

static uint64_t c_preexisting(uint64_t ts, uint64_t addr, uint64_t bytes, uint8_t device,
			      uint8_t category, bool vmm, const struct cg_device_ident *id)
{
	if (!id) {
		uint32_t cls =
		    device == CG_PROBE_HOST
			? class_of(1, CG_OP_MALLOC, device, category, 0)
			: class_of(1, DEVICE_OP, device, category, vmm ? CG_CLASS_VMM : 0);
		if (cls != CG_CENC_NONE)
			return cg_cenc_alloc_pre(enc, cls, ts, addr, bytes);
	}
	cg_format_preexisting(text_begin(), ts, addr, bytes, device, category, vmm, id);
	text_end();
	return CG_ENC_NO_ORD;
}

static void c_device_memory(const struct cg_event *e, uint64_t ts, const uint64_t *oom,
			    const struct cg_device_ident *id)
{
	uint32_t d = id ? CG_CENC_NONE : device_string(e->step);
	if (d != CG_CENC_NONE) {
		cg_cenc_device_memory(enc, ts, d, e->addr, e->size, NULL, oom);
		return;
	}
	cg_format_meminfo(text_begin(), e, ts, oom, id);
	text_end();
}

/* The opening thread rides as an extension field: TEXT. */
static void c_span_start(const struct cg_event *e, uint64_t ts, uint64_t tid)
{
	cg_format_span_start(text_begin(), e, ts, tid);
	text_end();
}

static void c_span_end(uint64_t span, uint64_t duration_ns)
{
	cg_cenc_span_end(enc, span, duration_ns);
}

static void c_gradient(const struct cg_event *e)
{
	cg_format_gradient(text_begin(), e);
	text_end();
}

static void c_checkpoint(const struct cg_event *e, uint64_t ts)
{
	cg_format_checkpoint(text_begin(), e, ts);
	text_end();
}

/* The encoder writes a THREAD item before the next record, and again in each new block. */
static void c_thread(uint64_t tid)
{
	cg_cenc_thread(enc, tid);
}

static void c_room(void)
{
	room_for(0);
}

static bool c_block_due(void)
{
	return room_due(0);
}

/* Blocks are written as they end: nothing waits for write_out or close. */
static void c_write_out(void)
{
}

static void c_close(void)
{
}

/*
 * A block ends when a request asks (an exit, an exec, cgprobe_flush) and
 * once a flush period has passed since the last one ended, so that one
 * reaches the file at least every CGPROBE_FLUSH_MS; not in every round,
 * which a thread's half-full ring starts, as small blocks compress worse
 * and a free can name only an allocation of its own block.
 */
static void c_round_end(bool now)
{
	uint64_t t = cg_clock_raw();
	if (now || t - c.block_ns >= c.period_ns) {
		flush_block();
		c.block_ns = t;
	}
}

/* The head: a block of its own, stored, so that its meta record can be rewritten in place. */
static int c_flush(void)
{
	if (!enc)
		return 0;
	head.keep = true;
	int r = cg_cenc_flush_stored(enc);
	head.keep = false;
	return r;
}

static uint32_t get_u32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void put_u32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/* The block's payload is its raw bytes: the meta record's TEXT item keeps its length. */
static void c_end_head(const struct cg_enc_end *v)
{
	uint8_t *b = head.bytes, *payload = b + CG_COMPACT_BLOCK_HEADER_LEN;
	if (!c.out || !head.n)
		return;
	size_t len = get_u32(b + 4);
	if (len != head.n - CG_COMPACT_BLOCK_HEADER_LEN || !cg_meta_end_patch((char *)payload, len, v))
		return;
	put_u32(b + 12, cg_crc32(0, payload, len));
	cg_out_write_at(c.out, head.at, b, head.n);
}

/* A block is due a flush period after the last one ended. */
static uint64_t c_due_in(void)
{
	uint64_t now = cg_clock_raw(), due = c.block_ns + c.period_ns;
	return due > now ? due - now : 0;
}

static void c_stats(struct cg_enc_stats *out)
{
	struct cg_cenc_stats s = {0};
	if (enc)
		cg_cenc_stats(enc, &s);
	out->name = "compact";
	out->work = "encode";
	out->records = s.records;
	out->blocks = s.blocks;
	out->raw_bytes = s.raw_bytes;
	out->compress_ns = c.compress_ns;
	out->write_ns = c.write_ns;
	out->resident = (enc ? cg_cenc_resident(enc) : 0) + cg_resident(text.p, text.cap);
}

/* Blocks are written as they end: no lines wait. */
static const bool never_full;

static const struct cg_encoder_ops compact_ops = CG_ENCODER_TABLE(c, &never_full);

const struct cg_encoder_ops *cg_cout_open(struct cg_out *out, uint64_t flush_ms, bool stats,
					  int *err)
{
	/* The trace before (an exec that failed after removing it) was flushed when it ended. */
	if (enc) {
		c.out = NULL;
		cg_cenc_close(enc);
		enc = NULL;
	}
	memset(&c, 0, sizeof(c));
	memset(cache, 0, sizeof(cache));
	memset(&host, 0, sizeof(host));
	head.n = 0;
	head.keep = false;
	c.out = out;
	c.stats = stats;
	c.period_ns = flush_ms * 1000000u;
	c.block_ns = cg_clock_raw();
	/* Made up front, as large as the JSONL encoder's: the writer thread allocates nothing. */
	text.len = 0;
	if (!cg_buf_reserve(&text, CG_FORMAT_BUF_RESERVE)) {
		*err = -ENOMEM;
		return NULL;
	}
	struct cg_cenc_opts o = {
	    .zstd_level = CG_PROBE_ZSTD_LEVEL,
	    .block_raw = CG_PROBE_BLOCK_RAW,
	    .write = write_block,
	    /* The writer stamps records in order (writer.c): readers apply them as they come. */
	    .flags = CG_CF_FLAG_IN_ORDER,
	    .lean = true,
	};
	int r = cg_cenc_new(&enc, &o);
	if (r < 0) {
		enc = NULL;
		*err = r;
		return NULL;
	}
	return &compact_ops;
}

void cg_cout_forget(void)
{
	enc = NULL;
	c.out = NULL;
}

/* SPDX-License-Identifier: MIT */
#include "compact_out.h"

#include <errno.h>
#include <string.h>
#include <time.h>

#include "cgtrace.h"
#include "compact_enc.h"
#include "device.h"
#include "event.h"
#include "fmt_num.h"
#include "utf8.h"

/* Direct-mapped: a program uses a handful of (span, op, category) mixes at a time. */
#define CACHE_BITS 10
#define NO_CLASS CG_CENC_NONE
/*
 * The writer checks for room every few hundred events (cg_cout_room): a
 * block ends this far before the encoder's own limit, so that blocks end
 * in cg_cout_flush, where CGPROBE_STATS can time their compression, rather
 * than inside a hot call.
 */
#define ROOM_MARGIN (256u << 10)

struct slot {
	uint64_t key; /* 0: empty */
	uint32_t cls;
};

static struct {
	struct cg_cenc *e;
	struct cg_out *out;
	bool stats, in_flush;
	uint64_t flush_ns; /* thread CPU time when the block being flushed was ended */
	uint64_t compress_ns, write_ns;
	uint32_t device_str[256];
	bool device_set[256];
	struct slot cache[1u << CACHE_BITS];
} c;

static uint64_t thread_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Each finished block (and the file header) in one write; a block's thread state ends with it. */
static int write_block(void *user, const void *p, size_t n)
{
	(void)user;
	if (!c.out)
		return -EBADF;
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

int cg_cout_open(struct cg_out *out, bool stats)
{
	/* The trace before (an exec that failed after removing it) was flushed when it ended. */
	if (c.e) {
		c.out = NULL;
		cg_cenc_close(c.e);
		c.e = NULL;
	}
	memset(&c, 0, sizeof(c));
	c.out = out;
	c.stats = stats;
	struct cg_cenc_opts o = {
	    .zstd_level = CG_PROBE_ZSTD_LEVEL,
	    .block_raw = CG_COMPACT_BLOCK_RAW,
	    .write = write_block,
	};
	int r = cg_cenc_new(&c.e, &o);
	if (r < 0)
		c.e = NULL;
	return r;
}

void cg_cout_forget(void)
{
	c.e = NULL;
	c.out = NULL;
}

int cg_cout_flush(void)
{
	if (!c.e)
		return 0;
	if (c.stats) {
		c.in_flush = true;
		c.flush_ns = thread_ns();
	}
	int r = cg_cenc_flush(c.e);
	c.in_flush = false;
	return r;
}

void cg_cout_room(size_t more)
{
	if (c.e && cg_cenc_pending(c.e) + more + ROOM_MARGIN > CG_COMPACT_BLOCK_RAW)
		cg_cout_flush();
}

/* The encoder writes a THREAD item before the next record, and again in each new block. */
void cg_cout_thread(uint64_t tid)
{
	cg_cenc_thread(c.e, tid);
}

static uint32_t device_string(uint8_t device)
{
	if (!c.device_set[device]) {
		char name[32];
		size_t n = cg_device_name(name, device);
		c.device_str[device] = cg_cenc_string(c.e, name, n);
		c.device_set[device] = true;
	}
	return c.device_str[device];
}

static uint32_t span_string(uint64_t span)
{
	char id[24];
	id[0] = 's';
	return cg_cenc_string(c.e, id, 1 + cg_fmt_u64(id + 1, span));
}

static uint32_t make_class(const struct cg_cout_class *k)
{
	if (k->category > CGTRACE_CAT_OTHER)
		return NO_CLASS;
	const char *op =
	    k->op & CG_COUT_DEVICE_OP ? cg_device_op_name((uint8_t)k->op) : cg_op_names[k->op];
	uint32_t span = span_string(k->span);
	uint32_t op_id = cg_cenc_string(c.e, op, strlen(op));
	return cg_cenc_class(c.e, span, op_id, device_string(k->device), k->category, k->flags);
}

static uint32_t class_of(const struct cg_cout_class *k)
{
	uint64_t key = (uint64_t)k->span | (uint64_t)(k->op & 0x1ff) << 32 |
		       (uint64_t)k->device << 41 | (uint64_t)(k->category & 15) << 49 |
		       (uint64_t)(k->flags & 3) << 53 | 1ull << 63;
	struct slot *s = &c.cache[(key * 0x9e3779b97f4a7c15ull) >> (64 - CACHE_BITS)];
	if (s->key != key) {
		s->key = key;
		s->cls = make_class(k);
	}
	return s->cls;
}

bool cg_cout_alloc(struct cg_cout_class k, uint64_t ts, uint64_t addr, uint64_t bytes,
		   uint64_t *ord)
{
	uint32_t cls = class_of(&k);
	if (cls == NO_CLASS) {
		*ord = CG_COUT_NO_ORD;
		return false;
	}
	*ord = cg_cenc_alloc(c.e, cls, ts, addr, bytes);
	return true;
}

bool cg_cout_free(struct cg_cout_class k, uint64_t ts, uint64_t addr, uint64_t ord)
{
	uint32_t cls = class_of(&k);
	if (cls == NO_CLASS)
		return false;
	cg_cenc_free(c.e, cls, ts, addr, ord);
	return true;
}

/* A STRING holds the string's UTF-8 as it is: names that are not well-formed go as TEXT. */
static bool well_formed(const char *s, size_t n)
{
	for (size_t i = 0; i < n;) {
		size_t k = cg_utf8_seq((const uint8_t *)s + i, n - i, NULL);
		if (!k)
			return false;
		i += k;
	}
	return true;
}

bool cg_cout_span_start(uint64_t ts, uint64_t id, uint64_t parent, const char *name, uint8_t step)
{
	size_t n = strlen(name);
	if (parent == 0 || step > CGTRACE_STEP_OPTIMIZER || !well_formed(name, n))
		return false;
	cg_cout_room(n + 64);
	uint32_t s = cg_cenc_string(c.e, name, n);
	if (s == CG_CENC_NONE)
		return false;
	cg_cenc_span_start(c.e, ts, id, parent, s, (uint8_t)CGTRACE_SPAN_FUNCTION, step, false);
	return true;
}

void cg_cout_span_end(uint64_t id, uint64_t duration_ns)
{
	cg_cenc_span_end(c.e, id, duration_ns);
}

bool cg_cout_device_memory(uint64_t ts, uint8_t device, uint64_t used, uint64_t free_bytes,
			   const uint64_t *oom)
{
	uint32_t d = device_string(device);
	if (d == CG_CENC_NONE)
		return false;
	cg_cenc_device_memory(c.e, ts, d, used, free_bytes, NULL, oom);
	return true;
}

void cg_cout_text(const char *p, size_t n)
{
	while (n) {
		const char *nl = memchr(p, '\n', n);
		size_t len = nl ? (size_t)(nl - p) : n;
		cg_cout_room(len + 16);
		cg_cenc_text(c.e, p, len);
		len += nl != NULL;
		p += len;
		n -= len;
	}
}

void cg_cout_stats(struct cg_cout_stats *out)
{
	struct cg_cenc_stats s = {0};
	if (c.e)
		cg_cenc_stats(c.e, &s);
	*out = (struct cg_cout_stats){s.records,      s.blocks,      s.raw_bytes,
				      s.stored_bytes, c.compress_ns, c.write_ns};
}

/* SPDX-License-Identifier: MIT */
#include "compact_out.h"

#include "compact_format.h"

#include <errno.h>
#include <string.h>
#include <time.h>

#include "cgtrace.h"
#include "compact_enc.h"
#include "device.h"
#include "event.h"
#include "fmt_num.h"
#include "utf8.h"

/*
 * The writer checks for room every few hundred events (cg_cout_room): a
 * block ends this far before the encoder's own limit, so that blocks end
 * in cg_cout_flush, where CGPROBE_STATS can time their compression, rather
 * than inside a hot call.
 */
#define ROOM_MARGIN (64u << 10)

struct cg_cout_hot cg_cout_hot;
#define ENC cg_cout_hot.e

static struct {
	struct cg_out *out;
	bool stats, in_flush;
	uint64_t flush_ns; /* thread CPU time when the block being flushed was ended */
	uint64_t compress_ns, write_ns;
	uint32_t device_str[256];
	bool device_set[256];
} c;

static uint64_t thread_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Each finished block (and the file header) in one write. */
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
	if (ENC) {
		c.out = NULL;
		cg_cenc_close(ENC);
		ENC = NULL;
	}
	memset(&c, 0, sizeof(c));
	memset(&cg_cout_hot, 0, sizeof(cg_cout_hot));
	c.out = out;
	c.stats = stats;
	struct cg_cenc_opts o = {
	    .zstd_level = CG_PROBE_ZSTD_LEVEL,
	    .block_raw = CG_PROBE_BLOCK_RAW,
	    .write = write_block,
	    /* The writer stamps records in order (writer.c), which lets readers apply them as they come. */
	    .flags = CG_CF_FLAG_IN_ORDER,
	};
	int r = cg_cenc_new(&ENC, &o);
	if (r < 0)
		ENC = NULL;
	return r;
}

void cg_cout_forget(void)
{
	ENC = NULL;
	c.out = NULL;
}

int cg_cout_flush(void)
{
	if (!ENC)
		return 0;
	if (c.stats) {
		c.in_flush = true;
		c.flush_ns = thread_ns();
	}
	int r = cg_cenc_flush(ENC);
	c.in_flush = false;
	return r;
}

bool cg_cout_room_due(size_t more)
{
	return ENC && cg_cenc_pending(ENC) + more + ROOM_MARGIN > CG_PROBE_BLOCK_RAW;
}

void cg_cout_room(size_t more)
{
	if (cg_cout_room_due(more))
		cg_cout_flush();
}

/* The encoder writes a THREAD item before the next record, and again in each new block. */
void cg_cout_thread(uint64_t tid)
{
	cg_cenc_thread(ENC, tid);
}

static uint32_t device_string(uint8_t device)
{
	if (!c.device_set[device]) {
		char name[32];
		size_t n = cg_device_name(name, device);
		c.device_str[device] = cg_cenc_string(ENC, name, n);
		c.device_set[device] = true;
	}
	return c.device_str[device];
}

static uint32_t span_string(uint64_t span)
{
	char id[24];
	id[0] = 's';
	return cg_cenc_string(ENC, id, 1 + cg_fmt_u64(id + 1, span));
}

uint32_t cg_cout_class_miss(uint64_t key)
{
	uint32_t span = (uint32_t)key, op = (key >> 32) & 0x1ff;
	uint8_t device = (uint8_t)(key >> 41), category = (key >> 49) & 15, flags = (key >> 53) & 3;
	uint32_t cls = CG_CENC_NONE;
	if (category <= CGTRACE_CAT_OTHER) {
		const char *name = op & CG_COUT_DEVICE_OP ? cg_device_op_name((uint8_t)op)
							  : cg_op_names[op];
		uint32_t s = span_string(span), o = cg_cenc_string(ENC, name, strlen(name));
		cls = cg_cenc_class(ENC, s, o, device_string(device), category, flags);
	}
	size_t i = (size_t)((key * 0x9e3779b97f4a7c15ull) >> (64 - CG_COUT_CACHE_BITS));
	cg_cout_hot.cache[i].key = key;
	cg_cout_hot.cache[i].cls = cls;
	return cls;
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
	uint32_t s = cg_cenc_string(ENC, name, n);
	if (s == CG_CENC_NONE)
		return false;
	cg_cenc_span_start(ENC, ts, id, parent, s, (uint8_t)CGTRACE_SPAN_FUNCTION, step, false);
	return true;
}

void cg_cout_span_end(uint64_t id, uint64_t duration_ns)
{
	cg_cenc_span_end(ENC, id, duration_ns);
}

bool cg_cout_device_memory(uint64_t ts, uint8_t device, uint64_t used, uint64_t free_bytes,
			   const uint64_t *oom)
{
	uint32_t d = device_string(device);
	if (d == CG_CENC_NONE)
		return false;
	cg_cenc_device_memory(ENC, ts, d, used, free_bytes, NULL, oom);
	return true;
}

void cg_cout_text(const char *p, size_t n)
{
	while (n) {
		const char *nl = memchr(p, '\n', n);
		size_t len = nl ? (size_t)(nl - p) : n;
		cg_cout_room(len + 16);
		cg_cenc_text(ENC, p, len);
		len += nl != NULL;
		p += len;
		n -= len;
	}
}

void cg_cout_stats(struct cg_cout_stats *out)
{
	struct cg_cenc_stats s = {0};
	if (ENC)
		cg_cenc_stats(ENC, &s);
	*out = (struct cg_cout_stats){s.records,      s.blocks,      s.raw_bytes,
				      s.stored_bytes, c.compress_ns, c.write_ns};
}

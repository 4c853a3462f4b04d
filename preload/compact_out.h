/* SPDX-License-Identifier: MIT */
/*
 * The writer's compact side (docs/compact-format.md): events become the
 * encoder's packed items, each memory record's class found through a small
 * cache keyed by the event's fields (no string work on the hot path), and
 * every block goes to the trace's cg_out in one write. The encoder is made
 * when a trace opens; after that nothing here allocates. Writer thread only.
 */
#ifndef CG_COMPACT_OUT_H
#define CG_COMPACT_OUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "compact_enc.h"
#include "out.h"

/*
 * Level 1: on bench/alloc-bench (2 threads, 1M operations each) blocks
 * compress in about 11 ns a record; level -1 took as long for files a
 * fifth larger, level 3 four times as long for 3% smaller files.
 */
#define CG_PROBE_ZSTD_LEVEL 1
#define CG_PROBE_ZSTD_LEVEL_TEXT "1"
/*
 * The probe's blocks hold 1 MiB of raw items, not the encoder's 4: about
 * 190000 records on bench/alloc-bench, so a free rarely names an alloc of
 * the block before; the block and its compressed copy stay nearer the
 * cache (writer CPU about 3% lower) and the probe's RSS 5 MiB smaller.
 */
#define CG_PROBE_BLOCK_RAW (1u << 20)
/* An alloc that went out as TEXT: its free cannot name it by ordinal. */
#define CG_COUT_NO_ORD UINT64_MAX

/* A fresh encoder for a new trace on out; its file header is written at once. */
int cg_cout_open(struct cg_out *out, bool stats);
/* In a fork child: the parent's encoder may be mid-call; it is left alone, never used again. */
void cg_cout_forget(void);
/* Ends the block being built and writes it; returns the sticky error. */
int cg_cout_flush(void);
/* Ends the block early when the next items might not fit, so only cg_cout_flush ends blocks. */
void cg_cout_room(size_t more);
/* Whether cg_cout_room(more) would end the block now. */
bool cg_cout_room_due(size_t more);

/* The thread of the records that follow. */
void cg_cout_thread(uint64_t tid);

/*
 * A memory record's class, as a key made of the event's fields: span,
 * op (an index of cg_op_names, or CG_COUT_DEVICE_OP plus the device
 * source's op index), device, category and CG_CLASS_* flags.
 */
#define CG_COUT_DEVICE_OP 0x100
static inline uint64_t cg_cout_key(uint32_t span, uint16_t op, uint8_t device, uint8_t category,
				   uint8_t flags)
{
	return (uint64_t)span | (uint64_t)(op & 0x1ff) << 32 | (uint64_t)device << 41 |
	       (uint64_t)(category & 15) << 49 | (uint64_t)(flags & 3) << 53 | 1ull << 63;
}

/* The class cache: direct-mapped, a program uses a handful of classes at a time. */
#define CG_COUT_CACHE_BITS 10
struct cg_cout_hot {
	struct cg_cenc *e;
	struct {
		uint64_t key; /* 0: empty */
		uint32_t cls;
	} cache[1u << CG_COUT_CACHE_BITS];
};
extern struct cg_cout_hot cg_cout_hot;
/* A key not in the cache: its strings and class defined, CG_CENC_NONE when it cannot be. */
uint32_t cg_cout_class_miss(uint64_t key);

static inline uint32_t cg_cout_class(uint64_t key)
{
	size_t i = (size_t)((key * 0x9e3779b97f4a7c15ull) >> (64 - CG_COUT_CACHE_BITS));
	if (__builtin_expect(cg_cout_hot.cache[i].key == key, 1))
		return cg_cout_hot.cache[i].cls;
	return cg_cout_class_miss(key);
}

/*
 * Packed memory records; false when the record does not fit the packed
 * forms (the caller sends it as TEXT). An alloc's ordinal goes to *ord
 * (CG_COUT_NO_ORD when not packed), for its free.
 */
static inline bool cg_cout_alloc(uint64_t key, uint64_t ts, uint64_t addr, uint64_t bytes,
				 uint64_t *ord)
{
	uint32_t cls = cg_cout_class(key);
	*ord = CG_COUT_NO_ORD;
	if (cls == CG_CENC_NONE)
		return false;
	*ord = cg_cenc_alloc(cg_cout_hot.e, cls, ts, addr, bytes);
	return true;
}

/* A block live before recording began (a snapshot's): `"cgprobe_preexisting":true`. */
static inline bool cg_cout_alloc_pre(uint64_t key, uint64_t ts, uint64_t addr, uint64_t bytes,
				     uint64_t *ord)
{
	uint32_t cls = cg_cout_class(key);
	*ord = CG_COUT_NO_ORD;
	if (cls == CG_CENC_NONE)
		return false;
	*ord = cg_cenc_alloc_pre(cg_cout_hot.e, cls, ts, addr, bytes);
	return true;
}

/*
 * The same for an allocation whose call stack is stack (0: none), defining
 * it first when frames is set (its first use); a definition the encoder
 * refuses leaves the record without a stack and *stack 0.
 */
static inline bool cg_cout_alloc_stack(uint64_t key, uint64_t ts, uint64_t addr, uint64_t bytes,
				       uint64_t *stack, const uint64_t *frames, uint32_t n,
				       uint64_t *ord)
{
	uint32_t cls = cg_cout_class(key);
	*ord = CG_COUT_NO_ORD;
	if (cls == CG_CENC_NONE)
		return false;
	if (frames && !cg_cenc_stack(cg_cout_hot.e, *stack, frames, n))
		*stack = 0;
	*ord = cg_cenc_alloc_stack(cg_cout_hot.e, cls, ts, addr, bytes, *stack);
	return true;
}

static inline bool cg_cout_free(uint64_t key, uint64_t ts, uint64_t addr, uint64_t ord)
{
	uint32_t cls = cg_cout_class(key);
	if (cls == CG_CENC_NONE)
		return false;
	/* The writer's times never go back, so the encoder never ends a block for an early one. */
	cg_cenc_free(cg_cout_hot.e, cls, ts, addr, ord);
	return true;
}

/* A span "s<id>" under "s<parent>" (parent > 0), function kind, not measured; false as above. */
bool cg_cout_span_start(uint64_t ts, uint64_t id, uint64_t parent, const char *name, uint8_t step);
void cg_cout_span_end(uint64_t id, uint64_t duration_ns);
bool cg_cout_device_memory(uint64_t ts, uint8_t device, uint64_t used, uint64_t free_bytes,
			   const uint64_t *oom);
/* JSONL lines (each ending in a newline) as TEXT items. */
void cg_cout_text(const char *p, size_t n);

struct cg_cout_stats {
	uint64_t records, blocks, raw_bytes, stored_bytes;
	uint64_t compress_ns, write_ns; /* writer thread CPU, per block */
};
void cg_cout_stats(struct cg_cout_stats *out);

#endif

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

#include "out.h"

/* Level 1: blocks of packed items shrink 3-4x more at little cost to the writer. */
#define CG_PROBE_ZSTD_LEVEL 1
#define CG_PROBE_ZSTD_LEVEL_TEXT "1"
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

/* The thread of the records that follow. */
void cg_cout_thread(uint64_t tid);

/*
 * A memory record's shared fields. op: an index of cg_op_names, or
 * CG_COUT_DEVICE_OP plus the device source's op index.
 */
#define CG_COUT_DEVICE_OP 0x100
struct cg_cout_class {
	uint32_t span;
	uint16_t op;
	uint8_t device;
	uint8_t category;
	uint8_t flags; /* CG_CLASS_MANAGED, CG_CLASS_VMM */
};
/*
 * Packed memory records; false when the record does not fit the packed
 * forms (the caller sends it as TEXT). An alloc's ordinal goes to *ord
 * (CG_COUT_NO_ORD when not packed), for its free.
 */
bool cg_cout_alloc(struct cg_cout_class k, uint64_t ts, uint64_t addr, uint64_t bytes,
		   uint64_t *ord);
bool cg_cout_free(struct cg_cout_class k, uint64_t ts, uint64_t addr, uint64_t ord);
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

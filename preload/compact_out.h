/* SPDX-License-Identifier: MIT */
/*
 * The compact encoder (docs/compact-format.md), encoder.h's operations
 * over core/write/compact_enc.c: events become packed items, each memory
 * record's class found through a small cache keyed by the event's fields
 * (no string work on the hot path), what the packed forms do not take is
 * formatted as JSONL (format.h) and goes as TEXT, and every block goes to
 * the trace's cg_out in one write. The encoder is made when a trace opens;
 * after that nothing here allocates. Writer thread only.
 */
#ifndef CG_COMPACT_OUT_H
#define CG_COMPACT_OUT_H

#include <stdbool.h>
#include <stdint.h>

#include "encoder.h"
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

/*
 * A fresh encoder for a new trace on out; its file header is written at
 * once. A block ends at least once per flush_ms. NULL with *err on failure.
 */
const struct cg_encoder_ops *cg_cout_open(struct cg_out *out, uint64_t flush_ms, bool stats,
					  int *err);
/* In a fork child: the parent's encoder may be mid-call; it is left alone, never used again. */
void cg_cout_forget(void);

#endif

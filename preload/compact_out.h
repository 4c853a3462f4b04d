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
 * The probe's blocks hold 128 KiB of raw items, not the encoder's 4 MiB:
 * about 24000 records on bench/alloc-bench. The writer drains no ring
 * while it compresses a block, and a 1 MiB block took 1 to 2.5 ms, longer
 * than a thread takes to fill its ring: with stacks on, one thread at 10 M
 * operations waited out 70 compressions, 0.25 s of a 1.12 s run; with
 * 128 KiB it runs in 0.89 s. The block, its compressed copy and zstd's
 * tables stay in the cache, and the reader, which decodes a block at a
 * time, reads the trace 23% faster (1.105 -> 0.855 s on 21 M events). The
 * cost: 1.5 to 2.4% more bytes (more frees name an allocation of the block
 * before). 64 KiB blocks were 21% larger and no faster to read
 * (docs/recording-cost.md).
 */
#define CG_PROBE_BLOCK_RAW (1u << 17)

/*
 * A fresh encoder for a new trace on out; its file header is written at
 * once. A block ends at least once per flush_ms. NULL with *err on failure.
 */
const struct cg_encoder_ops *cg_cout_open(struct cg_out *out, uint64_t flush_ms, bool stats,
					  int *err);
/* In a fork child: the parent's encoder may be mid-call; it is left alone, never used again. */
void cg_cout_forget(void);

#endif

/* SPDX-License-Identifier: MIT */
/*
 * Choosing a trace's encoder (encoder.h), once: compact, JSONL, or for
 * tests (CGPROBE_TEST_JSONL_COPY) the tee, which hands every record to
 * the compact encoder and then to a JSONL encoder writing the copy, so
 * the two see the same records in the same order and export to the same
 * bytes. Only the tee knows there is a copy.
 */
#ifndef CG_ENCODING_H
#define CG_ENCODING_H

#include <stdbool.h>
#include <stdint.h>

#include "encoder.h"
#include "out.h"

/*
 * The encoder of a trace on out: compact (out takes the encoding, its
 * file header written at once) or JSONL, and with copy (compact only) the
 * tee that writes the JSONL of the same records to copy too. flush_ms is
 * CGPROBE_FLUSH_MS, stats CGPROBE_STATS. NULL with *err set when the
 * encoder could not be made.
 */
const struct cg_encoder_ops *cg_encoding_open(struct cg_out *out, bool compact,
					      struct cg_out *copy, uint64_t flush_ms, bool stats,
					      int *err);
/* In a fork child: the parent's encoder may be mid-call; it is left alone, never used again. */
void cg_encoding_forget(void);

#endif

/* SPDX-License-Identifier: MIT */
/*
 * The JSONL encoder: encoder.h's operations as candle-graph/trace/6 lines,
 * via the core formatter, into a buffer that goes to the trace's cg_out.
 * The record formatters below are also the compact encoder's, for what its
 * packed forms do not take (TEXT): both encodings see the same lines.
 */
#ifndef CG_FORMAT_H
#define CG_FORMAT_H

#include <stdbool.h>
#include <stdint.h>

#include "buf.h"
#include "encoder.h"
#include "event.h"
#include "out.h"

/* Lines are written out past this; the buffer never grows past CG_FORMAT_BUF_RESERVE. */
#define CG_FORMAT_BUF_FLUSH (1u << 20)
#define CG_FORMAT_BUF_RESERVE (CG_FORMAT_BUF_FLUSH + (256u << 10))

/*
 * A JSONL encoder writing to out; with stats, the writer CPU spent writing
 * and flushing is counted. NULL with *err when its buffer cannot be had.
 */
const struct cg_encoder_ops *cg_jsonl_open(struct cg_out *out, uint64_t flush_ms, bool stats,
					   int *err);

/* A host heap record; e's ticks already converted: ts_ns. */
void cg_format_heap(struct cg_buf *b, const struct cg_event *e, uint64_t ts_ns,
		    const struct cg_enc_stack *st);
/* A span start of thread tid (0: unknown). */
void cg_format_span_start(struct cg_buf *b, const struct cg_event *e, uint64_t ts_ns, uint64_t tid);
void cg_format_span_end(struct cg_buf *b, uint64_t span, uint64_t duration_ns);
/* The annotation API's gradient and device checkpoint records. */
void cg_format_gradient(struct cg_buf *b, const struct cg_event *e);
void cg_format_checkpoint(struct cg_buf *b, const struct cg_event *e, uint64_t ts_ns);
/*
 * A device allocation or free; op overrides the event's op name when set.
 * id, when set, goes on the line as its cgprobe_device_* fields.
 */
void cg_format_device(struct cg_buf *b, const struct cg_event *e, uint64_t ts_ns, uint8_t device,
		      const char *op, const struct cg_device_ident *id,
		      const struct cg_enc_stack *st);
/*
 * A snapshot's alloc record of a block live before recording began, in s1:
 * op malloc on the host, the device source's first op on a device; id as
 * for cg_format_device.
 */
void cg_format_preexisting(struct cg_buf *b, uint64_t ts_ns, uint64_t addr, uint64_t bytes,
			   uint8_t device, uint8_t category, bool vmm, const struct cg_device_ident *id);
/* A device_memory checkpoint, with the failed request when it came from an OOM, and id as above. */
void cg_format_meminfo(struct cg_buf *b, const struct cg_event *e, uint64_t ts_ns,
		       const uint64_t *oom_request, const struct cg_device_ident *id);

#endif

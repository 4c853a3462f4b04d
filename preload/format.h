/* SPDX-License-Identifier: MIT */
/* Events and session records as candle-graph/trace/6 lines, via the core formatter. */
#ifndef CG_FORMAT_H
#define CG_FORMAT_H

#include <stdint.h>

#include "buf.h"
#include "event.h"
#include "record.h"

/*
 * A memory record's stack and modules (docs/stacks.md): the stack id (0:
 * none), its frames on the record that defines it (else NULL), and the
 * modules to carry (NULL: none).
 */
struct cg_format_stack {
	uint64_t id;
	const uint64_t *frames;
	uint32_t n_frames;
	uint32_t n_modules;
	const struct cg_modv *modules;
};

/*
 * e's ticks already converted: ts_ns for the event, start_ns for a span
 * end's start; st (may be NULL) for a heap record.
 */
void cg_format_event(struct cg_buf *b, const struct cg_event *e, uint64_t ts_ns, uint64_t start_ns,
		     const struct cg_format_stack *st);
/* A span start of thread tid (0: unknown); frees the event's strings. */
void cg_format_span_start(struct cg_buf *b, const struct cg_event *e, uint64_t ts_ns, uint64_t tid);
/* The annotation API's gradient and device checkpoint records; each frees its event's blob. */
void cg_format_gradient(struct cg_buf *b, const struct cg_event *e);
void cg_format_checkpoint(struct cg_buf *b, const struct cg_event *e, uint64_t ts_ns);
void cg_format_root_end(struct cg_buf *b, uint64_t duration_ns);
/* A device's identity as a DEV_INFO event brings it, for the device's first record. */
struct cg_device_ident {
	char *strings;        /* "uuid\0name\0", NULL when none is waiting */
	uint64_t total_bytes; /* 0 when unknown */
};

/*
 * A device allocation or free; op overrides the event's op name when set.
 * id, when set, goes on the line as its cgprobe_device_* fields.
 */
void cg_format_device(struct cg_buf *b, const struct cg_event *e, uint64_t ts_ns, uint8_t device,
		      const char *op, const struct cg_device_ident *id,
		      const struct cg_format_stack *st);
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

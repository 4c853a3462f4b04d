/* SPDX-License-Identifier: MIT */
/*
 * The probe's hot output: a host heap memory record written in one pass
 * from fixed pieces. It produces exactly what cg_jsonl_format writes for
 * the same record (device cpu, dtype u8, shape [bytes]); a test holds the
 * two to byte equality. About three times faster, which matters at
 * millions of records per second on the writer thread.
 */
#ifndef CG_JSONL_HEAP_H
#define CG_JSONL_HEAP_H

#include <stdint.h>

#include "buf.h"
#include "cgtrace.h"

struct cg_heap_rec {
	uint64_t timestamp_ns;
	uint64_t addr;          /* tensor_id: 0x and lowercase hex */
	uint64_t span;          /* span_id: s<span> */
	const char *op_name;    /* plain ASCII, no escapes needed */
	uint8_t op_len;         /* strlen(op_name), 0: computed here */
	uint64_t bytes;
	enum cgtrace_action action;
	enum cgtrace_category category;
};

/* Longest line: fixed text plus four u64s, a 16-digit address and an op name of 32 bytes. */
#define CG_HEAP_LINE_MAX 320

void cg_jsonl_format_heap(struct cg_buf *b, const struct cg_heap_rec *r);

#endif

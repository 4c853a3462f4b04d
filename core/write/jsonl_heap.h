/* SPDX-License-Identifier: MIT */
/*
 * The probe's hot output: a host heap memory record written in one pass
 * from fixed pieces. It produces exactly what cg_jsonl_format writes for
 * the same record (device cpu, dtype u8, shape [bytes]); a test holds the
 * two to byte equality. Several times faster, which matters at millions
 * of records per second on the writer thread: every constant piece is
 * copied with fixed-size stores from padded storage, never by length.
 */
#ifndef CG_JSONL_HEAP_H
#define CG_JSONL_HEAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "cgtrace.h"
#include "record.h"

/* The text between span_id's digits and bytes' digits, which depends only on the op. */
#define CG_HEAP_OP_NAME_MAX 24
struct cg_heap_op {
	char text[64]; /* `","op_name":"<name>","device":"cpu","bytes":`, zero padded */
	uint8_t len;
};

/* Fills op for name (plain ASCII, no escapes); false if longer than CG_HEAP_OP_NAME_MAX. */
bool cg_heap_op_init(struct cg_heap_op *op, const char *name);

struct cg_heap_rec {
	uint64_t timestamp_ns;
	uint64_t addr; /* tensor_id: 0x and lowercase hex */
	uint64_t span; /* span_id: s<span> */
	const struct cg_heap_op *op;
	uint64_t bytes;
	enum cgtrace_action action;
	enum cgtrace_category category;
	/*
	 * Stacks and modules (docs/stacks.md), all zero for none. stack: the
	 * allocation's stack id (>= 1; frees carry none). frames: the stack's
	 * frames (1 to CG_STACK_FRAMES_MAX, innermost first) on the first record
	 * naming stack, else NULL; with has_stack_parent, a tree definition's
	 * new frames on stack stack_parent (0: none). modules: cgprobe_modules,
	 * NULL for none. A record with frames or modules is written by
	 * cg_jsonl_format (rare); one with only a stack id stays on the fast
	 * path.
	 */
	uint64_t stack;
	const uint64_t *frames;
	uint32_t n_frames;
	bool has_stack_parent;
	uint64_t stack_parent;
	const struct cg_modv *modules;
	uint32_t n_modules;
	/* cgprobe_py_codes (docs/python-frames.md), NULL for none: on the slow path too. */
	const struct cg_pycodev *py_codes;
	uint32_t n_py_codes;
};

/* Longest line without frames and modules, counting the padding the fixed-size copies may write past it. */
#define CG_HEAP_LINE_MAX 448

/* The most bytes cg_jsonl_format_heap may reserve for r: CG_HEAP_LINE_MAX without frames and modules. */
size_t cg_heap_line_max(const struct cg_heap_rec *r);

void cg_jsonl_format_heap(struct cg_buf *b, const struct cg_heap_rec *r);

#endif

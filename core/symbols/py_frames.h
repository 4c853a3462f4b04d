/* SPDX-License-Identifier: MIT */
/*
 * Python frames resolved (docs/python-frames.md): a frame word names a
 * code object and an instruction; the code objects the trace defined,
 * copied, give its function, file and line.
 */
#ifndef CG_PY_FRAMES_H
#define CG_PY_FRAMES_H

#include <stddef.h>
#include <stdint.h>

#include "arena.h"
#include "cgtrace.h"
#include "u64map.h"
#include "vec.h"

struct cg_py_symbols {
	struct cg_vec codes; /* struct cgtrace_py_code, strings in the symbols' arena */
	struct cg_map by_id; /* code id -> index in codes */
	bool on;             /* given: frames with bit 63 are Python frames */
};

/* Copies n code objects in (strings and tables into a); 0 or -ENOMEM. */
int cg_py_symbols_add(struct cg_py_symbols *p, struct cg_arena *a, const struct cgtrace_py_code *codes,
		      size_t n);
/* The frame of Python frame word addr into f (address and offset set, no module). */
void cg_py_symbols_frame(const struct cg_py_symbols *p, uint64_t addr, struct cgtrace_frame *f);
void cg_py_symbols_free(struct cg_py_symbols *p);

#endif

/* SPDX-License-Identifier: MIT */
/*
 * A document's Python code objects (docs/python-frames.md): those the
 * records' cgprobe_py_codes define, by id, and the rules of the Python
 * frames in a stack's definition.
 */
#ifndef CG_DOC_PYCODES_H
#define CG_DOC_PYCODES_H

#include <stddef.h>
#include <stdint.h>

#include "record.h"

struct cgtrace_doc;

/*
 * Adds the code objects memory record m defines (rec: its index, as
 * cg_doc_stacks_add's), each id once, its line table well formed. 0,
 * -EBADMSG with the message in err, or -ENOMEM.
 */
int cg_doc_py_codes_add(struct cgtrace_doc *d, const struct cg_rec_memory *m, uint64_t rec,
			char *err, size_t errlen);
/*
 * Where the trace has Python frames (its probe's meta tag cgprobe_python
 * is auto or on, or a record defined a code object): the Python frames
 * among n frames name defined code objects, marks are marks. 0 or
 * -EBADMSG. Elsewhere a frame with bit 63 is an address like any other.
 */
int cg_doc_py_frames_check(const struct cgtrace_doc *d, uint64_t stack, const uint64_t *frames,
			   uint32_t n, char *err, size_t errlen);
/* The meta record m: whether its probe says its bit-63 frames are Python frames. */
void cg_doc_py_meta(struct cgtrace_doc *d, const struct cg_rec_meta *m);
/* The record (index) that defined code object i, UINT64_MAX where none are kept. */
uint64_t cg_doc_py_code_rec(const struct cgtrace_doc *d, size_t i);
void cg_doc_py_codes_free(struct cgtrace_doc *d);

#endif

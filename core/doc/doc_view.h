/* SPDX-License-Identifier: MIT */
/* Lookups in a finished document for the analyses, the export and the public accessors. */
#ifndef CG_DOC_VIEW_H
#define CG_DOC_VIEW_H

#include <stddef.h>
#include <stdint.h>

#include "cgtrace.h"

/* Dims of a shape id for a record of `bytes` bytes. */
const uint64_t *cg_doc_shape(const struct cgtrace_doc *d, uint32_t shape, const uint64_t *bytes,
			     size_t *ndim);

/* Shape id of memory record i. */
uint32_t cg_doc_mem_shape(const struct cgtrace_doc *d, size_t i);

/* Index of the span with this string id, or -1. Valid after cg_doc_finish. */
long cg_doc_find_span(const struct cgtrace_doc *d, uint32_t id);

/* The public view of memory record i (strings point into the pool). */
void cg_doc_mem_view(const struct cgtrace_doc *d, size_t i, struct cgtrace_memory *out);

#endif

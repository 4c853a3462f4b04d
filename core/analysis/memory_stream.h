/* SPDX-License-Identifier: MIT */
/* The memory report of a streamed document, from what doc_stream.c kept while reading. */
#ifndef CG_MEMORY_STREAM_H
#define CG_MEMORY_STREAM_H

#include <stdbool.h>

#include "cgtrace.h"

/* As cg_memory_analyze, for a document read with CGTRACE_READ_STREAM_MEMORY. */
int cg_memory_stream_report(const struct cgtrace_doc *d, struct cgtrace_memory_report **out,
			    bool breakdown);

#endif

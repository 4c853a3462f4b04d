/* SPDX-License-Identifier: MIT */
/*
 * Looking into a probe's trace read back as a document: what the suites
 * that hold a program's records against its lines (test-preload,
 * test-cuda) ask of every trace.
 */
#ifndef CG_TEST_TRACE_DOC_H
#define CG_TEST_TRACE_DOC_H

#include <stdbool.h>
#include <stddef.h>

#include "cgtrace.h"

/* The span of doc with this id in *out; false when there is none. */
bool trace_find_span(const struct cgtrace_doc *doc, const char *id, struct cgtrace_span *out);

size_t trace_n_memory(const struct cgtrace_doc *doc);
/* Memory record i of doc. */
struct cgtrace_memory trace_memory(const struct cgtrace_doc *doc, size_t i);

/* "0x" and lowercase hex without leading zeros, at most 16 digits: an address as %p prints it. */
bool trace_is_address(const char *s);

#endif

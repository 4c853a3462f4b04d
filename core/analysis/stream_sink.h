/* SPDX-License-Identifier: MIT */
/*
 * The table of operations a streamed document calls for each memory record
 * and checkpoint (doc_sink.h), filled once: each document read streamed
 * opens a memory analysis of its own (memory_stream.h) with it, and feeds
 * it through the reorder window (stream_window.h).
 */
#ifndef CG_STREAM_SINK_H
#define CG_STREAM_SINK_H

#include "doc_sink.h"

struct cgtrace_doc;
struct cg_stream;

/* Opened with a const struct cg_stream_cfg * (NULL: the report alone). */
extern const struct cg_doc_sink_ops cg_stream_sink;
/* The analysis a streamed document fed; NULL for a full document. */
struct cg_stream *cg_stream_of(const struct cgtrace_doc *d);

#endif

/* SPDX-License-Identifier: MIT */
/*
 * The memory analysis's reorder window: a streamed document's memory
 * records wait here until their analysis order is sure, so that traces
 * merged from several threads, each in time order but interleaved by
 * block, apply in order without a second read.
 */
#ifndef CG_STREAM_WINDOW_H
#define CG_STREAM_WINDOW_H

#include <stdint.h>

#include "doc_sink.h"

struct cg_stream;

/*
 * Records held before they are applied (CG_STREAM_WINDOW, memory_stream.h),
 * as new analyses get it; tests shrink it to 0: records held only while
 * their timestamp is the latest.
 */
extern uint32_t cg_stream_window;

/* s's window, before its first record: cg_stream_window records long. */
void cg_window_init(struct cg_stream *s);
/*
 * A memory record handed on in file order: into the window, and what may
 * go applied. 0, -ECANCELED when it goes back in time past the window
 * (s->out_of_order set) or a callback stopped the read, -ENOMEM.
 */
int cg_window_memory(struct cg_stream *s, const struct cg_sink_mem *m);
/*
 * The trace promises memory records in timestamp order: each is applied as
 * soon as a later one comes (a promise broken still gives out_of_order).
 */
void cg_window_in_order(struct cg_stream *s);
/* After the last record: every record still held applied, in order. */
int cg_window_drain(struct cg_stream *s);
/* The records still held, freed. */
void cg_window_free(struct cg_stream *s);

#endif

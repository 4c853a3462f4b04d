/* SPDX-License-Identifier: MIT */
/*
 * The memory analysis's span events (docs/steps.md): queued as the
 * document meets them, applied as the analysis reaches their time, before
 * the records of that time: the clock of updates and phases moves, a
 * parameter mark turns the marked memory live then into parameter, and a
 * view's hook is told.
 */
#ifndef CG_STREAM_SPANS_H
#define CG_STREAM_SPANS_H

#include <stdbool.h>
#include <stdint.h>

#include "memory_stream.h"

struct cg_span;
struct cgtrace_doc;

/*
 * A span start or end read (a streamed document's, in file order): queued
 * until the analysis reaches its time. One whose time has passed already
 * cannot be placed: the trace is read again in full (out_of_order). 0 or
 * -ENOMEM.
 */
int cg_stream_span(struct cg_stream *s, const struct cg_span *sp, bool end);
/* A full document's span events, all queued before its replay; 0 or -ENOMEM. */
int cg_stream_spans_of(struct cg_stream *s, const struct cgtrace_doc *d);
/* The events up to time ts applied; 0, -ENOMEM, or -ECANCELED when a hook stopped. */
int cg_stream_drain_spans(struct cg_stream *s, uint64_t ts);
/* Whether an alloc's memory was marked as parameters (s->params has ranges). */
bool cg_stream_rec_in_params(const struct cg_stream *s, const struct cg_stream_rec *g,
			     bool pooled);
/*
 * An entry's category at the global peak (dev: at its device's peak):
 * one marked as parameters since was another then.
 */
uint8_t cg_stream_entry_peak_cat(const struct cg_stream *s, uint32_t i, bool dev);

#endif

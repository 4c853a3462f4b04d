/* SPDX-License-Identifier: MIT */
/*
 * The span starts and ends the memory analysis places in time
 * (docs/steps.md): those of updates (cgprobe_update), phases (a step, or
 * cgprobe_phase) and parameter marks (cgprobe_parameters). A streamed
 * document meets them in file order, ahead of the memory records its
 * reorder window holds; a queue ordered by time hands them back as the
 * analysis reaches their time, so each lands between the right records.
 */
#ifndef CG_SPAN_EVENTS_H
#define CG_SPAN_EVENTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct cgtrace_doc;
struct cg_span;

/* A phase: a step (1 forward, 2 backward, 3 optimizer) or a cgprobe_phase's string id + this. */
#define CG_PHASE_NAMED 4u

struct cg_span_ev {
	uint64_t ts;
	uint64_t seq;    /* arrival: ties keep file order */
	uint64_t update; /* cgprobe_update; 0: none */
	uint32_t span;   /* the span's id (string id): an end finds its start */
	uint32_t phase;  /* 0: none */
	uint32_t mark;   /* cgprobe_parameters: index + 1 in the document's marks; 0: none */
	bool end;
};

/* The event of sp's start or end, false when the analysis has no use for it. */
bool cg_span_ev_of(const struct cg_span *sp, bool end, struct cg_span_ev *out);
/* A phase's name: the step's, or the cgprobe_phase string; NULL for 0. */
const char *cg_phase_name(const struct cgtrace_doc *d, uint32_t phase);

/* A binary heap by (ts, seq). */
struct cg_span_queue {
	struct cg_span_ev *ev;
	size_t n, cap;
	uint64_t seq;
};

int cg_span_queue_push(struct cg_span_queue *q, const struct cg_span_ev *ev);
/* The earliest event; the queue is not empty. */
static inline const struct cg_span_ev *cg_span_queue_top(const struct cg_span_queue *q)
{
	return &q->ev[0];
}
void cg_span_queue_pop(struct cg_span_queue *q);
void cg_span_queue_free(struct cg_span_queue *q);
/* Every span of a full document, starts and ends, queued; 0 or -ENOMEM. */
int cg_span_queue_doc(struct cg_span_queue *q, const struct cgtrace_doc *d);

#endif

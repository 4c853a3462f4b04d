/* SPDX-License-Identifier: MIT */
/* Span events in time order (span_events.h). */
#include "span_events.h"

#include <errno.h>
#include <stdlib.h>

#include "cgtrace.h"
#include "doc.h"
#include "sat.h"

bool cg_span_ev_of(const struct cg_span *sp, bool end, struct cg_span_ev *out)
{
	uint32_t phase = 0;
	if (sp->step >= CGTRACE_STEP_FORWARD && sp->step <= CGTRACE_STEP_OPTIMIZER)
		phase = sp->step;
	else if (sp->phase && sp->phase <= UINT32_MAX - CG_PHASE_NAMED)
		phase = sp->phase + CG_PHASE_NAMED;
	/* A mark acts at its start; its end says nothing. */
	uint32_t mark = end ? 0 : sp->mark;
	if (!phase && !sp->update && !mark)
		return false;
	*out = (struct cg_span_ev){
		.ts = end ? cg_sat_add(sp->start_ns, sp->duration_ns) : sp->start_ns,
		.update = sp->update,
		.span = sp->id,
		.phase = phase,
		.mark = mark,
		.end = end,
	};
	return true;
}

const char *cg_phase_name(const struct cgtrace_doc *d, uint32_t phase)
{
	if (phase >= CG_PHASE_NAMED)
		return cg_doc_str(d, phase - CG_PHASE_NAMED);
	return phase ? cgtrace_step_name((enum cgtrace_step)phase) : NULL;
}

static bool before(const struct cg_span_ev *a, const struct cg_span_ev *b)
{
	return a->ts != b->ts ? a->ts < b->ts : a->seq < b->seq;
}

int cg_span_queue_push(struct cg_span_queue *q, const struct cg_span_ev *ev)
{
	if (q->n == q->cap) {
		size_t cap = q->cap ? q->cap * 2 : 64;
		struct cg_span_ev *p = realloc(q->ev, cap * sizeof(*p));
		if (!p)
			return -ENOMEM;
		q->ev = p;
		q->cap = cap;
	}
	struct cg_span_ev x = *ev;
	x.seq = q->seq++;
	size_t i = q->n++;
	/* Events come nearly in time order: the sift usually stops at once. */
	while (i > 0 && before(&x, &q->ev[(i - 1) / 2])) {
		q->ev[i] = q->ev[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	q->ev[i] = x;
	return 0;
}

void cg_span_queue_pop(struct cg_span_queue *q)
{
	struct cg_span_ev last = q->ev[--q->n];
	size_t i = 0;
	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= q->n)
			break;
		if (c + 1 < q->n && before(&q->ev[c + 1], &q->ev[c]))
			c++;
		if (!before(&q->ev[c], &last))
			break;
		q->ev[i] = q->ev[c];
		i = c;
	}
	if (q->n)
		q->ev[i] = last;
}

void cg_span_queue_free(struct cg_span_queue *q)
{
	free(q->ev);
	*q = (struct cg_span_queue){0};
}

int cg_span_queue_doc(struct cg_span_queue *q, const struct cgtrace_doc *d)
{
	for (size_t i = 0; i < d->spans.len; i++) {
		const struct cg_span *sp = CG_VEC_AT(&d->spans, struct cg_span, i);
		struct cg_span_ev ev;
		if (cg_span_ev_of(sp, false, &ev) && cg_span_queue_push(q, &ev) < 0)
			return -ENOMEM;
		if (sp->closed && cg_span_ev_of(sp, true, &ev) && cg_span_queue_push(q, &ev) < 0)
			return -ENOMEM;
	}
	return 0;
}

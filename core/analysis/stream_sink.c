/* SPDX-License-Identifier: MIT */
/* The memory analysis behind a streamed document's sink (stream_sink.h). */
#include "stream_sink.h"

#include "doc.h"
#include "memory_stream.h"
#include "stream_spans.h"
#include "stream_window.h"

static int sink_open(const void *cfg, const struct cgtrace_doc *d, void **state)
{
	struct cg_stream *s;
	int r = cg_stream_new(d, cfg, &s);
	if (r < 0)
		return r;
	cg_window_init(s);
	*state = s;
	return 0;
}

static int sink_memory(void *state, const struct cg_sink_mem *m)
{
	return cg_window_memory(state, m);
}

static int sink_checkpoint(void *state, uint16_t dev, const struct cg_rec_device_memory *x)
{
	return cg_stream_checkpoint(state, dev, x);
}

static int sink_span(void *state, const struct cg_span *sp, bool end)
{
	return cg_stream_span(state, sp, end);
}

static void sink_in_order(void *state)
{
	cg_window_in_order(state);
}

static int sink_finish(void *state)
{
	int r = cg_window_drain(state);
	return r < 0 ? r : cg_stream_finish(state);
}

static bool sink_out_of_order(const void *state)
{
	return ((const struct cg_stream *)state)->out_of_order;
}

static void sink_free(void *state)
{
	if (state)
		cg_window_free(state);
	cg_stream_free(state);
}

const struct cg_doc_sink_ops cg_stream_sink = {
	.open = sink_open,
	.memory = sink_memory,
	.checkpoint = sink_checkpoint,
	.span = sink_span,
	.in_order = sink_in_order,
	.finish = sink_finish,
	.out_of_order = sink_out_of_order,
	.free = sink_free,
};

struct cg_stream *cg_stream_of(const struct cgtrace_doc *d)
{
	return d->sink.ops == &cg_stream_sink ? d->sink.state : NULL;
}

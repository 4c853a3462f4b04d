/* SPDX-License-Identifier: MIT */
/*
 * Where a streamed document's memory records go (CGTRACE_READ_STREAM_MEMORY).
 * The document interns a record's strings, class and shape as for a full
 * one, then hands the record on instead of keeping it: to a table of
 * operations that whoever analyses the records fills once
 * (core/analysis/memory_stream.c), with the state it made for this
 * document. The document knows nothing of what is done with them.
 */
#ifndef CG_DOC_SINK_H
#define CG_DOC_SINK_H

#include <stdbool.h>
#include <stdint.h>

#include "record.h"

struct cgtrace_doc;
struct cg_span;

/* A memory record handed on: interned, its tensor id as it was read. */
struct cg_sink_mem {
	uint64_t ts, bytes;
	uint64_t index;  /* among the memory records, in file order */
	uint64_t stack;  /* the record's cgprobe_stack, 0: none */
	uint64_t addr;   /* the tensor id's value when id.p is NULL: an address in canonical hex */
	struct cg_sv id; /* the tensor id as written; p NULL when addr is it */
	uint32_t cls;    /* its memory class */
	uint32_t shape;  /* its shape id */
	uint8_t action;
};

struct cg_doc_sink_ops {
	/* The state for document d, from what the reader was given (cfg, NULL: none). */
	int (*open)(const void *cfg, const struct cgtrace_doc *d, void **state);
	/* Each memory record, in file order: 0, -ECANCELED to stop the read, or a -errno. */
	int (*memory)(void *state, const struct cg_sink_mem *m);
	/* Each device_memory record, in file order, with its device number; as memory. */
	int (*checkpoint)(void *state, uint16_t dev, const struct cg_rec_device_memory *x);
	/*
	 * Each span_start (end false) and span_end (end true, the span closed),
	 * in file order; the span stays where it is until the next span_start.
	 * NULL: not wanted. As memory.
	 */
	int (*span)(void *state, const struct cg_span *s, bool end);
	/* The trace promises its memory records in timestamp order. */
	void (*in_order)(void *state);
	/* After the last record, while the document's build tables still stand. */
	int (*finish)(void *state);
	/* After a read that failed: whether it stopped at a record going back in time. */
	bool (*out_of_order)(const void *state);
	void (*free)(void *state);
};

struct cg_doc_sink {
	const struct cg_doc_sink_ops *ops; /* NULL: a full document, which keeps its records */
	void *state;
};

#endif

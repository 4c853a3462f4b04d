/* SPDX-License-Identifier: MIT */
/*
 * Reading a document: one read of a source, streamed or full; a streamed
 * one that meets a memory record going back in time read again in full.
 * A streamed read's document hands its memory records to the sink it is
 * given (doc_sink.h): the reader knows no analysis.
 */
#ifndef CG_TRACE_READ_H
#define CG_TRACE_READ_H

#include <stddef.h>

#include "cgtrace.h"
#include "doc_sink.h"
#include "read_twice.h"

/* One read: where its messages go, its options and flags, where the document goes. */
struct cg_read_req {
	const char *name;
	const struct cgtrace_read_options *opts; /* may be NULL */
	unsigned flags;
	struct cgtrace_doc **out;
	char *err;
	size_t errlen;
	/*
	 * CGTRACE_READ_STREAM_MEMORY: what each streamed document's sink is
	 * opened with; without a sink the read is a full one.
	 */
	const struct cg_doc_sink_ops *sink;
	const void *sink_cfg;
};

/* One read of fd; a streamed one stops with -ECANCELED at a record going back in time. */
int cg_read_fd(int fd, const struct cg_read_req *q);
/*
 * The first read of a source read twice: streamed as q says, read again in
 * full when its memory records go back in time (saying so, once); a source
 * that cannot be read twice is read once, in full.
 */
int cg_read_first(struct cg_twice *t, const struct cg_read_req *q);
/* The source read again from its start, as q says. */
int cg_read_again(struct cg_twice *t, const struct cg_read_req *q);
/* path ("-": standard input) read as q says, q->name set from it; a streamed read as above. */
int cg_read_path(const char *path, const struct cg_read_req *q);
/* The same for a trace in memory, named q->name. */
int cg_read_mem(const void *data, size_t len, const struct cg_read_req *q);

#endif

/* SPDX-License-Identifier: MIT */
/* A document's life: made empty, filled by doc_build.c, finished, freed (cgtrace_doc_free). */
#ifndef CG_DOC_LIFE_H
#define CG_DOC_LIFE_H

#include <stdbool.h>
#include <stddef.h>

#include "doc_sink.h"

struct cgtrace_doc;

/* An empty document, ready for doc_build.c; NULL when out of memory. */
struct cgtrace_doc *cg_doc_new(void);
/*
 * The same for a streamed document, whose memory records go to the sink
 * that ops opens from cfg (doc_sink.h).
 */
struct cgtrace_doc *cg_doc_new_streamed(const struct cg_doc_sink_ops *ops, const void *cfg);
/* After a failed streamed read: whether it stopped at a memory record that went back in time. */
bool cg_doc_out_of_order(const struct cgtrace_doc *d);
/*
 * After the last record: the sink's end, then checks for meta, sorts spans
 * and tags, hands out op inputs as pointers. 0, or a negative errno with
 * the message in err.
 */
int cg_doc_finish(struct cgtrace_doc *d, char *err, size_t errlen);

#endif

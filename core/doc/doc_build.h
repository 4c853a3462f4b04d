/* SPDX-License-Identifier: MIT */
/* Filling a document record by record; the reader's side of the document. */
#ifndef CG_DOC_BUILD_H
#define CG_DOC_BUILD_H

#include <stddef.h>
#include <stdint.h>

#include "record.h"

struct cgtrace_doc;
/* Lookup tables that live while a document is built. */
struct cg_build;

struct cg_build *cg_build_new(void);
void cg_build_free(struct cg_build *b);

/*
 * Adds one record. 0, or a negative errno with the message (without the
 * position) in err: -EBADMSG for a broken rule, -ENOMEM & co. otherwise.
 */
int cg_doc_add(struct cgtrace_doc *d, const struct cg_rec *r, char *err, size_t errlen);

/*
 * The memory class of m (interned on first sight), for a caller that knows
 * which of its records share one: 0 or a negative errno.
 */
int cg_build_mem_class(struct cgtrace_doc *d, const struct cg_rec_memory *m, uint32_t *cls);

/*
 * The step of the span with this string id while the document is built
 * (enum cgtrace_step), or -1 when no span_start named it yet.
 */
int cg_build_span_step(const struct cgtrace_doc *d, uint32_t span_id);

#endif

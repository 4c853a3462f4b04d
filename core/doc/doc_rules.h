/* SPDX-License-Identifier: MIT */
/*
 * The format's rules a document enforces while it is built, each with its
 * message. Every function returns 0 when the rule holds, else -EBADMSG with
 * the message (without position: the reader adds "PATH:LINE: ") in err.
 */
#ifndef CG_DOC_RULES_H
#define CG_DOC_RULES_H

#include <stdbool.h>
#include <stddef.h>

#include "record.h"

struct cg_span;
struct cgtrace_doc;

/* One meta record, first of all records, with the supported schema. */
int cg_rule_meta(bool has_meta, size_t records_before, const struct cg_rec_meta *m, char *err,
		 size_t errlen);
/* Called for a span_start whose id is taken already: always fails. */
int cg_rule_span_start(const struct cg_rec_span_start *s, char *err, size_t errlen);
/* A span_end closes a known span (sp, NULL when unknown) that is still open. */
/* A span's training fields (docs/steps.md): an update from 1, a phase named, whole ranges. */
int cg_rule_span_training(const struct cg_rec_span_start *s, char *err, size_t errlen);
int cg_rule_span_end(const struct cg_rec_span_end *e, const struct cg_span *sp, char *err,
		     size_t errlen);
/*
 * The stack fields of one memory record (docs/stacks.md): frames only
 * with a stack id, no stack on a free, frames once per id (defined: the
 * id has frames already), no id without them.
 */
int cg_rule_stack(const struct cg_rec_memory *m, bool defined, char *err, size_t errlen);
/* Called for a kind the builder does not know: always fails. */
int cg_rule_kind(char *err, size_t errlen);
/* After the last record: a meta record was seen. */
int cg_rule_finish(const struct cgtrace_doc *d, char *err, size_t errlen);
/*
 * A building step's negative errno as the reader reports it (a reader limit
 * for -E2BIG, strerror otherwise), returned unchanged; 0 stays 0.
 */
int cg_rule_errno(int ret, char *err, size_t errlen);

#endif

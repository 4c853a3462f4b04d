/* SPDX-License-Identifier: MIT */
/* The extension fields and kinds a trace uses, for cgtrace validate --strict. */
#ifndef CG_DOC_EXT_H
#define CG_DOC_EXT_H

#include <stdbool.h>
#include <stdint.h>

#include "record.h"

struct cgtrace_doc;

/* Counts r's extensions (schema.h), first seen at where (a line, or a record number). 0 or -ENOMEM.
 */
int cg_doc_note_ext(struct cgtrace_doc *d, const struct cg_rec *r, uint64_t where, bool numbered);

#endif

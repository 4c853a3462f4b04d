/* SPDX-License-Identifier: MIT */
/* Reading the compact encoding: its records into the reader's checks and the document. */
#ifndef CG_READ_COMPACT_H
#define CG_READ_COMPACT_H

#include "compact_dec.h"
#include "parse.h"
#include "read_apply.h"

/*
 * The next record: 1 with *rec (a packed one, or a TEXT item parsed by
 * the line parsers into *scratch), 0 at the end (a cut file warned as
 * such), or a negative errno with "NAME: record N: message" in ctx->err.
 * ctx->line_no is the record's number.
 */
int cg_read_compact_next(struct cg_read_ctx *ctx, struct cg_cdec *d, struct cg_parse *ref,
			 struct cg_rec *scratch, const struct cg_rec **rec);
/* Applies every record to ctx->doc: 0 or a negative errno with ctx->err set. */
int cg_read_compact(struct cg_read_ctx *ctx, struct cg_cdec *d);

#endif

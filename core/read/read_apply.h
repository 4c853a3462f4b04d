/* SPDX-License-Identifier: MIT */
/* Applying one line to the document being read, and the reader's messages. */
#ifndef CG_READ_APPLY_H
#define CG_READ_APPLY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cgtrace.h"
#include "parse.h"
#include "doc_build.h"
#include "record.h"

struct cg_read_ctx {
	const char *name;
	const struct cgtrace_read_options *opts;
	struct cgtrace_doc *doc;
	char *err; /* the caller's: the error, or a warning when opts has no callback */
	size_t errlen;
	uint64_t line_no; /* of the line being applied; of the record for compact input */
	bool records;     /* compact input: messages name "record N", not line N */
};

/*
 * Parses one non-blank line (fast: the fast parser's record, or NULL to run
 * the reference parser into *scratch). 0 with *rec, 1 when a cut-off last
 * line ended the trace (warned, ctx->doc->truncated set), or a negative
 * errno with ctx->err set. Both readers share it, so they report alike.
 */
int cg_read_parse(struct cg_read_ctx *ctx, struct cg_parse *ref, const char *line, size_t len,
		  bool terminated, const struct cg_rec *fast, struct cg_rec *scratch,
		  const struct cg_rec **rec);
/*
 * Formats "NAME:LINE: msg" (or "NAME: record N: msg") for the line being
 * read into ctx->err and returns ret.
 */
int cg_read_fail(struct cg_read_ctx *ctx, int ret, const char *msg);
/*
 * Applies one non-blank line: fast is the fast parser's record, or NULL to
 * run the reference parser. 0 to go on, 1 when a cut-off last line ended
 * the trace, or a negative errno with ctx->err set.
 */
int cg_read_apply(struct cg_read_ctx *ctx, struct cg_parse *ref, const char *line, size_t len,
		  bool terminated, const struct cg_rec *fast);
/* Adds a parsed record to the document: 0, or a negative errno with ctx->err set. */
int cg_read_apply_rec(struct cg_read_ctx *ctx, const struct cg_rec *rec);
/*
 * Adds a packed memory record of the compact decoder, of which pk holds
 * what a streamed document needs (rec is read for a class not seen yet),
 * else as cg_read_apply_rec. full: rec holds the whole record, else only
 * pk is this record (cg_cdec_lean), its stack id included; frames and
 * modules ride only on a full one. 0, or a negative errno with ctx->err set.
 */
int cg_read_apply_packed(struct cg_read_ctx *ctx, const struct cg_rec *rec,
			 const struct cg_doc_packed *pk, bool full);
/* Warns "NAME: trace truncated after N records" and marks the document truncated. */
void cg_read_truncated_after(struct cg_read_ctx *ctx, uint64_t records);
/* Formats a read error of the source into ctx->err and returns it. */
int cg_read_io_error(struct cg_read_ctx *ctx, int err);
#endif

/* SPDX-License-Identifier: MIT */
/*
 * A compact trace reads as its JSONL would: TEXT items go through the line
 * parsers (fast, else reference) and packed records straight to the same
 * rules, with "record N" where a JSONL trace names its line.
 */
#include "read_compact.h"

#include <stdio.h>

#include "parse_fast.h"

int cg_read_compact_next(struct cg_read_ctx *ctx, struct cg_cdec *d, struct cg_parse *ref,
			 struct cg_rec *scratch, const struct cg_rec **rec)
{
	struct cg_cdec_out out;
	int ret = cg_cdec_next(d, &out);
	ctx->records = true;
	ctx->line_no = cg_cdec_records(d);
	if (ret < 0) {
		snprintf(ctx->err, ctx->errlen, "%s: %s", ctx->name, cg_cdec_error(d));
		return ret;
	}
	if (ret == CG_CDEC_END) {
		if (cg_cdec_truncated(d))
			cg_read_truncated_after(ctx, cg_cdec_records(d));
		return 0;
	}
	if (ret == CG_CDEC_REC) {
		*rec = out.rec;
		return 1;
	}
	cg_arena_reset(&ref->arena);
	const struct cg_rec *fast = NULL;
	if (cg_parse_fast(ref, out.line, out.len, scratch) == 0)
		fast = scratch;
	ret = cg_read_parse(ctx, ref, out.line, out.len, true, fast, scratch, rec);
	return ret < 0 ? ret : 1;
}

int cg_read_compact(struct cg_read_ctx *ctx, struct cg_cdec *d)
{
	struct cg_parse ref;
	struct cg_rec scratch;
	const struct cg_rec *rec;
	cg_parse_init(&ref);
	int ret;
	while ((ret = cg_read_compact_next(ctx, d, &ref, &scratch, &rec)) == 1)
		if ((ret = cg_read_apply_rec(ctx, rec)) < 0)
			break;
	cg_parse_fini(&ref);
	return ret;
}

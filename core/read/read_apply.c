/* SPDX-License-Identifier: MIT */
/*
 * One line of the reader: parsed (unless the fast parser did already) and
 * added to the document, or reported as "PATH:LINE: message". A last line
 * cut short without a newline is what a killed writer leaves behind: it is
 * reported and ends the trace.
 */
#include "read_apply.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "doc.h"
#include "doc_build.h"
#include "doc_ext.h"
#include "doc_rules.h"
#include "doc_stacks.h"
#include "parse_ref.h"

/* The library prints nothing: a warning goes to the callback, else into the caller's err. */
static void warn(struct cg_read_ctx *ctx, const char *msg)
{
	if (ctx->opts && ctx->opts->warn)
		ctx->opts->warn(ctx->opts->user, msg);
	else
		snprintf(ctx->err, ctx->errlen, "%s", msg);
}

int cg_read_parse(struct cg_read_ctx *ctx, struct cg_parse *ref, const char *line, size_t len,
		  bool terminated, const struct cg_rec *fast, struct cg_rec *scratch,
		  const struct cg_rec **rec)
{
	int ret = 0;
	if (!fast) {
		cg_arena_reset(&ref->arena);
		ret = cg_parse_ref(ref, line, len, scratch);
		fast = scratch;
	}
	if (ret == -EBADMSG && !terminated && ref->syntax) {
		char msg[512];
		snprintf(msg, sizeof(msg), "%s:%llu: trace truncated, incomplete last record ignored",
			 ctx->name, (unsigned long long)ctx->line_no);
		warn(ctx, msg);
		ctx->doc->truncated = true;
		return 1;
	}
	if (ret < 0)
		return cg_read_fail(ctx, ret, ret == -ENOMEM ? "out of memory" : ref->err);
	*rec = fast;
	return 0;
}

int cg_read_fail(struct cg_read_ctx *ctx, int ret, const char *msg)
{
	snprintf(ctx->err, ctx->errlen, ctx->records ? "%s: record %llu: %s" : "%s:%llu: %s",
		 ctx->name, (unsigned long long)ctx->line_no, msg);
	return ret;
}

void cg_read_truncated_after(struct cg_read_ctx *ctx, uint64_t records)
{
	char msg[512];
	snprintf(msg, sizeof(msg), "%s: trace truncated after %llu records", ctx->name,
		 (unsigned long long)records);
	warn(ctx, msg);
	ctx->doc->truncated = true;
	ctx->doc->cut_in_block = true;
	ctx->doc->cut_records = records;
}

int cg_read_apply(struct cg_read_ctx *ctx, struct cg_parse *ref, const char *line, size_t len,
		  bool terminated, const struct cg_rec *fast)
{
	struct cg_rec scratch;
	const struct cg_rec *rec;
	int ret = cg_read_parse(ctx, ref, line, len, terminated, fast, &scratch, &rec);
	return ret != 0 ? ret : cg_read_apply_rec(ctx, rec);
}

/* CGTRACE_READ_EXTENSIONS: the record's extensions counted. */
static int note_ext(struct cg_read_ctx *ctx, const struct cg_rec *rec)
{
	if (!ctx->doc->track_ext)
		return 0;
	int ret = cg_doc_note_ext(ctx->doc, rec, ctx->line_no, ctx->records);
	return ret < 0 ? cg_read_fail(ctx, ret, "out of memory") : 0;
}

int cg_read_apply_rec(struct cg_read_ctx *ctx, const struct cg_rec *rec)
{
	char msg[320];
	if (note_ext(ctx, rec) < 0)
		return -ENOMEM;
	int ret = cg_doc_add(ctx->doc, rec, msg, sizeof(msg));
	return ret < 0 ? cg_read_fail(ctx, ret, msg) : 0;
}

int cg_read_apply_packed(struct cg_read_ctx *ctx, const struct cg_rec *rec,
			 const struct cg_doc_packed *pk, bool full)
{
	if (!cg_doc_streamed(ctx->doc))
		return cg_read_apply_rec(ctx, rec);
	char msg[320];
	int ret = 0;
	if (full && note_ext(ctx, rec) < 0)
		return -ENOMEM;
	/*
	 * The stack rules and tables: off the record when whole; a gist (no
	 * frames, no modules) only needs its alloc's stack defined, and the
	 * rules run on a record built from it only to word what is wrong.
	 */
	bool check = full ? cg_doc_stacks_in(&rec->u.memory)
			  : pk->stack && (pk->action != CGTRACE_ALLOC || pk->def_frames ||
					  !cg_doc_stack_known(ctx->doc, pk->stack));
	if (check) {
		struct cg_rec_memory gist = {.timestamp_ns = pk->ts,
					     .action = pk->action,
					     .stack = pk->stack,
					     .n_stack_frames = pk->def_frames,
					     .has_stack_parent = pk->def_tree,
					     .cgprobe_stack_parent = pk->def_parent};
		const struct cg_rec_memory *m = full ? &rec->u.memory : &gist;
		uint32_t stack;
		ret = cg_doc_stacks_add(ctx->doc, m, UINT64_MAX, &stack, msg, sizeof(msg));
		if (ret == -EBADMSG)
			return cg_read_fail(ctx, ret, msg);
	}
	if (ret == 0)
		ret = cg_doc_add_packed(ctx->doc, &rec->u.memory, pk);
	if (ret == 0)
		return 0;
	return cg_read_fail(ctx, cg_rule_errno(ret, msg, sizeof(msg)), msg);
}

int cg_read_io_error(struct cg_read_ctx *ctx, int err)
{
	snprintf(ctx->err, ctx->errlen, "%s: %s", ctx->name, strerror(-err));
	return err;
}

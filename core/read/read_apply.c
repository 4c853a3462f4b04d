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
#include "parse_ref.h"

/* The library prints nothing: a warning goes to the callback, else into the caller's err. */
static void warn(struct cg_read_ctx *ctx, const char *msg)
{
	if (ctx->opts && ctx->opts->warn)
		ctx->opts->warn(ctx->opts->user, msg);
	else
		snprintf(ctx->err, ctx->errlen, "%s", msg);
}

int cg_read_apply(struct cg_read_ctx *ctx, struct cg_parse *ref, const char *line, size_t len,
		  bool terminated, const struct cg_rec *fast)
{
	struct cg_rec rec;
	int ret = 0;
	if (!fast) {
		cg_arena_reset(&ref->arena);
		ret = cg_parse_ref(ref, line, len, &rec);
		fast = &rec;
	}
	if (ret == -EBADMSG && !terminated && ref->syntax) {
		char msg[512];
		snprintf(msg, sizeof(msg), "%s:%llu: trace truncated, incomplete last record ignored",
			 ctx->name, (unsigned long long)ctx->line_no);
		warn(ctx, msg);
		ctx->doc->truncated = true;
		return 1;
	}
	char msg[sizeof(ref->err)];
	if (ret == 0) {
		ret = cg_doc_add(ctx->doc, fast, msg, sizeof(msg));
	} else {
		snprintf(msg, sizeof(msg), "%s", ret == -ENOMEM ? "out of memory" : ref->err);
	}
	if (ret < 0)
		snprintf(ctx->err, ctx->errlen, "%s:%llu: %s", ctx->name,
			 (unsigned long long)ctx->line_no, msg);
	return ret;
}

int cg_read_io_error(struct cg_read_ctx *ctx, int err)
{
	snprintf(ctx->err, ctx->errlen, "%s: %s", ctx->name, strerror(-err));
	return err;
}

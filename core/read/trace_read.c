/* SPDX-License-Identifier: MIT */
/*
 * The reader: lines (or compact records) -> records -> document, stopping
 * at the first broken rule with "PATH:LINE: message" (read_apply.c handles
 * each line) or "PATH: record N: message" (read_compact.c).
 *
 * A streamed read (CGTRACE_READ_STREAM_MEMORY) that meets a memory record
 * going back in time starts again with a full document: a regular file is
 * read again from where it began, anything else (stdin, a pipe) from the
 * spool a thread copied it to as the first read went on (read_twice.c).
 */
#include "trace_read.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cgtrace.h"
#include "doc.h"
#include "doc_life.h"
#include "export.h"
#include "read_apply.h"
#include "read_compact.h"
#include "read_pipe.h"
#include "trace_src.h"

/* Whether q's document is to be streamed: it asks to be, and has a sink to hand records to. */
static bool streamed(const struct cg_read_req *q)
{
	return (q->flags & CGTRACE_READ_STREAM_MEMORY) && q->sink;
}

static int read_source(struct cg_src *src, const struct cg_read_req *q)
{
	struct cgtrace_doc *doc =
		streamed(q) ? cg_doc_new_streamed(q->sink, q->sink_cfg) : cg_doc_new();
	if (!doc) {
		snprintf(q->err, q->errlen, "%s: out of memory", q->name);
		return -ENOMEM;
	}
	doc->track_ext = q->flags & CGTRACE_READ_EXTENSIONS;
	doc->stacks_skip = q->flags & CGTRACE_READ_SKIP_STACKS;
	doc->stacks_light = doc->stacks_skip || (q->flags & CGTRACE_READ_NO_STACKS);
	struct cg_read_ctx ctx = {
		.name = q->name, .opts = q->opts, .doc = doc, .err = q->err, .errlen = q->errlen};
	int ret = src->cdec ? cg_read_compact(&ctx, src->cdec) : cg_read_pipe(&ctx, &src->lines);
	if (ret < 0 && !src->cdec && src->lines.err[0])
		snprintf(q->err, q->errlen, "%s: %s", q->name, src->lines.err);
	if (ret == 0) {
		char msg[256];
		ret = cg_doc_finish(doc, msg, sizeof(msg));
		if (ret < 0)
			snprintf(q->err, q->errlen, "%s: %s", q->name, msg);
	}
	if (ret < 0) {
		/* Only the stream's own stop is told apart: the caller reads again in full. */
		if (cg_doc_out_of_order(doc))
			ret = -ECANCELED;
		cgtrace_doc_free(doc);
		return ret;
	}
	*q->out = doc;
	return 0;
}

/* Says why the trace is read again: to the callback, else kept in note for err. */
static void fallback_note(const struct cg_read_req *q, char *note, size_t len)
{
	snprintf(note, len, "%s: memory records out of timestamp order; analysed in memory",
		 q->name);
	if (q->opts && q->opts->warn) {
		q->opts->warn(q->opts->user, note);
		note[0] = '\0';
	}
	if (q->errlen)
		q->err[0] = '\0';
}

/* err after the full read: the note first, then that read's own warning, one per line. */
static void join_note(const char *note, const struct cg_read_req *q)
{
	if (!note[0] || !q->errlen)
		return;
	char tail[1024];
	snprintf(tail, sizeof(tail), "%s", q->err);
	snprintf(q->err, q->errlen, "%s%s%s", note, tail[0] ? "\n" : "", tail);
}

/* A source opened (ret: how that went), read, closed. */
static int read_opened(struct cg_src *src, int ret, const struct cg_read_req *q)
{
	if (ret < 0)
		snprintf(q->err, q->errlen, "%s: %s", q->name, src->err);
	else
		ret = read_source(src, q);
	cg_src_close(src);
	return ret;
}

int cg_read_fd(int fd, const struct cg_read_req *q)
{
	struct cg_src src;
	return read_opened(&src, cg_src_open_fd(&src, fd), q);
}

/* q as a full read: what a streamed read becomes once it cannot stream. */
static struct cg_read_req full_of(const struct cg_read_req *q)
{
	struct cg_read_req full = *q;
	full.flags &= ~CGTRACE_READ_STREAM_MEMORY;
	return full;
}

int cg_read_again(struct cg_twice *t, const struct cg_read_req *q)
{
	int fd = cg_twice_rewind(t);
	if (fd < 0) {
		snprintf(q->err, q->errlen, "%s: reading the trace again: %s", q->name,
		         strerror(-fd));
		return fd;
	}
	return cg_read_fd(fd, q);
}

int cg_read_first(struct cg_twice *t, const struct cg_read_req *q)
{
	const struct cg_read_req full = full_of(q);
	if (!cg_twice_ok(t))
		return cg_read_fd(t->fd, &full);
	int ret = cg_read_fd(cg_twice_fd(t), q);
	if (ret != -ECANCELED)
		return ret;
	char note[1024];
	fallback_note(q, note, sizeof(note));
	ret = cg_read_again(t, &full);
	if (ret == 0)
		join_note(note, q);
	return ret;
}

int cg_read_path(const char *path, const struct cg_read_req *req)
{
	struct cg_read_req q = *req;
	int fd = cg_src_open_path(path, &q.name, q.err, q.errlen);
	if (fd < 0)
		return fd;
	int ret;
	if (streamed(&q)) {
		struct cg_twice t;
		cg_twice_open(&t, fd);
		ret = cg_read_first(&t, &q);
		cg_twice_close(&t);
	} else {
		ret = cg_read_fd(fd, &q);
	}
	if (strcmp(path, "-") != 0)
		close(fd);
	return ret;
}

static int read_mem_once(const void *data, size_t len, const struct cg_read_req *q)
{
	struct cg_src src;
	if (q->errlen)
		q->err[0] = '\0';
	return read_opened(&src, cg_src_open_mem(&src, data, len), q);
}

int cg_read_mem(const void *data, size_t len, const struct cg_read_req *q)
{
	int ret = read_mem_once(data, len, q);
	/* Memory is read again in place. */
	if (ret == -ECANCELED) {
		char note[1024];
		fallback_note(q, note, sizeof(note));
		const struct cg_read_req full = full_of(q);
		ret = read_mem_once(data, len, &full);
		if (ret == 0)
			join_note(note, q);
	}
	return ret;
}

CG_EXPORT int cgtrace_doc_read(const char *path, const struct cgtrace_read_options *opts,
			       struct cgtrace_doc **out, char *err, size_t errlen)
{
	const struct cg_read_req q = {.opts = opts, .out = out, .err = err, .errlen = errlen};
	return cg_read_path(path, &q);
}

CG_EXPORT int cgtrace_doc_read_mem(const char *name, const void *data, size_t len,
				   const struct cgtrace_read_options *opts,
				   struct cgtrace_doc **out, char *err, size_t errlen)
{
	const struct cg_read_req q = {
	    .name = name, .opts = opts, .out = out, .err = err, .errlen = errlen};
	return cg_read_mem(data, len, &q);
}

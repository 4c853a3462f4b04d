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
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cgtrace.h"
#include "doc.h"
#include "doc_stream.h"
#include "export.h"
#include "read_apply.h"
#include "read_compact.h"
#include "read_pipe.h"
#include "read_hooked.h"
#include "read_twice.h"
#include "trace_src.h"

/* One read: where its messages go, its options and flags, where the document goes. */
struct req {
	const char *name;
	const struct cgtrace_read_options *opts; /* may be NULL */
	unsigned flags;
	struct cgtrace_doc **out;
	char *err;
	size_t errlen;
	/* A streamed timeline's second read: its callback, and the first read's capacities. */
	int (*point)(void *user, const struct cgtrace_timeline_point *p);
	void *point_user;
	const struct cg_stream_hooks *hooks; /* a view's read: told of every record applied */
	void *hooks_user;
	const struct cg_stream *preset;
	int *stopped; /* the callback's non-zero return, when it stopped the read */
};

static int read_source(struct cg_src *src, const struct req *q)
{
	bool streamed = q->flags & CGTRACE_READ_STREAM_MEMORY;
	struct cgtrace_doc *doc = streamed ? cg_doc_new_streamed() : cg_doc_new();
	if (doc && streamed && (q->point || q->hooks)) {
		doc->stream->point = q->point;
		doc->stream->point_user = q->point_user;
		doc->stream->hooks = q->hooks;
		doc->stream->hooks_user = q->hooks_user;
		if (q->preset && cg_stream_preset_capacity(doc->stream, q->preset) < 0) {
			cgtrace_doc_free(doc);
			doc = NULL;
		}
	}
	if (!doc) {
		snprintf(q->err, q->errlen, "%s: out of memory", q->name);
		return -ENOMEM;
	}
	doc->track_ext = q->flags & CGTRACE_READ_EXTENSIONS;
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
		if (doc->stream && doc->stream->point_ret && q->stopped)
			*q->stopped = doc->stream->point_ret;
		cgtrace_doc_free(doc);
		return ret;
	}
	*q->out = doc;
	return 0;
}

/* Says why the trace is read again: to the callback, else kept in note for err. */
static void fallback_note(const struct req *q, char *note, size_t len)
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
static void join_note(const char *note, const struct req *q)
{
	if (!note[0] || !q->errlen)
		return;
	char tail[1024];
	snprintf(tail, sizeof(tail), "%s", q->err);
	snprintf(q->err, q->errlen, "%s%s%s", note, tail[0] ? "\n" : "", tail);
}

/* A source opened (ret: how that went), read, closed. */
static int read_opened(struct cg_src *src, int ret, const struct req *q)
{
	if (ret < 0)
		snprintf(q->err, q->errlen, "%s: %s", q->name, src->err);
	else
		ret = read_source(src, q);
	cg_src_close(src);
	return ret;
}

static int read_fd(int fd, const struct req *q)
{
	struct cg_src src;
	return read_opened(&src, cg_src_open_fd(&src, fd), q);
}

/* Back to the start: the descriptor to read again, or -errno with the message in err. */
static int twice_rewind(struct cg_twice *t, const struct req *q)
{
	int fd = cg_twice_rewind(t);
	if (fd < 0)
		snprintf(q->err, q->errlen, "%s: reading the trace again: %s", q->name,
		         strerror(-fd));
	return fd;
}

/* After a streamed first read stopped at a record going back in time: a full read. */
static int read_again(struct cg_twice *t, const struct req *q)
{
	struct req full = *q;
	full.flags &= ~CGTRACE_READ_STREAM_MEMORY;
	char note[1024];
	fallback_note(q, note, sizeof(note));
	int fd = twice_rewind(t, q);
	if (fd < 0)
		return fd;
	int ret = read_fd(fd, &full);
	if (ret == 0)
		join_note(note, q);
	return ret;
}

/* A streamed read of fd, read again in full when its memory records go back in time. */
static int read_streamed(int fd, const struct req *q)
{
	struct cg_twice t;
	cg_twice_open(&t, fd);
	int ret;
	if (!cg_twice_ok(&t)) {
		struct req full = *q;
		full.flags &= ~CGTRACE_READ_STREAM_MEMORY;
		ret = read_fd(fd, &full);
	} else {
		ret = read_fd(cg_twice_fd(&t), q);
		if (ret == -ECANCELED)
			ret = read_again(&t, q);
	}
	cg_twice_close(&t);
	return ret;
}

static void no_warn(void *user, const char *line)
{
	(void)user;
	(void)line;
}

/* The second read of a streamed timeline: the points, with every capacity known. */
static int timeline_points(struct cg_twice *t, const struct req *first,
			   int (*fn)(void *user, const struct cgtrace_timeline_point *p),
			   void *user)
{
	/* The first read gave the warnings; err keeps them. */
	static const struct cgtrace_read_options quiet = {.warn = no_warn};
	struct cgtrace_doc *doc = NULL;
	char err[1024];
	int stopped = 0;
	struct req q = *first;
	q.opts = &quiet;
	q.out = &doc;
	q.err = err;
	q.errlen = sizeof(err);
	q.point = fn;
	q.point_user = user;
	q.preset = (*first->out)->stream;
	q.stopped = &stopped;
	int fd = twice_rewind(t, &q);
	int ret = fd < 0 ? fd : read_fd(fd, &q);
	cgtrace_doc_free(doc);
	if (stopped)
		return stopped;
	if (ret < 0)
		snprintf(first->err, first->errlen, "%s", err);
	return ret;
}

int cg_read_hooked(const char *path, const struct cgtrace_read_options *opts,
		   const struct cg_stream_hooks *hooks, void *user, struct cgtrace_doc **out,
		   char *err, size_t errlen)
{
	const char *name;
	int fd = cg_src_open_path(path, &name, err, errlen);
	if (fd < 0)
		return fd;
	int stopped = 0;
	struct req q = {.name = name, .opts = opts, .flags = CGTRACE_READ_STREAM_MEMORY,
			.out = out, .err = err, .errlen = errlen, .hooks = hooks,
			.hooks_user = user, .stopped = &stopped};
	int ret = read_streamed(fd, &q);
	if (strcmp(path, "-") != 0)
		close(fd);
	return stopped ? stopped : ret;
}

CG_EXPORT int
cgtrace_memory_timeline_read(const char *path, const struct cgtrace_read_options *opts,
                             int (*fn)(void *user, const struct cgtrace_timeline_point *p),
                             void *user, char *err, size_t errlen)
{
	const char *name;
	int fd = cg_src_open_path(path, &name, err, errlen);
	if (fd < 0)
		return fd;
	struct cgtrace_doc *doc = NULL;
	struct req q = {.name = name, .opts = opts, .flags = CGTRACE_READ_STREAM_MEMORY,
			.out = &doc, .err = err, .errlen = errlen};
	struct cg_twice t;
	cg_twice_open(&t, fd);
	int ret;
	if (!cg_twice_ok(&t)) {
		q.flags = 0;
		ret = read_fd(fd, &q);
	} else {
		ret = read_fd(cg_twice_fd(&t), &q);
		if (ret == -ECANCELED)
			ret = read_again(&t, &q);
	}
	/* A full document (read again, or read once) has its records: its timeline is at hand. */
	if (ret == 0)
		ret = cg_doc_streamed(doc) ? timeline_points(&t, &q, fn, user)
					   : cgtrace_memory_timeline(doc, fn, user);
	cgtrace_doc_free(doc);
	cg_twice_close(&t);
	if (strcmp(path, "-") != 0)
		close(fd);
	return ret;
}

CG_EXPORT int cgtrace_doc_read_flags(const char *path, const struct cgtrace_read_options *opts,
				     unsigned flags, struct cgtrace_doc **out, char *err,
				     size_t errlen)
{
	const char *name;
	int fd = cg_src_open_path(path, &name, err, errlen);
	if (fd < 0)
		return fd;
	struct req q = {
	    .name = name, .opts = opts, .flags = flags, .out = out, .err = err, .errlen = errlen};
	int ret = flags & CGTRACE_READ_STREAM_MEMORY ? read_streamed(fd, &q)
						      : read_fd(fd, &q);
	if (strcmp(path, "-") != 0)
		close(fd);
	return ret;
}

CG_EXPORT int cgtrace_doc_read(const char *path, const struct cgtrace_read_options *opts,
			       struct cgtrace_doc **out, char *err, size_t errlen)
{
	return cgtrace_doc_read_flags(path, opts, 0, out, err, errlen);
}

static int read_mem(const void *data, size_t len, const struct req *q)
{
	struct cg_src src;
	if (q->errlen)
		q->err[0] = '\0';
	return read_opened(&src, cg_src_open_mem(&src, data, len), q);
}

CG_EXPORT int cgtrace_doc_read_mem_flags(const char *name, const void *data, size_t len,
					 const struct cgtrace_read_options *opts, unsigned flags,
					 struct cgtrace_doc **out, char *err, size_t errlen)
{
	struct req q = {
	    .name = name, .opts = opts, .flags = flags, .out = out, .err = err, .errlen = errlen};
	int ret = read_mem(data, len, &q);
	/* Memory is read again in place. */
	if (ret == -ECANCELED) {
		char note[1024];
		fallback_note(&q, note, sizeof(note));
		q.flags &= ~CGTRACE_READ_STREAM_MEMORY;
		ret = read_mem(data, len, &q);
		if (ret == 0)
			join_note(note, &q);
	}
	return ret;
}

CG_EXPORT int cgtrace_doc_read_mem(const char *name, const void *data, size_t len,
				   const struct cgtrace_read_options *opts,
				   struct cgtrace_doc **out, char *err, size_t errlen)
{
	return cgtrace_doc_read_mem_flags(name, data, len, opts, 0, out, err, errlen);
}

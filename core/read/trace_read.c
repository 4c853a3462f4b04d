/* SPDX-License-Identifier: MIT */
/*
 * The reader: lines -> records -> document, stopping at the first broken
 * rule with "PATH:LINE: message" (read_apply.c handles each line).
 *
 * A streamed read (CGTRACE_READ_STREAM_MEMORY) that meets a memory record
 * going back in time starts again with a full document: a regular file is
 * read again from where it began, anything else (stdin, a pipe) from the
 * spool it was copied to as it was read.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgtrace.h"
#include "doc.h"
#include "doc_stream.h"
#include "export.h"
#include "lines.h"
#include "read_apply.h"
#include "read_pipe.h"
#include "write_all.h"

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
	const struct cg_stream *preset;
	int *stopped; /* the callback's non-zero return, when it stopped the read */
};

static int read_source(struct cg_lines *l, const struct req *q)
{
	bool streamed = q->flags & CGTRACE_READ_STREAM_MEMORY;
	struct cgtrace_doc *doc = streamed ? cg_doc_new_streamed() : cg_doc_new();
	if (doc && streamed && q->point) {
		doc->stream->point = q->point;
		doc->stream->point_user = q->point_user;
		if (cg_stream_preset_capacity(doc->stream, q->preset) < 0) {
			cgtrace_doc_free(doc);
			doc = NULL;
		}
	}
	if (!doc) {
		snprintf(q->err, q->errlen, "%s: out of memory", q->name);
		return -ENOMEM;
	}
	struct cg_read_ctx ctx = {
		.name = q->name, .opts = q->opts, .doc = doc, .err = q->err, .errlen = q->errlen};
	int ret = cg_read_pipe(&ctx, l);
	if (ret < 0 && l->err[0])
		snprintf(q->err, q->errlen, "%s: %s", q->name, l->err);
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

/* An unlinked file for what a stream without a second pass (stdin, a pipe) gave. */
static int spool_open(void)
{
	const char *dir = getenv("TMPDIR");
	if (!dir || !*dir)
		dir = "/tmp";
	int fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd >= 0)
		return fd;
	char path[4096];
	snprintf(path, sizeof(path), "%s/cgtrace-spool-XXXXXX", dir);
	fd = mkostemp(path, O_CLOEXEC);
	if (fd >= 0)
		unlink(path);
	return fd;
}

/* Copies what the first read left unread into the spool, and rewinds it. */
static int spool_rest(int fd, int spool, int tee_err)
{
	char buf[1 << 16];
	int ret = tee_err;
	while (ret == 0) {
		ssize_t n = read(fd, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			ret = n < 0 ? -errno : 0;
			break;
		}
		ret = cg_write_all(spool, buf, (size_t)n);
	}
	if (ret == 0 && lseek(spool, 0, SEEK_SET) < 0)
		ret = -errno;
	return ret;
}

static int read_fd(int fd, int tee, const struct req *q, int *tee_err)
{
	struct cg_lines l;
	int ret = cg_lines_open_fd_tee(&l, fd, tee);
	if (ret < 0)
		snprintf(q->err, q->errlen, "%s: %s", q->name, l.err[0] ? l.err : strerror(-ret));
	else
		ret = read_source(&l, q);
	if (tee_err)
		*tee_err = l.tee_err;
	cg_lines_close(&l);
	return ret;
}

/* A source read twice: a regular file from where it began, anything else through a spool. */
struct twice {
	int fd;
	off_t start; /* -1: not a regular file */
	int spool;   /* -1: none */
	int tee_err;
};

static void twice_open(struct twice *t, int fd)
{
	struct stat st;
	t->fd = fd;
	t->start = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) ? lseek(fd, 0, SEEK_CUR) : -1;
	t->spool = t->start < 0 ? spool_open() : -1;
	t->tee_err = 0;
}

/* Without a spool (none could be made) a stream is read only once. */
static bool twice_ok(const struct twice *t)
{
	return t->start >= 0 || t->spool >= 0;
}

static int twice_first(struct twice *t, const struct req *q)
{
	return read_fd(t->fd, t->spool, q, &t->tee_err);
}

/* Back to the start: the descriptor to read again, or -errno with the message in err. */
static int twice_rewind(struct twice *t, const struct req *q)
{
	int r = t->spool >= 0 ? spool_rest(t->fd, t->spool, t->tee_err)
		: lseek(t->fd, t->start, SEEK_SET) < 0 ? -errno : 0;
	if (r < 0) {
		snprintf(q->err, q->errlen, "%s: reading the trace again: %s", q->name, strerror(-r));
		return r;
	}
	return t->spool >= 0 ? t->spool : t->fd;
}

static void twice_close(struct twice *t)
{
	if (t->spool >= 0)
		close(t->spool);
}

/* After a streamed first read stopped at a record going back in time: a full read. */
static int read_again(struct twice *t, const struct req *q)
{
	struct req full = *q;
	full.flags &= ~CGTRACE_READ_STREAM_MEMORY;
	char note[1024];
	fallback_note(q, note, sizeof(note));
	int fd = twice_rewind(t, q);
	if (fd < 0)
		return fd;
	int ret = read_fd(fd, -1, &full, NULL);
	if (ret == 0)
		join_note(note, q);
	return ret;
}

/* A streamed read of fd, read again in full when its memory records go back in time. */
static int read_streamed(int fd, const struct req *q)
{
	struct twice t;
	twice_open(&t, fd);
	int ret;
	if (!twice_ok(&t)) {
		struct req full = *q;
		full.flags &= ~CGTRACE_READ_STREAM_MEMORY;
		ret = read_fd(fd, -1, &full, NULL);
	} else {
		ret = twice_first(&t, q);
		if (ret == -ECANCELED)
			ret = read_again(&t, q);
	}
	twice_close(&t);
	return ret;
}

/* Opens the trace ("-": standard input): the descriptor, or -errno with the message in err. */
static int open_trace(const char *path, const char **name, char *err, size_t errlen)
{
	bool is_stdin = strcmp(path, "-") == 0;
	if (errlen)
		err[0] = '\0';
	*name = is_stdin ? "<stdin>" : path;
	int fd = is_stdin ? STDIN_FILENO : open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;
		snprintf(err, errlen, "%s: %s", *name, strerror(e));
		return -e;
	}
	return fd;
}

static void no_warn(void *user, const char *line)
{
	(void)user;
	(void)line;
}

/* The second read of a streamed timeline: the points, with every capacity known. */
static int timeline_points(struct twice *t, const struct req *first,
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
	int ret = fd < 0 ? fd : read_fd(fd, -1, &q, NULL);
	cgtrace_doc_free(doc);
	if (stopped)
		return stopped;
	if (ret < 0)
		snprintf(first->err, first->errlen, "%s", err);
	return ret;
}

CG_EXPORT int cgtrace_memory_timeline_read(const char *path, const struct cgtrace_read_options *opts,
					   int (*fn)(void *user,
						     const struct cgtrace_timeline_point *p),
					   void *user, char *err, size_t errlen)
{
	const char *name;
	int fd = open_trace(path, &name, err, errlen);
	if (fd < 0)
		return fd;
	struct cgtrace_doc *doc = NULL;
	struct req q = {.name = name, .opts = opts, .flags = CGTRACE_READ_STREAM_MEMORY,
			.out = &doc, .err = err, .errlen = errlen};
	struct twice t;
	twice_open(&t, fd);
	int ret;
	if (!twice_ok(&t)) {
		q.flags = 0;
		ret = read_fd(fd, -1, &q, NULL);
	} else {
		ret = twice_first(&t, &q);
		if (ret == -ECANCELED)
			ret = read_again(&t, &q);
	}
	/* A full document (read again, or read once) has its records: its timeline is at hand. */
	if (ret == 0)
		ret = cg_doc_streamed(doc) ? timeline_points(&t, &q, fn, user)
					   : cgtrace_memory_timeline(doc, fn, user);
	cgtrace_doc_free(doc);
	twice_close(&t);
	if (strcmp(path, "-") != 0)
		close(fd);
	return ret;
}

CG_EXPORT int cgtrace_doc_read_flags(const char *path, const struct cgtrace_read_options *opts,
				     unsigned flags, struct cgtrace_doc **out, char *err,
				     size_t errlen)
{
	const char *name;
	int fd = open_trace(path, &name, err, errlen);
	if (fd < 0)
		return fd;
	struct req q = {
		.name = name, .opts = opts, .flags = flags, .out = out, .err = err, .errlen = errlen};
	int ret = flags & CGTRACE_READ_STREAM_MEMORY ? read_streamed(fd, &q)
						      : read_fd(fd, -1, &q, NULL);
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
	struct cg_lines l;
	if (q->errlen)
		q->err[0] = '\0';
	int ret = cg_lines_open_mem(&l, data, len);
	if (ret < 0)
		snprintf(q->err, q->errlen, "%s: %s", q->name, l.err[0] ? l.err : strerror(-ret));
	else
		ret = read_source(&l, q);
	cg_lines_close(&l);
	return ret;
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

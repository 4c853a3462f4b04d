/* SPDX-License-Identifier: MIT */
/*
 * The reader: lines (or compact records) -> records -> document, stopping
 * at the first broken rule with "PATH:LINE: message" (read_apply.c handles
 * each line) or "PATH: record N: message" (read_compact.c).
 *
 * A streamed read (CGTRACE_READ_STREAM_MEMORY) that meets a memory record
 * going back in time starts again with a full document: a regular file is
 * read again from where it began, anything else (stdin, a pipe) from the
 * spool a thread copied it to as the first read went on.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgtrace.h"
#include "doc.h"
#include "doc_stream.h"
#include "export.h"
#include "read_apply.h"
#include "read_compact.h"
#include "read_pipe.h"
#include "read_hooked.h"
#include "trace_src.h"
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

static int read_fd(int fd, const struct req *q)
{
	struct cg_src src;
	int ret = cg_src_open_fd(&src, fd);
	if (ret < 0)
		snprintf(q->err, q->errlen, "%s: %s", q->name, src.err);
	else
		ret = read_source(&src, q);
	cg_src_close(&src);
	return ret;
}

/*
 * A source read twice: a regular file from where it began; anything else
 * (stdin, a pipe) through a thread that copies each block it reads to the
 * spool and to a socket the reader reads, so the first read goes on while
 * the bytes arrive, whatever decodes them.
 */
struct twice {
	int fd;
	off_t start;   /* -1: not a regular file */
	int spool;     /* -1: none */
	int sock[2];   /* the reader's end, the thread's end */
	pthread_t thread;
	bool running;  /* the thread was started and not joined */
	atomic_bool keep; /* once the reader is gone: copy the rest to the spool, else stop */
	int err;       /* the thread's first error reading fd or writing the spool */
};

static int send_all(int fd, const char *p, size_t n)
{
	while (n > 0) {
		ssize_t k = send(fd, p, n, MSG_NOSIGNAL);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return -1;
		p += k;
		n -= (size_t)k;
	}
	return 0;
}

static void *tee_main(void *arg)
{
	struct twice *t = arg;
	static _Thread_local char buf[1 << 16];
	bool reader = true;
	for (;;) {
		ssize_t n = read(t->fd, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (n < 0 && !t->err)
				t->err = -errno;
			break;
		}
		if (!t->err)
			t->err = cg_write_all(t->spool, buf, (size_t)n);
		if (reader && send_all(t->sock[1], buf, (size_t)n) < 0) {
			reader = false;
			if (!atomic_load(&t->keep))
				break;
		}
	}
	close(t->sock[1]);
	t->sock[1] = -1;
	return NULL;
}

/* The spool and its thread; false when either cannot be had (the source is then read once). */
static bool tee_start(struct twice *t)
{
	t->spool = spool_open();
	if (t->spool < 0)
		return false;
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, t->sock) < 0) {
		close(t->spool);
		t->spool = -1;
		return false;
	}
	/* The thread must not take signals meant for the application. */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	t->running = pthread_create(&t->thread, NULL, tee_main, t) == 0;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (!t->running) {
		close(t->sock[0]);
		close(t->sock[1]);
		close(t->spool);
		t->spool = t->sock[0] = t->sock[1] = -1;
	}
	return t->running;
}

static void twice_open(struct twice *t, int fd)
{
	struct stat st;
	memset(t, 0, sizeof(*t));
	t->fd = fd;
	t->spool = t->sock[0] = t->sock[1] = -1;
	t->start = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) ? lseek(fd, 0, SEEK_CUR) : -1;
	if (t->start < 0)
		tee_start(t);
}

/* Without a spool (none could be made) a stream is read only once. */
static bool twice_ok(const struct twice *t)
{
	return t->start >= 0 || t->spool >= 0;
}

static int twice_first(struct twice *t, const struct req *q)
{
	return read_fd(t->spool >= 0 ? t->sock[0] : t->fd, q);
}

/* The reader is done with the socket: the thread copies the rest (keep) or stops. */
static void tee_finish(struct twice *t, bool keep)
{
	if (!t->running)
		return;
	atomic_store(&t->keep, keep);
	if (t->sock[0] >= 0)
		close(t->sock[0]);
	t->sock[0] = -1;
	/* A pipe with no end in sight is not waited for when the rest is not wanted. */
	if (!keep)
		pthread_cancel(t->thread);
	pthread_join(t->thread, NULL);
	t->running = false;
	if (t->sock[1] >= 0)
		close(t->sock[1]);
	t->sock[1] = -1;
}

/* Back to the start: the descriptor to read again, or -errno with the message in err. */
static int twice_rewind(struct twice *t, const struct req *q)
{
	int r = 0;
	if (t->spool >= 0) {
		tee_finish(t, true);
		r = t->err;
		if (r == 0 && lseek(t->spool, 0, SEEK_SET) < 0)
			r = -errno;
	} else if (lseek(t->fd, t->start, SEEK_SET) < 0) {
		r = -errno;
	}
	if (r < 0) {
		snprintf(q->err, q->errlen, "%s: reading the trace again: %s", q->name,
		         strerror(-r));
		return r;
	}
	return t->spool >= 0 ? t->spool : t->fd;
}

static void twice_close(struct twice *t)
{
	tee_finish(t, false);
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
	int ret = read_fd(fd, &full);
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
		ret = read_fd(fd, &full);
	} else {
		ret = twice_first(&t, q);
		if (ret == -ECANCELED)
			ret = read_again(&t, q);
	}
	twice_close(&t);
	return ret;
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
	struct twice t;
	twice_open(&t, fd);
	int ret;
	if (!twice_ok(&t)) {
		q.flags = 0;
		ret = read_fd(fd, &q);
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
	int ret = cg_src_open_mem(&src, data, len);
	if (ret < 0)
		snprintf(q->err, q->errlen, "%s: %s", q->name, src.err);
	else
		ret = read_source(&src, q);
	cg_src_close(&src);
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

/* SPDX-License-Identifier: MIT */
/*
 * The memory timeline: live bytes of a record's device after each record,
 * in analysis order, as the memory analysis applies them (a timeline
 * callback, memory_stream.h). A full document replays its records; a
 * trace read streamed is read twice: first for every device's capacity
 * (the largest used + free of the whole trace, which the first point
 * already needs), then with the callback, starting from those capacities.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cgtrace.h"
#include "doc.h"
#include "export.h"
#include "memory_replay.h"
#include "memory_stream.h"
#include "stream_sink.h"
#include "trace_read.h"
#include "trace_src.h"

CG_EXPORT int cgtrace_memory_timeline(const struct cgtrace_doc *d,
				      int (*fn)(void *user, const struct cgtrace_timeline_point *p),
				      void *user)
{
	if (cg_doc_streamed(d))
		return -ENODATA;
	const struct cg_stream_cfg cfg = {.point = fn, .point_user = user};
	struct cg_stream *s;
	int ret = cg_replay_run(d, &cfg, &s);
	if (ret == 0)
		cg_stream_free(s);
	return ret;
}

static void no_warn(void *user, const char *line)
{
	(void)user;
	(void)line;
}

/* The second read of a streamed timeline: the points, with every capacity known. */
static int timeline_points(struct cg_twice *t, const struct cg_read_req *first,
			   int (*fn)(void *user, const struct cgtrace_timeline_point *p),
			   void *user)
{
	/* The first read gave the warnings; err keeps them. */
	static const struct cgtrace_read_options quiet = {.warn = no_warn};
	struct cgtrace_doc *doc = NULL;
	char err[1024];
	int stopped = 0;
	const struct cg_stream_cfg cfg = {.point = fn, .point_user = user,
					  .preset = cg_stream_of(*first->out), .stopped = &stopped};
	struct cg_read_req q = *first;
	q.opts = &quiet;
	q.out = &doc;
	q.err = err;
	q.errlen = sizeof(err);
	q.sink_cfg = &cfg;
	int ret = cg_read_again(t, &q);
	cgtrace_doc_free(doc);
	if (stopped)
		return stopped;
	if (ret < 0)
		snprintf(first->err, first->errlen, "%s", err);
	return ret;
}

CG_EXPORT int
cgtrace_memory_timeline_read(const char *path, const struct cgtrace_read_options *opts,
                             int (*fn)(void *user, const struct cgtrace_timeline_point *p),
                             void *user, char *err, size_t errlen)
{
	struct cgtrace_doc *doc = NULL;
	/* A timeline names no stack: none are kept. */
	struct cg_read_req q = {.opts = opts,
				.flags = CGTRACE_READ_STREAM_MEMORY | CGTRACE_READ_SKIP_STACKS,
				.out = &doc, .err = err, .errlen = errlen, .sink = &cg_stream_sink};
	int fd = cg_src_open_path(path, &q.name, err, errlen);
	if (fd < 0)
		return fd;
	struct cg_twice t;
	cg_twice_open(&t, fd);
	int ret = cg_read_first(&t, &q);
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

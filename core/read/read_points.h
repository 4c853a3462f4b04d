/* SPDX-License-Identifier: MIT */
/* Reading a trace twice for its points: a timeline's, a view's (core/view). */
#ifndef CG_READ_POINTS_H
#define CG_READ_POINTS_H

#include <stddef.h>

#include "cgtrace.h"
#include "doc_stream.h"

struct cg_read_points {
	int (*point)(void *user, const struct cgtrace_timeline_point *p);
	const struct cg_stream_hooks *hooks; /* only on a streamed second read */
	/* After the first read, before the points (NULL: none); non-zero stops. */
	int (*between)(void *user, const struct cgtrace_doc *first);
	void *user;
};

/*
 * cgtrace_memory_timeline_read with a view's hooks beside the points: a
 * streamed read for the capacities, then a second one calling them. A
 * trace read in full instead (its memory records go back in time) gets the
 * points from its document and no hook: the caller replays it itself.
 * keep (may be NULL) gets the first read's document: streamed, or the full
 * one. As cgtrace_memory_timeline_read otherwise.
 */
int cg_read_points(const char *path, const struct cgtrace_read_options *opts,
		   const struct cg_read_points *pts, struct cgtrace_doc **keep, char *err,
		   size_t errlen);

/*
 * A streamed read of path whose analysis calls hooks as it applies each
 * memory record and reads each checkpoint (a view's one pass). A trace
 * read in full instead (its memory records go back in time) has called
 * the hooks for part of its records: the caller starts again from its
 * document. A hook's non-zero return stops the read and is returned.
 */
int cg_read_hooked(const char *path, const struct cgtrace_read_options *opts,
		   const struct cg_stream_hooks *hooks, void *user, struct cgtrace_doc **out,
		   char *err, size_t errlen);

#endif

/* SPDX-License-Identifier: MIT */
/*
 * Reading a trace with its memory analysis: a streamed read's document
 * feeds the analysis (memory_stream.h) as it is read. The public reading
 * functions that stream live here (memory_read.c, timeline.c), since the
 * reader (core/read) knows no analysis; a view's read with hooks besides.
 */
#ifndef CG_MEMORY_READ_H
#define CG_MEMORY_READ_H

#include <stddef.h>

#include "cgtrace.h"
#include "memory_stream.h"
#include "stream_sink.h"

/*
 * A streamed read of path whose analysis calls hooks as it applies each
 * memory record and reads each checkpoint (a view's one pass). A trace
 * read in full instead (its memory records go back in time) has called
 * the hooks for part of its records: the caller starts again from its
 * document. A hook's non-zero return stops the read and is returned.
 */
int cg_read_hooked(const char *path, const struct cgtrace_read_options *opts, unsigned flags,
		   const struct cg_stream_hooks *hooks, void *user, struct cgtrace_doc **out,
		   char *err, size_t errlen);

#endif

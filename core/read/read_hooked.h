/* SPDX-License-Identifier: MIT */
/* A streamed read whose analysis tells hooks of every record it applies: a view's (core/view). */
#ifndef CG_READ_HOOKED_H
#define CG_READ_HOOKED_H

#include <stddef.h>

#include "cgtrace.h"
#include "doc_stream.h"

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

/* SPDX-License-Identifier: MIT */
/* Trace file names: the CGPROBE_OUTPUT template, created exclusively. */
#ifndef CG_OUTPATH_H
#define CG_OUTPATH_H

#include <stddef.h>

/*
 * Expands %p (pid), %e (executable name), %h (host), %n (session number),
 * %r (the rank the environment gives, launch_env.h; "none" without one)
 * and %%, then creates the file exclusively; on a clash `.1`, `.2`, ... go
 * before the extension. A character device or FIFO is opened as it is.
 * path receives the absolute name. Returns 0 or a negative errno.
 */
int cg_outpath_create(const char *tmpl, const char *exe, unsigned seq, char *path, size_t cap,
		      int *fd);

#endif

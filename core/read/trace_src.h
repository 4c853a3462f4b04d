/* SPDX-License-Identifier: MIT */
/*
 * A trace's bytes, told apart by their first ones: the compact encoding
 * (its magic), else lines of JSONL, plain or zstd (lines.c tells those).
 * A pipe cannot seek, so the bytes looked at are kept and read again.
 */
#ifndef CG_TRACE_SRC_H
#define CG_TRACE_SRC_H

#include <stddef.h>

#include "compact_dec.h"
#include "lines.h"

struct cg_src {
	struct cg_cdec *cdec; /* the compact decoder, or NULL: lines */
	struct cg_lines lines;
	char err[200];
};

/*
 * Opens path to read ("-": standard input, named "<stdin>", never closed):
 * the descriptor, or -errno with "NAME: reason" in err; a directory is
 * -EISDIR, "is a directory". *name is the trace's name in messages.
 */
int cg_src_open_path(const char *path, const char **name, char *err, size_t errlen);
/*
 * 0, or a negative errno with the reason in s->err (no bytes at all:
 * -EBADMSG, "empty file"); close it either way.
 */
int cg_src_open_fd(struct cg_src *s, int fd);
int cg_src_open_mem(struct cg_src *s, const void *data, size_t len);
void cg_src_close(struct cg_src *s);

#endif

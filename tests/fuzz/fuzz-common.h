/* SPDX-License-Identifier: MIT */
/* What the fuzz targets check alike. */
#ifndef CG_FUZZ_COMMON_H
#define CG_FUZZ_COMMON_H

#include "cgtrace.h"

/* A warning callback that keeps the targets' output quiet. */
void fuzz_quiet(void *user, const char *line);

/*
 * fd (a memfd) holds a JSONL export of doc, whose summary is s1: it must
 * read back to a document with the same summary and record counts, which
 * is returned for further checks (the caller frees it). what names the
 * export in the message of a failed read.
 */
struct cgtrace_doc *fuzz_read_back(int fd, const struct cgtrace_doc *doc,
				   const struct cgtrace_summary *s1, const char *what);

#endif

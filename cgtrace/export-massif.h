/* SPDX-License-Identifier: MIT */
/* cgtrace export --format massif: one device of a view in valgrind massif's format
 * (docs/massif.md). */
#ifndef CGTRACE_EXPORT_MASSIF_H
#define CGTRACE_EXPORT_MASSIF_H

#include <stddef.h>
#include <stdio.h>

#include "cgtrace.h"
#include "cli.h"

/* Snapshots written at most, besides the first (time 0) and the last (the trace's end). */
#define CLI_MASSIF_SNAPSHOTS 100

/*
 * Writes device d of the view (an index in view->devices; ignored when the
 * view has no device) to f: its buckets as snapshots, its peak as the
 * detailed one, by call stack through sites (NULL: none) when the trace
 * has stacks. 0 or -ENOMEM; write errors are left to the caller's ferror.
 */
int cli_massif_write(FILE *f, const struct cgtrace_view *view, size_t d,
                     struct cli_sites *sites);

/* Reads the view of path and writes device (NULL: the one that peaked) to output; CLI_*. */
int cli_export_massif(const char *path, const char *output, const char *device);

#endif

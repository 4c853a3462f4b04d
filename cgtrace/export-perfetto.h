/* SPDX-License-Identifier: MIT */
/* cgtrace export --format perfetto: a view as Chrome Trace Event JSON (docs/perfetto.md). */
#ifndef CGTRACE_EXPORT_PERFETTO_H
#define CGTRACE_EXPORT_PERFETTO_H

#include <stddef.h>
#include <stdio.h>

#include "cgtrace.h"

/* The defaults of --buckets and --max-spans. */
#define CLI_PERFETTO_BUCKETS 10000
#define CLI_PERFETTO_MAX_SPANS 100000

struct cli_perfetto_options {
	size_t max_spans; /* spans kept, the longest first */
};

/*
 * Writes the view (spans, names and meta from view->doc when it is not
 * NULL) to f; 0 or -ENOMEM. Write errors are left to the caller's ferror.
 */
int cli_perfetto_write(FILE *f, const struct cgtrace_view *view,
                       const struct cli_perfetto_options *opts);

/* Reads the view of path and writes it to output (NULL or "-": stdout); CLI_OK or CLI_FAIL. */
int cli_export_perfetto(const char *path, const char *output, size_t buckets, size_t max_spans);

#endif

/* SPDX-License-Identifier: MIT */
/* cgtrace export --format perfetto of a job: several traces, or a folder (docs/perfetto.md). */
#ifndef CGTRACE_EXPORT_PERFETTO_JOB_H
#define CGTRACE_EXPORT_PERFETTO_JOB_H

#include <stddef.h>

/*
 * Reads the job of paths and writes one file to output (NULL or "-":
 * stdout): each process's view as a process of the file on the job's time
 * axis (buckets and max_spans apply to each), a counter per physical GPU.
 * CLI_OK, or CLI_FAIL when a trace could not be read (the file holds the
 * others) or the file could not be written.
 */
int cli_export_perfetto_job(char *const *paths, size_t n, const char *output, size_t buckets,
                            size_t max_spans);

#endif

/* SPDX-License-Identifier: MIT */
/* cgtrace report of a job: one page of several traces, or a folder (docs/report.md, "A job"). */
#ifndef CGTRACE_REPORT_JOB_PAGE_H
#define CGTRACE_REPORT_JOB_PAGE_H

#include <stddef.h>

#include "cli.h"

/*
 * Reads the job of paths and writes its page to out (NULL or "-":
 * stdout): the job's block, then per readable process its lane and its
 * own page's block; vo: what --buckets and --allocs asked of each
 * process's view (0: the job's defaults); baseline: BASE, a trace or a
 * folder read as a job the page is compared with, or NULL. CLI_OK, or
 * CLI_FAIL when a trace could not be read (the page holds the others; a
 * trace of BASE: no page) or the page could not be written.
 */
int cli_report_job(char *const *paths, size_t n, const char *out,
                   const struct cgtrace_view_options *vo, const char *baseline);

#endif

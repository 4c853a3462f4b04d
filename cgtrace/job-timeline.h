/* SPDX-License-Identifier: MIT */
/* cgtrace timeline of a job (job-timeline.c): every process's rows on the job's time axis. */
#ifndef CLI_JOB_TIMELINE_H
#define CLI_JOB_TIMELINE_H

#include <stdbool.h>
#include <stddef.h>

struct cli_job_timeline_opts {
	const char *device; /* each process's device of that name; NULL: see job-timeline.c */
	size_t rows;        /* the chart's slices */
	size_t jobs;        /* traces read at once */
	bool csv, exact;
};

/* The command's answer for the traces at paths, and its exit status (errors printed). */
int cli_job_timeline(char *const *paths, size_t n, const struct cli_job_timeline_opts *o);

#endif

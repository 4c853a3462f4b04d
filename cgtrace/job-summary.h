/* SPDX-License-Identifier: MIT */
/* cgtrace summary of a job: several traces, or a folder of them (job-summary.c). */
#ifndef CLI_JOB_SUMMARY_H
#define CLI_JOB_SUMMARY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cli.h"

struct cli_job_opts {
	size_t jobs;   /* traces read at once */
	uint64_t fold; /* processes with a peak under this fold into one line */
	bool json, exact;
	bool series; /* --json: each device's bytes over time, for a reader elsewhere */
};

int cli_job_summary(char *const *paths, size_t n, const struct cli_job_opts *o);

#endif

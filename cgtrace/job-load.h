/* SPDX-License-Identifier: MIT */
/* A job's traces read for a command (job-load.c): its paths, the job, its errors. */
#ifndef CLI_JOB_LOAD_H
#define CLI_JOB_LOAD_H

#include <stddef.h>

#include "cli.h"

/* --jobs N, as every command that takes a job has it: the count into the size_t member. */
#define CLI_OPT_JOBS(type, member)                                                           \
	{.name = "jobs", .kind = CLI_OPT_COUNT, .offset = offsetof(type, member),           \
	 .arg = "N", .min = 1, .max = 256,                                                  \
	 .help = "a job: N traces read at once, each on a thread (default 1)"}

/*
 * After cli_parse and cli_job_args: the traces the operands name
 * (cgtrace_job_paths), a NULL-terminated array to free(); NULL with the
 * one-line error printed.
 */
char **cli_job_paths_of(int argc, char **argv, size_t *n);
/*
 * The job of paths (cgtrace_job_read) on jobs threads, with flags; each
 * read's warnings on stderr. NULL with the error printed.
 */
struct cgtrace_job *cli_job_load(char *const *paths, size_t n, size_t jobs, unsigned flags);
/* Each unreadable process's error line on stderr, in path order: CLI_FAIL when any, else CLI_OK. */
int cli_job_errors(const struct cgtrace_job *j);

#endif

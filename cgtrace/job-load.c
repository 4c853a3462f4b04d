/* SPDX-License-Identifier: MIT */
/*
 * Reading a job for a command: the one place that turns the operands into
 * traces, reads them as one job and says which could not be read, so every
 * command that takes a job words its errors alike.
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "job-load.h"

char **cli_job_paths_of(int argc, char **argv, size_t *n)
{
	char **paths, err[512];
	if (cgtrace_job_paths((const char *const *)argv + optind, (size_t)(argc - optind), &paths, n,
			      err, sizeof(err)) < 0) {
		fprintf(stderr, "%s\n", err);
		return NULL;
	}
	return paths;
}

static void warn_line(void *user, const char *line)
{
	(void)user;
	fprintf(stderr, "%s\n", line);
}

struct cgtrace_job *cli_job_load(char *const *paths, size_t n, size_t jobs, unsigned flags)
{
	const struct cgtrace_job_options jo = {
	    .jobs = jobs ? (unsigned)jobs : 1,
	    .flags = flags,
	    .warn = warn_line,
	};
	struct cgtrace_job *j;
	int ret = cgtrace_job_read((const char *const *)paths, n, &jo, &j);
	if (ret < 0) {
		fprintf(stderr, "cgtrace: reading the job: %s\n", strerror(-ret));
		return NULL;
	}
	return j;
}

int cli_job_errors(const struct cgtrace_job *j)
{
	int status = CLI_OK;
	for (size_t i = 0; i < j->n_processes; i++)
		if (j->processes[i].error) {
			fprintf(stderr, "%s\n", j->processes[i].message);
			status = CLI_FAIL;
		}
	return status;
}

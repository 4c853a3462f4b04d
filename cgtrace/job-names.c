/* SPDX-License-Identifier: MIT */
/*
 * What the views of a job call a process (job-names.h): the summary's
 * rows and shares, the Perfetto export's tracks and the report's lanes
 * name it alike, and the last two show the processes in one order.
 */
#include "job-names.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *cli_job_who_of(char *buf, size_t len, const struct cgtrace_job_process *p)
{
	if (p->process.pid >= 0)
		return cli_job_who(buf, len, &p->process);
	/* A trace without the probe's pid tag is known by its file's name. */
	const char *slash = strrchr(p->path, '/');
	const char *file = slash ? slash + 1 : p->path;
	if (p->process.rank >= 0)
		snprintf(buf, len, "rank %lld (%s)", (long long)p->process.rank, file);
	else
		snprintf(buf, len, "%s", file);
	return buf;
}

const char *cli_job_label(char *buf, size_t len, const struct cgtrace_job_process *p)
{
	char who[CLI_JOB_NAME_LEN], cmd[CLI_JOB_NAME_LEN];
	cli_job_command(cmd, sizeof(cmd), &p->process);
	snprintf(buf, len, "%s%s%s", cli_job_who_of(who, sizeof(who), p), cmd[0] ? " " : "", cmd);
	return buf;
}

void cli_job_gpu_names(const struct cgtrace_job_gpu *g, char *key, size_t key_len, char *name,
                       size_t name_len)
{
	const char *host = g->host[0] ? g->host : "?";
	if (g->uuid)
		snprintf(key, key_len, "%s", g->uuid);
	else
		snprintf(key, key_len, "%s %s", host, g->device);
	if (g->uuid)
		snprintf(name, name_len, "%s (%s %s%s%s)", g->uuid, host, g->device,
		         g->name ? ", " : "", g->name ? g->name : "");
	else
		snprintf(name, name_len, "%s %s (no UUID recorded%s%s)", host, g->device,
		         g->name ? ", " : "", g->name ? g->name : "");
}

struct ranked {
	int64_t rank; /* INT64_MAX: none */
	size_t tree;  /* the position in tree order */
	size_t index;
};

static int by_rank(const void *a, const void *b)
{
	const struct ranked *x = a, *y = b;
	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	return x->tree < y->tree ? -1 : x->tree > y->tree;
}

int cli_job_order(const struct cgtrace_job *job, size_t **order)
{
	size_t n = job->n_processes;
	struct ranked *r = malloc((n ? n : 1) * sizeof(*r));
	*order = malloc((n ? n : 1) * sizeof(**order));
	if (!r || !*order) {
		free(r);
		free(*order);
		*order = NULL;
		return -ENOMEM;
	}
	for (size_t t = 0; t < n; t++) {
		size_t i = job->tree[t];
		int64_t rank = job->processes[i].process.rank;
		r[t] = (struct ranked){rank >= 0 ? rank : INT64_MAX, t, i};
	}
	qsort(r, n, sizeof(*r), by_rank);
	for (size_t k = 0; k < n; k++)
		(*order)[k] = r[k].index;
	free(r);
	return 0;
}

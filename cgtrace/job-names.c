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

const char *cli_job_who(char *buf, size_t len, const struct cgtrace_job_process *p)
{
	char pid[32];
	/* A trace without the probe's pid tag is known by its file's name. */
	const char *slash = strrchr(p->path, '/');
	if (p->process.pid >= 0)
		snprintf(pid, sizeof(pid), "pid %lld", (long long)p->process.pid);
	if (p->process.rank >= 0)
		snprintf(buf, len, "rank %lld (%s)", (long long)p->process.rank,
		         p->process.pid >= 0 ? pid
		         : slash             ? slash + 1
		                             : p->path);
	else
		snprintf(buf, len, "%s", p->process.pid >= 0 ? pid : slash ? slash + 1 : p->path);
	return buf;
}

const char *cli_job_command(char *buf, size_t len, const struct cgtrace_job_process *p)
{
	const char *c = p->process.cmdline[0] ? p->process.cmdline : p->process.executable;
	size_t at = 0, col = 0, cut_at = 0; /* cut_at: where "..." goes, 3 columns before the end */
	if (p->process.forked_from >= 0)
		at = col = (size_t)snprintf(buf, len, "(fork) ");
	for (; *c && at + 4 < len; c++) {
		unsigned char ch = (unsigned char)*c;
		bool ctl = ch < 0x20 || ch == 0x7f;
		/* A UTF-8 continuation byte takes no column of its own. */
		size_t w = (ch & 0xc0) == 0x80 ? 0 : ctl ? 2 : 1;
		if (w && col + w > CLI_JOB_CMD_COLS - 3 && !cut_at)
			cut_at = at;
		if (w && col + w > CLI_JOB_CMD_COLS) {
			strcpy(buf + cut_at, "...");
			return buf;
		}
		if (ctl) {
			buf[at++] = '\\';
			buf[at++] = ch == '\n' ? 'n' : ch == '\t' ? 't' : '?';
		} else {
			buf[at++] = (char)ch;
		}
		col += w;
	}
	buf[at] = '\0';
	return buf;
}

const char *cli_job_label(char *buf, size_t len, const struct cgtrace_job_process *p)
{
	char who[64], cmd[CLI_JOB_NAME_LEN];
	cli_job_command(cmd, sizeof(cmd), p);
	snprintf(buf, len, "%s%s%s", cli_job_who(who, sizeof(who), p), cmd[0] ? " " : "", cmd);
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

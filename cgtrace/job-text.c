/* SPDX-License-Identifier: MIT */
/*
 * The words of a job that summary, memory, top, leaks, timeline and plot
 * share, so that a process is named, and a physical GPU shown, the same
 * way by each (docs/jobs.md).
 */
#include <stdio.h>
#include <string.h>

#include "job-text.h"

/* A fork child inherits its parent's rank variables: its pid alone names it. */
const char *cli_job_who(char *buf, size_t len, const struct cgtrace_process *p)
{
	if (p->rank >= 0 && p->forked_from < 0)
		snprintf(buf, len, "rank %lld (pid %lld)", (long long)p->rank, (long long)p->pid);
	else
		snprintf(buf, len, "pid %lld", (long long)p->pid);
	return buf;
}

const char *cli_job_processes(char buf[48], size_t n)
{
	char c[32];
	snprintf(buf, 48, "%s process%s", cli_count(c, n), n == 1 ? "" : "es");
	return buf;
}

const char *cli_job_name(char *buf, size_t len, const struct cgtrace_process *p)
{
	if (p->rank >= 0 && p->forked_from < 0)
		snprintf(buf, len, "rank %lld", (long long)p->rank);
	else
		snprintf(buf, len, "pid %lld", (long long)p->pid);
	return buf;
}

/* A fork child says so: its command line is its parent's. */
const char *cli_job_command(char *buf, size_t len, const struct cgtrace_process *p)
{
	const char *c = p->cmdline[0] ? p->cmdline : p->executable;
	size_t at = 0, col = 0, cut_at = 0; /* cut_at: where "..." goes, 3 columns before the end */
	if (p->forked_from >= 0)
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

void cli_job_print_gpus(const struct cgtrace_job *j, bool exact)
{
	char a[32], b[32], c[32], w[64];
	if (!j->n_gpus)
		return;
	printf("\nphysical devices, every process's bytes on each summed on the job's time axis\n");
	for (size_t g = 0; g < j->n_gpus; g++) {
		const struct cgtrace_job_gpu *x = &j->gpus[g];
		printf("%s (%s %s%s%s%s%s)\n", x->uuid ? x->uuid : x->device,
		       x->host[0] ? x->host : "?", x->device, x->name ? ", " : "",
		       x->name ? x->name : "", x->total_bytes ? ", " : "",
		       x->total_bytes ? cli_bytes(c, x->total_bytes, exact) : "");
		printf("  peak %s at %s, %zu process%s on it%s\n", cli_bytes(a, x->peak_bytes, exact),
		       cli_ns(b, x->peak_ns), x->n_processes, x->n_processes == 1 ? "" : "es",
		       x->by_name ? " (no UUID recorded: taken by machine and name)" : "");
		for (size_t s = 0; s < x->n_shares; s++)
			printf("  %-28s %10s\n",
			       cli_job_who(w, sizeof(w), &j->processes[x->shares[s].process].process),
			       cli_bytes(a, x->shares[s].bytes, exact));
	}
}

void cli_job_json_shares(struct cli_jw *w, const struct cgtrace_job_gpu *x)
{
	cli_jw_key(w, "shares");
	cli_jw_begin_array(w);
	for (size_t s = 0; s < x->n_shares; s++) {
		cli_jw_begin_object(w);
		cli_jw_key_u64(w, "process", x->shares[s].process);
		cli_jw_key_str(w, "device", x->shares[s].device);
		cli_jw_key_u64(w, "bytes", x->shares[s].bytes);
		cli_jw_end_object(w);
	}
	cli_jw_end_array(w);
}

void cli_job_json_gpus(struct cli_jw *w, const struct cgtrace_job *j)
{
	cli_jw_begin_array(w);
	for (size_t g = 0; g < j->n_gpus; g++) {
		const struct cgtrace_job_gpu *x = &j->gpus[g];
		cli_jw_begin_object(w);
		cli_jw_key_str(w, "uuid", x->uuid);
		cli_jw_key_str(w, "host", x->host);
		cli_jw_key_str(w, "device", x->device);
		cli_jw_key_str(w, "name", x->name);
		cli_jw_key_bool(w, "by_name", x->by_name);
		cli_jw_key_u64(w, "total_bytes", x->total_bytes);
		cli_jw_key_u64(w, "process_count", x->n_processes);
		cli_jw_key_u64(w, "peak_bytes", x->peak_bytes);
		cli_jw_key_u64(w, "peak_ns", x->peak_ns);
		cli_job_json_shares(w, x);
		cli_jw_end_object(w);
	}
	cli_jw_end_array(w);
}

void cli_job_json_ids(struct cli_jw *w, const struct cgtrace_process *p)
{
	cli_jw_key(w, "pid");
	if (p->pid < 0)
		cli_jw_null(w);
	else
		cli_jw_i64(w, p->pid);
	cli_jw_key(w, "rank");
	if (p->rank < 0)
		cli_jw_null(w);
	else
		cli_jw_i64(w, p->rank);
}

const char *cli_job_device_shown(const struct cgtrace_job_process *p)
{
	const struct cgtrace_job_device *best = NULL;
	for (size_t d = 0; d < p->n_devices; d++)
		if (!best || p->devices[d].peak_bytes > best->peak_bytes)
			best = &p->devices[d];
	return best && best->peak_bytes ? best->device : NULL;
}

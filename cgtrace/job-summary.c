/* SPDX-License-Identifier: MIT */
/*
 * cgtrace summary of a job (several traces, or a folder of them): a row
 * per process in tree order, small ones folded, then the machines' and
 * the physical devices' totals (docs/jobs.md).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "job-load.h"
#include "job-names.h"
#include "job-summary.h"
#include "job-text.h"

static bool host_device(const char *device)
{
	return strcmp(device, "cpu") == 0;
}

static const struct cgtrace_job_device *cpu_of(const struct cgtrace_job_process *p)
{
	for (size_t d = 0; d < p->n_devices; d++)
		if (host_device(p->devices[d].device))
			return &p->devices[d];
	return NULL;
}

/* "-" or the number. */
static const char *num_or_dash(char buf[24], int64_t v)
{
	if (v < 0)
		return "-";
	snprintf(buf, 24, "%lld", (long long)v);
	return buf;
}

/*
 * The processes shown: those whose peak reaches fold, and their ancestors,
 * so that the tree reads whole; the others fold into one line.
 */
static bool *shown_rows(const struct cgtrace_job *j, uint64_t fold)
{
	bool *shown = calloc(j->n_processes ? j->n_processes : 1, sizeof(*shown));
	for (size_t i = 0; shown && i < j->n_processes; i++) {
		const struct cgtrace_job_process *p = &j->processes[i];
		if (p->error || p->peak_bytes < fold)
			continue;
		for (long k = (long)i; k >= 0 && !shown[k]; k = j->processes[k].parent)
			shown[k] = true;
	}
	return shown;
}

static void print_row(const struct cgtrace_job *j, const struct cgtrace_job_process *p,
		      bool exact)
{
	char pid[40], par[24], rank[24], peak[32], at[32], leak[32], cmd[CLI_JOB_NAME_LEN];
	snprintf(pid, sizeof(pid), "%*s%s", (int)(p->depth > 8 ? 16 : 2 * p->depth), "",
		 num_or_dash(par, p->process.pid));
	const char *parent = p->parent >= 0 ? num_or_dash(par, j->processes[p->parent].process.pid)
					    : num_or_dash(par, p->process.ppid);
	const struct cgtrace_job_device *cpu = cpu_of(p);
	printf("%-14s %-7s %-5s %-12s %10s %10s %10s  %s%s\n", pid, parent,
	       num_or_dash(rank, p->process.rank), p->process.host[0] ? p->process.host : "-",
	       cpu ? cli_bytes(peak, cpu->peak_bytes, exact) : "-",
	       cpu ? cli_ns(at, cpu->peak_ns) : "-", cli_bytes(leak, p->leaked_bytes, exact),
	       cli_job_command(cmd, sizeof(cmd), &p->process), p->complete ? "" : "  [incomplete]");
	for (size_t d = 0; d < p->n_devices; d++) {
		const struct cgtrace_job_device *x = &p->devices[d];
		if (host_device(x->device))
			continue;
		printf("%-14s %-7s %-5s %-12s %10s %10s %10s  %s\n", "", "", "", x->device,
		       cli_bytes(peak, x->peak_bytes, exact), cli_ns(at, x->peak_ns),
		       cli_bytes(leak, x->leaked_bytes, exact), x->uuid ? x->uuid : "");
	}
}

static void print_processes(const struct cgtrace_job *j, uint64_t fold, bool exact)
{
	size_t n_fold = 0;
	uint64_t fold_peaks = 0;
	char a[32], b[32];
	bool *shown = shown_rows(j, fold);
	printf("\n%-14s %-7s %-5s %-12s %10s %10s %10s  %s\n", "pid", "parent", "rank", "host",
	       "host peak", "at", "leaked", "command");
	for (size_t t = 0; t < j->n_processes; t++) {
		const struct cgtrace_job_process *p = &j->processes[j->tree[t]];
		if (p->error)
			continue;
		if (!shown || !shown[j->tree[t]]) {
			n_fold++;
			fold_peaks += p->peak_bytes;
			continue;
		}
		print_row(j, p, exact);
	}
	free(shown);
	if (n_fold)
		printf("... and %zu process%s with a peak under %s, %s of peaks in all\n", n_fold,
		       n_fold == 1 ? "" : "es", cli_bytes(a, fold, exact),
		       cli_bytes(b, fold_peaks, exact));
}

static void print_hosts(const struct cgtrace_job *j, bool exact)
{
	char a[32], b[32];
	printf("\n%-24s %10s %16s %10s\n", "machine", "processes", "host peaks, sum", "leaked");
	for (size_t h = 0; h < j->n_hosts; h++) {
		const struct cgtrace_job_host *x = &j->hosts[h];
		printf("%-24s %10zu %16s %10s\n", x->host[0] ? x->host : "(unknown)", x->n_processes,
		       cli_bytes(a, x->peak_sum, exact), cli_bytes(b, x->leaked_bytes, exact));
	}
	printf("(each process's peak at its own moment, a fork child's inherited blocks left out)\n");
}

static void print_head(const struct cgtrace_job *j, size_t n_paths)
{
	char a[32], b[32];
	printf("%-12s %zu trace%s, %zu machine%s, %s from the first start to the last end\n", "job",
	       n_paths, n_paths == 1 ? "" : "s", j->n_hosts, j->n_hosts == 1 ? "" : "s",
	       cli_ns(a, j->span_ns));
	if (j->clock_error_ns)
		printf("%-12s aligned by the machines' wall clocks, each within %s of its own "
		       "(docs/jobs.md)\n",
		       "clocks", cli_ns(b, j->clock_error_ns));
	else
		printf("%-12s one boot's monotonic clock: times are exact\n", "clocks");
	for (size_t i = 0; i < j->n_processes; i++)
		if (j->processes[i].error)
			printf("%-12s %s\n", "unreadable", j->processes[i].message);
}

static int on_point(void *user, uint64_t t, uint64_t bytes)
{
	struct cli_jw *w = user;
	const uint64_t pt[2] = {t, bytes};
	cli_jw_u64s(w, pt, 2);
	return 0;
}

/* A process's clock readings: what places it on a job's axis (docs/jobs.md). */
static void json_clock(struct cli_jw *w, const struct cgtrace_process *x)
{
	cli_jw_key(w, "clock");
	cli_jw_begin_object(w);
	cli_jw_key_bool(w, "probe", x->has_clock);
	cli_jw_key_u64(w, "realtime_ns", x->realtime_ns);
	cli_jw_key_u64(w, "monotonic_ns", x->monotonic_ns);
	cli_jw_key_u64(w, "error_ns", x->clock_error_ns);
	cli_jw_key_str(w, "boot_id", x->boot_id);
	cli_jw_end_object(w);
}

static void json_process(struct cli_jw *w, const struct cgtrace_job *j,
			 const struct cgtrace_job_process *p, bool series)
{
	cli_jw_begin_object(w);
	cli_jw_key_str(w, "path", p->path);
	if (p->error) {
		cli_jw_key_str(w, "error", p->message);
		cli_jw_end_object(w);
		return;
	}
	const struct cgtrace_process *x = &p->process;
	const struct {
		const char *key;
		int64_t v;
	} ids[] = {{"pid", x->pid},		  {"ppid", x->ppid},
		   {"forked_from", x->forked_from}, {"rank", x->rank},
		   {"local_rank", x->local_rank},	  {"world_size", x->world_size},
		   {"parent", p->parent}};
	for (size_t i = 0; i < sizeof(ids) / sizeof(*ids); i++) {
		cli_jw_key(w, ids[i].key);
		if (ids[i].v < 0)
			cli_jw_null(w);
		else
			cli_jw_i64(w, ids[i].v);
	}
	cli_jw_key_str(w, "rank_source", x->rank_source);
	cli_jw_key_str(w, "host", x->host);
	cli_jw_key_str(w, "executable", x->executable);
	cli_jw_key_str(w, "cmdline", x->cmdline);
	json_clock(w, x);
	cli_jw_key_u64(w, "depth", p->depth);
	cli_jw_key_u64(w, "start_ns", p->start_ns);
	cli_jw_key_u64(w, "end_ns", p->end_ns);
	cli_jw_key_bool(w, "complete", p->complete);
	cli_jw_key_u64(w, "alloc_count", p->alloc_count);
	cli_jw_key_u64(w, "free_count", p->free_count);
	cli_jw_key_u64(w, "peak_bytes", p->peak_bytes);
	cli_jw_key_u64(w, "leaked_bytes", p->leaked_bytes);
	cli_jw_key(w, "devices");
	cli_jw_begin_array(w);
	for (size_t d = 0; d < p->n_devices; d++) {
		const struct cgtrace_job_device *v = &p->devices[d];
		static const struct cli_jw_field f[] = {
		    CLI_JW_U64(struct cgtrace_job_device, peak_bytes),
		    CLI_JW_U64(struct cgtrace_job_device, peak_ns),
		    CLI_JW_U64(struct cgtrace_job_device, final_bytes),
		    CLI_JW_U64(struct cgtrace_job_device, alloc_count),
		    CLI_JW_U64(struct cgtrace_job_device, free_count),
		    CLI_JW_U64(struct cgtrace_job_device, capacity_bytes),
		    CLI_JW_U64(struct cgtrace_job_device, inherited_at_peak),
		    CLI_JW_U64(struct cgtrace_job_device, leaked_bytes),
		};
		cli_jw_begin_object(w);
		cli_jw_key_str(w, "device", v->device);
		cli_jw_key_str(w, "uuid", v->uuid);
		cli_jw_key_str(w, "name", v->name);
		cli_jw_u64_fields(w, v, f, sizeof(f) / sizeof(*f));
		if (series && strcmp(v->device, "cpu") != 0) {
			cli_jw_key(w, "series");
			cli_jw_begin_array(w);
			cgtrace_job_device_each(j, (size_t)(p - j->processes), d, on_point, w);
			cli_jw_end_array(w);
		}
		cli_jw_end_object(w);
	}
	cli_jw_end_array(w);
	cli_jw_end_object(w);
}

static int print_json(const struct cgtrace_job *j, bool series)
{
	struct cli_buf b = {0};
	struct cli_jw w;
	cli_jw_init(&w, &b);
	cli_jw_begin_object(&w);
	cli_jw_key_u64(&w, "process_count", j->n_processes);
	cli_jw_key_u64(&w, "error_count", j->n_errors);
	cli_jw_key_u64(&w, "span_ns", j->span_ns);
	cli_jw_key_u64(&w, "zero_realtime_ns", j->zero_realtime_ns);
	cli_jw_key_u64(&w, "clock_error_ns", j->clock_error_ns);
	cli_jw_key(&w, "processes");
	cli_jw_begin_array(&w);
	for (size_t i = 0; i < j->n_processes; i++)
		json_process(&w, j, &j->processes[i], series);
	cli_jw_end_array(&w);
	cli_jw_key(&w, "tree");
	cli_jw_begin_array(&w);
	for (size_t i = 0; i < j->n_processes; i++)
		cli_jw_u64(&w, j->tree[i]);
	cli_jw_end_array(&w);
	cli_jw_key(&w, "machines");
	cli_jw_begin_array(&w);
	for (size_t h = 0; h < j->n_hosts; h++) {
		cli_jw_begin_object(&w);
		cli_jw_key_str(&w, "host", j->hosts[h].host);
		cli_jw_key_u64(&w, "process_count", j->hosts[h].n_processes);
		cli_jw_key_u64(&w, "host_peak_sum_bytes", j->hosts[h].peak_sum);
		cli_jw_key_u64(&w, "leaked_bytes", j->hosts[h].leaked_bytes);
		cli_jw_end_object(&w);
	}
	cli_jw_end_array(&w);
	cli_jw_key(&w, "gpus");
	cli_job_json_gpus(&w, j);
	cli_jw_end_object(&w);
	return cli_jw_print(&w);
}

int cli_job_summary(char *const *paths, size_t n, const struct cli_job_opts *o)
{
	struct cgtrace_job *j = cli_job_load(paths, n, o->jobs, CGTRACE_READ_SKIP_STACKS);
	if (!j)
		return CLI_FAIL;
	int status = CLI_OK;
	if (o->json) {
		status = print_json(j, o->series);
	} else {
		print_head(j, n);
		print_processes(j, o->fold, o->exact);
		print_hosts(j, o->exact);
		cli_job_print_gpus(j, o->exact);
		if (fflush(stdout) || ferror(stdout))
			status = CLI_FAIL;
	}
	/* Every readable process is summed; an unreadable one still fails the command. */
	if (cli_job_errors(j) != CLI_OK)
		status = CLI_FAIL;
	cgtrace_job_free(j);
	return status;
}

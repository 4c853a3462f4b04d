/* SPDX-License-Identifier: MIT */
/* cgtrace top: allocation sites ranked by what they held, allocated, leaked. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "job-load.h"
#include "job-sites.h"
#include "job-text.h"

struct top_opts {
	enum cli_site site;
	enum cli_by by;
	size_t n, jobs;
	const char *device;
	bool full, json, exact, by_process;
};

static int run(int argc, char **argv);

const struct cli_cmd cli_top = {
    .name = "top",
    .args = "[--by " CLI_BY_NAMES "] [-n N] [--device D] [--full] [--json] [--site python|native] [--bytes] [--by-process] [--jobs N] TRACE... | DIR",
    .help = "Ranks allocation sites, bottom-up: the first frame of each recorded call\n"
            "stack in the user's code (not the allocator's, the probe's, or the C and\n"
            "C++ libraries' own), resolved to its function and line from the modules\n"
            "the trace recorded (docs/symbols.md). One row per site and device.\n\n"
            "Several traces, or a folder of them (cgprobe -o DIR/), are one job\n"
            "(docs/jobs.md): a site is its frame as printed, so the same line in\n"
            "every rank is one row, its figures summed over the processes that have\n"
            "it (the processes column), on a kind of device (cuda:* where the ranks'\n"
            "device numbers differ); --device D takes each process's device D.\n\n",
    .label_width = 16,
    .opts = (const struct cli_opt[]){
        {.name = "by", .kind = CLI_OPT_CHOICE, .offset = offsetof(struct top_opts, by),
         .choices = cli_by_choices},
        {.short_name = 'n', .kind = CLI_OPT_COUNT, .offset = offsetof(struct top_opts, n),
         .arg = "N", .help = "rows shown (default 20, 0 = all)"},
        {.name = "device", .kind = CLI_OPT_STR, .offset = offsetof(struct top_opts, device),
         .arg = "D", .help = "only the sites of device D (cpu, cuda:0, ...)"},
        {.name = "full", .offset = offsetof(struct top_opts, full),
         .help = "one row per whole stack, with all its frames"},
        {.name = "json", .offset = offsetof(struct top_opts, json),
         .help = "{\"by\", \"sites\": [{device, stacks, count, total_bytes,\n"
                 "peak_count, peak_bytes, leaked_count, leaked_bytes,\n"
                 "temporary_count, preexisting (when true), frames: [{address,\n"
                 "function, file, line, module, offset, inlined}]}]}; of a job,\n"
                 "processes after device (by process: path, pid, rank)"},
        CLI_OPT_SITE(struct top_opts, site),
        CLI_OPT_BYTES(struct top_opts, exact),
        {.name = "by-process", .offset = offsetof(struct top_opts, by_process),
         .help = "a job: a row per process and site, the process named\n"
                 "(its rank, else its pid; JSON: path, pid, rank)"},
        CLI_OPT_JOBS(struct top_opts, jobs),
        {0},
    },
    .run = run,
};

static int print_json(struct cli_sites *s, const struct cli_site_row *rows, size_t n,
                      const struct top_opts *o)
{
	struct cli_buf b = {0};
	struct cli_jw w;
	cli_jw_init(&w, &b);
	cli_jw_begin_object(&w);
	cli_jw_key_str(&w, "by", cli_by_name(o->by));
	cli_jw_key(&w, "sites");
	cli_jw_begin_array(&w);
	for (size_t i = 0; i < n; i++) {
		cli_jw_begin_object(&w);
		cli_jw_key_str(&w, "device", rows[i].device);
		if (o->full)
			cli_jw_key_u64(&w, "stack_id", rows[i].sum.stack_id);
		else
			cli_jw_key_u64(&w, "stacks", rows[i].n_stacks);
		cli_json_stat(&w, &rows[i].sum);
		cli_jw_key(&w, "frames");
		cli_json_frames(&w, cli_sites_stack(s, rows[i].stack_id), o->full);
		cli_jw_end_object(&w);
	}
	cli_jw_end_array(&w);
	cli_jw_end_object(&w);
	return cli_jw_print(&w);
}

static void print_human(struct cli_sites *s, const struct cli_site_row *rows, size_t n,
                        size_t total, const struct top_opts *o)
{
	char v[32], c[32], name[600];
	printf("Allocation %s by %s, %zu of %zu:\n", o->full ? "stacks" : "sites",
	       cli_by_name(o->by), n, total);
	printf("%4s %14s %10s %7s  %-10s %s\n", "#", cli_by_name(o->by), "allocs",
	       o->full ? "stack" : "stacks", "device", o->full ? "frames" : "site");
	for (size_t i = 0; i < n; i++) {
		const struct cli_site_row *r = &rows[i];
		uint64_t val = cli_by_value(&r->sum, o->by);
		char id[32];
		snprintf(id, sizeof(id), "%llu",
		         (unsigned long long)(o->full ? r->sum.stack_id : r->n_stacks));
		printf("%4zu %14s %10s %7s  %-10s %s\n", i + 1,
		       cli_by_bytes(o->by) ? cli_bytes(v, val, o->exact) : cli_count(v, val),
		       cli_count(c, r->sum.count), id, r->device,
		       o->full ? "" : cli_frame_name(name, sizeof(name), r->site));
		if (o->full)
			cli_print_row_frames(s, r, true, "        ");
	}
}

/* ---- a job ---- */

static int print_job_json(const struct cli_job_sites *js, size_t shown, const struct top_opts *o)
{
	struct cli_buf b = {0};
	struct cli_jw w;
	cli_jw_init(&w, &b);
	cli_jw_begin_object(&w);
	cli_jw_key_str(&w, "by", cli_by_name(o->by));
	cli_jw_key(&w, "sites");
	cli_jw_begin_array(&w);
	for (size_t i = 0; i < shown; i++) {
		const struct cli_job_row *r = &js->rows[i];
		const struct cli_job_proc *p = &js->procs[r->process];
		cli_jw_begin_object(&w);
		cli_jw_key_str(&w, "device", r->device);
		if (o->by_process) {
			cli_jw_key_str(&w, "path", p->path);
			cli_job_json_ids(&w, &p->process);
		} else {
			cli_jw_key_u64(&w, "processes", r->n_processes);
		}
		if (o->full && o->by_process)
			cli_jw_key_u64(&w, "stack_id", r->stack_id);
		else
			cli_jw_key_u64(&w, "stacks", r->n_stacks);
		cli_json_stat(&w, &r->sum);
		cli_jw_key(&w, "frames");
		cli_json_frames(&w, r->stack, true);
		cli_jw_end_object(&w);
	}
	cli_jw_end_array(&w);
	cli_jw_end_object(&w);
	return cli_jw_print(&w);
}

/* As one trace's table, with the processes column, or by process the process's. */
static void print_job_human(const struct cli_job_sites *js, size_t shown, const struct top_opts *o)
{
	char v[32], c[32], id[32], who[48];
	printf("Allocation %s by %s, %zu of %zu, %s %s:\n", o->full ? "stacks" : "sites",
	       cli_by_name(o->by), shown, js->n_total,
	       o->by_process ? "a row per process of" : "across",
	       cli_job_processes(who, js->n_read));
	printf("%4s %14s %10s %9s %7s  %-10s %s\n", "#", cli_by_name(o->by), "allocs",
	       o->by_process ? "process" : "processes",
	       o->full && o->by_process ? "stack" : "stacks", "device",
	       o->full ? "frames" : "site");
	for (size_t i = 0; i < shown; i++) {
		const struct cli_job_row *r = &js->rows[i];
		uint64_t val = cli_by_value(&r->sum, o->by);
		snprintf(id, sizeof(id), "%llu",
			 (unsigned long long)(o->full && o->by_process ? r->stack_id : r->n_stacks));
		if (o->by_process)
			cli_job_name(who, sizeof(who), &js->procs[r->process].process);
		else
			snprintf(who, sizeof(who), "%zu", r->n_processes);
		printf("%4zu %14s %10s %9s %7s  %-10s %s\n", i + 1,
		       cli_by_bytes(o->by) ? cli_bytes(v, val, o->exact) : cli_count(v, val),
		       cli_count(c, r->sum.count), who, id, r->device, o->full ? "" : r->site);
		if (o->full)
			cli_print_site_frames(r->stack, r->preexisting, true, "        ");
	}
}

static int run_job(int argc, char **argv, const struct top_opts *o)
{
	size_t n;
	char **paths = cli_job_paths_of(argc, argv, &n);
	if (!paths)
		return CLI_FAIL;
	const struct cli_job_sites_opts jo = {
	    .device = o->device,
	    .by = o->by,
	    .by_stack = o->full,
	    .full = o->full,
	    .by_process = o->by_process,
	    .frames = o->json || o->full,
	    .keep = o->n,
	    .jobs = o->jobs,
	};
	struct cli_job_sites js;
	int status = cli_job_sites_read(&js, paths, n, &jo);
	if (status >= 0) {
		size_t shown = o->n && o->n < js.n_rows ? o->n : js.n_rows;
		int out = o->json ? print_job_json(&js, shown, o) : CLI_OK;
		if (!o->json)
			print_job_human(&js, shown, o);
		if (out != CLI_OK || (!o->json && (fflush(stdout) || ferror(stdout))))
			status = CLI_FAIL;
	}
	cli_job_sites_free(&js);
	free(paths);
	return status >= 0 ? status : CLI_FAIL;
}

static int run(int argc, char **argv)
{
	struct top_opts o = {.by = CLI_BY_PEAK, .n = 20};
	int status;
	if (!cli_parse(&cli_top, argc, argv, &o, &status))
		return status;
	cli_site_mode = o.site;
	if (cli_job_args(argc, argv))
		return run_job(argc, argv, &o);
	if (o.by_process)
		return cli_usage_error(&cli_top, "--by-process takes a job: several traces or a folder");
	const char *path = cli_trace_arg(&cli_top, argc, argv, &status);
	if (!path)
		return status;
	struct cli_sites s;
	struct cli_site_row *rows;
	size_t n;
	if (cli_sites_open_rows(&s, path, o.device, o.full, o.by, &rows, &n) != CLI_OK)
		return CLI_FAIL;
	size_t shown = o.n && o.n < n ? o.n : n;
	if (o.json)
		status = print_json(&s, rows, shown, &o);
	else
		print_human(&s, rows, shown, n, &o);
	free(rows);
	cli_sites_close(&s);
	if (!o.json && (fflush(stdout) || ferror(stdout)))
		return CLI_FAIL;
	return status;
}

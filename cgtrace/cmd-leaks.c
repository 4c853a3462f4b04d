/* SPDX-License-Identifier: MIT */
/* cgtrace leaks: allocations never freed, grouped by call stack, largest first. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "job-load.h"
#include "job-sites.h"
#include "job-text.h"

struct leaks_args {
	enum cli_site site;
	const char *device;
	size_t top, jobs;
	bool json, exact, by_process;
};

static int run(int argc, char **argv);

const struct cli_cmd cli_leaks = {
    .name = "leaks",
    .args = "[-n N] [--device D] [--json] [--site python|native] [--bytes] [--by-process] [--jobs N] TRACE... | DIR",
    .help = "Lists the allocations still live at the end of the trace (never freed),\n"
            "grouped by call stack, most bytes first, each stack from its allocation\n"
            "site outwards.\n\n"
            "Several traces, or a folder of them (cgprobe -o DIR/), are one job\n"
            "(docs/jobs.md): a stack is its frames as printed, so the same stack in\n"
            "every rank is one, its leaks summed over the processes that have it, on\n"
            "a kind of device (cuda:* where the ranks' device numbers differ).\n\n",
    .label_width = 12,
    .opts = (const struct cli_opt[]){
        {.short_name = 'n', .kind = CLI_OPT_COUNT, .offset = offsetof(struct leaks_args, top),
         .arg = "N", .help = "stacks shown (default 20, 0 = all)"},
        {.name = "device", .kind = CLI_OPT_STR, .offset = offsetof(struct leaks_args, device),
         .arg = "D", .help = "only device D (cpu, cuda:0, ...)"},
        {.name = "json", .offset = offsetof(struct leaks_args, json),
         .help = "{\"leaked_count\", \"leaked_bytes\", \"stacks\": [{device,\n"
                 "stack_id, leaked_count, leaked_bytes, frames}]}; of a job,\n"
                 "processes and stacks in place of stack_id"},
        CLI_OPT_SITE(struct leaks_args, site),
        CLI_OPT_BYTES(struct leaks_args, exact),
        {.name = "by-process", .offset = offsetof(struct leaks_args, by_process),
         .help = "a job: a stack per process, the process named (its rank,\n"
                 "else its pid; JSON: path, pid, rank, stack_id)"},
        CLI_OPT_JOBS(struct leaks_args, jobs),
        {0},
    },
    .run = run,
};

static uint64_t sat(uint64_t a, uint64_t b)
{
	return a + b < a ? UINT64_MAX : a + b;
}

/* "1 allocation", "2 allocations". */
static const char *counted(char buf[48], uint64_t n, const char *noun)
{
	char c[32];
	snprintf(buf, 48, "%s %s%s", cli_count(c, n), noun, n == 1 ? "" : "s");
	return buf;
}

static int print_json(struct cli_sites *s, const struct cli_site_row *rows, size_t n,
                      size_t shown)
{
	struct cli_buf b = {0};
	struct cli_jw w;
	uint64_t count = 0, bytes = 0;
	for (size_t i = 0; i < n; i++) {
		count = sat(count, rows[i].sum.leaked_count);
		bytes = sat(bytes, rows[i].sum.leaked_bytes);
	}
	cli_jw_init(&w, &b);
	cli_jw_begin_object(&w);
	cli_jw_key_u64(&w, "leaked_count", count);
	cli_jw_key_u64(&w, "leaked_bytes", bytes);
	cli_jw_key(&w, "stacks");
	cli_jw_begin_array(&w);
	for (size_t i = 0; i < shown; i++) {
		cli_jw_begin_object(&w);
		cli_jw_key_str(&w, "device", rows[i].device);
		cli_jw_key_u64(&w, "stack_id", rows[i].sum.stack_id);
		cli_jw_key_u64(&w, "leaked_count", rows[i].sum.leaked_count);
		cli_jw_key_u64(&w, "leaked_bytes", rows[i].sum.leaked_bytes);
		cli_jw_key(&w, "frames");
		cli_json_frames(&w, cli_sites_stack(s, rows[i].stack_id), false);
		cli_jw_end_object(&w);
	}
	cli_jw_end_array(&w);
	cli_jw_end_object(&w);
	return cli_jw_print(&w);
}

static void print_human(struct cli_sites *s, const struct cli_site_row *rows, size_t n,
                        size_t shown, bool exact)
{
	char a[48], b[48], c[48];
	uint64_t count = 0, bytes = 0;
	for (size_t i = 0; i < n; i++) {
		count = sat(count, rows[i].sum.leaked_count);
		bytes = sat(bytes, rows[i].sum.leaked_bytes);
	}
	if (!n) {
		printf("No leaks: every allocation was freed.\n");
		return;
	}
	printf("%s never freed, %s, from %s:\n", counted(a, count, "allocation"),
	       cli_bytes(b, bytes, exact), counted(c, n, "stack"));
	for (size_t i = 0; i < shown; i++) {
		const struct cli_site_row *r = &rows[i];
		printf("\n%s in %s on %s", cli_bytes(a, r->sum.leaked_bytes, exact),
		       counted(b, r->sum.leaked_count, "allocation"), r->device);
		if (r->sum.stack_id)
			printf(" (stack %llu)", (unsigned long long)r->sum.stack_id);
		printf(":\n");
		cli_print_row_frames(s, r, false, "    ");
	}
	if (shown < n)
		printf("\n... and %s more stacks (-n 0 lists all)\n", cli_count(a, n - shown));
}

/* ---- a job ---- */

/* Every row's leaks, and the rows left out of a process's (by process). */
static void job_total(const struct cli_job_sites *js, uint64_t *count, uint64_t *bytes)
{
	*count = js->rest.leaked_count;
	*bytes = js->rest.leaked_bytes;
	for (size_t i = 0; i < js->n_rows; i++) {
		*count = sat(*count, js->rows[i].sum.leaked_count);
		*bytes = sat(*bytes, js->rows[i].sum.leaked_bytes);
	}
}

static int print_job_json(const struct cli_job_sites *js, size_t shown, bool by_process)
{
	struct cli_buf b = {0};
	struct cli_jw w;
	uint64_t count, bytes;
	job_total(js, &count, &bytes);
	cli_jw_init(&w, &b);
	cli_jw_begin_object(&w);
	cli_jw_key_u64(&w, "leaked_count", count);
	cli_jw_key_u64(&w, "leaked_bytes", bytes);
	cli_jw_key(&w, "stacks");
	cli_jw_begin_array(&w);
	for (size_t i = 0; i < shown; i++) {
		const struct cli_job_row *r = &js->rows[i];
		const struct cli_job_proc *p = &js->procs[r->process];
		cli_jw_begin_object(&w);
		cli_jw_key_str(&w, "device", r->device);
		if (by_process) {
			cli_jw_key_str(&w, "path", p->path);
			cli_job_json_ids(&w, &p->process);
			cli_jw_key_u64(&w, "stack_id", r->stack_id);
		} else {
			cli_jw_key_u64(&w, "processes", r->n_processes);
			cli_jw_key_u64(&w, "stacks", r->n_stacks);
		}
		cli_jw_key_u64(&w, "leaked_count", r->sum.leaked_count);
		cli_jw_key_u64(&w, "leaked_bytes", r->sum.leaked_bytes);
		cli_jw_key(&w, "frames");
		cli_json_frames(&w, r->stack, true);
		cli_jw_end_object(&w);
	}
	cli_jw_end_array(&w);
	cli_jw_end_object(&w);
	return cli_jw_print(&w);
}

/* As one trace's list; each stack says in how many processes, or by process in which. */
static void print_job_human(const struct cli_job_sites *js, size_t shown, bool by_process,
			    bool exact)
{
	char a[48], b[48], c[48], who[48];
	uint64_t count, bytes;
	job_total(js, &count, &bytes);
	if (!js->n_total) {
		printf("No leaks: every allocation of %s was freed.\n",
		       cli_job_processes(a, js->n_read));
		return;
	}
	printf("%s never freed, %s, from %s of %s:\n", counted(a, count, "allocation"),
	       cli_bytes(b, bytes, exact), counted(c, js->n_total, "stack"),
	       cli_job_processes(who, js->n_read));
	for (size_t i = 0; i < shown; i++) {
		const struct cli_job_row *r = &js->rows[i];
		printf("\n%s in %s on %s", cli_bytes(a, r->sum.leaked_bytes, exact),
		       counted(b, r->sum.leaked_count, "allocation"), r->device);
		if (by_process)
			printf(", %s", cli_job_name(who, sizeof(who), &js->procs[r->process].process));
		else
			printf(", in %s", cli_job_processes(who, r->n_processes));
		if (by_process && r->stack_id)
			printf(" (stack %llu)", (unsigned long long)r->stack_id);
		printf(":\n");
		cli_print_site_frames(r->stack, r->preexisting, true, "    ");
	}
	if (shown < js->n_total)
		printf("\n... and %s more stacks (-n 0 lists all)\n", cli_count(a, js->n_total - shown));
}

static int run_job(int argc, char **argv, const struct leaks_args *a)
{
	size_t n;
	char **paths = cli_job_paths_of(argc, argv, &n);
	if (!paths)
		return CLI_FAIL;
	const struct cli_job_sites_opts jo = {
	    .device = a->device,
	    .by = CLI_BY_LEAKED,
	    .by_stack = true,
	    .by_process = a->by_process,
	    .frames = true,
	    .keep = a->top,
	    .jobs = a->jobs,
	};
	struct cli_job_sites js;
	int status = cli_job_sites_read(&js, paths, n, &jo);
	if (status >= 0) {
		size_t shown = a->top && a->top < js.n_rows ? a->top : js.n_rows;
		int out = a->json ? print_job_json(&js, shown, a->by_process) : CLI_OK;
		if (!a->json)
			print_job_human(&js, shown, a->by_process, a->exact);
		if (out != CLI_OK || (!a->json && (fflush(stdout) || ferror(stdout))))
			status = CLI_FAIL;
	}
	cli_job_sites_free(&js);
	free(paths);
	return status >= 0 ? status : CLI_FAIL;
}

static int run(int argc, char **argv)
{
	struct leaks_args a = {.top = 20};
	int status;
	if (!cli_parse(&cli_leaks, argc, argv, &a, &status))
		return status;
	cli_site_mode = a.site;
	if (cli_job_args(argc, argv))
		return run_job(argc, argv, &a);
	if (a.by_process)
		return cli_usage_error(&cli_leaks, "--by-process takes a job: several traces or a folder");
	const char *path = cli_trace_arg(&cli_leaks, argc, argv, &status);
	if (!path)
		return status;
	struct cli_sites s;
	struct cli_site_row *rows;
	size_t n;
	if (cli_sites_open_rows(&s, path, a.device, true, CLI_BY_LEAKED, &rows, &n) != CLI_OK)
		return CLI_FAIL;
	size_t shown = a.top && a.top < n ? a.top : n;
	if (a.json)
		status = print_json(&s, rows, n, shown);
	else
		print_human(&s, rows, n, shown, a.exact);
	free(rows);
	cli_sites_close(&s);
	if (!a.json && (fflush(stdout) || ferror(stdout)))
		return CLI_FAIL;
	return status;
}

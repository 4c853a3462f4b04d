/* SPDX-License-Identifier: MIT */
/* cgtrace report: one self-contained HTML page of a trace's view (docs/report.md). */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "report/data.h"
#include "report/job-page.h"
#include "report/page-out.h"

struct report_args {
	const char *out;
	const char *baseline;
	struct cgtrace_view_options vo;
};

static int run(int argc, char **argv);

const struct cli_cmd cli_report = {
    .name = "report",
    .args = "[-o FILE] [--baseline BASE] [--buckets N] [--allocs N] TRACE... | DIR",
    .help = "Writes one HTML file that shows the trace: summary cards (each device's\n"
            "peak and when, what was never freed, allocation counts), an interactive\n"
            "timeline of live bytes per device stacked by category or by allocation\n"
            "(zoom with the wheel or a drag, hover for time and bytes, click for what\n"
            "was live then), the peak's breakdown, the top sites and leaks (with call\n"
            "stacks), memory by span and step, device checkpoints and out-of-memory\n"
            "failures. The page is self-contained (inline style and script, no request\n"
            "of any kind) and opens offline in any browser.\n\n"
            "Several traces, or a folder of them (cgprobe -o DIR/), are one job\n"
            "(docs/jobs.md): one page with a lane per process and per physical GPU\n"
            "(the bytes of all its processes summed, its peak marked) on the job's\n"
            "time axis and the table of processes; a click on a process opens its\n"
            "own page, which the file holds too.\n\n"
            "With --baseline BASE (a trace, or a job's traces or folder, as the page's\n"
            "own input) the page compares this run with BASE: BASE's live bytes drawn as\n"
            "a muted line under each device's stack (aligned at both runs' starts, or by\n"
            "training update number when both have updates: a switch on the page), and\n"
            "the summary's figures with BASE's beside them and the signed difference\n"
            "(peak per device, never freed, allocations). A job's lanes are matched by\n"
            "rank, each GPU's sum by its UUID, and each process's own page compares it\n"
            "with its match.\n\n",
    .label_width = 19,
    .opts = (const struct cli_opt[]){
        {.name = "output", .short_name = 'o', .kind = CLI_OPT_STR,
         .offset = offsetof(struct report_args, out), .arg = "FILE",
         .help = "the page (default: standard output)"},
        {.name = "baseline", .kind = CLI_OPT_STR,
         .offset = offsetof(struct report_args, baseline), .arg = "BASE",
         .help = "the run to compare with: a trace, or for a job a trace or\n"
                 "a folder; unreadable: one line naming it, status 1"},
        {.name = "buckets", .kind = CLI_OPT_COUNT,
         .offset = offsetof(struct report_args, vo.buckets), .arg = "N", .min = 1,
         .max = 100000,
         .help = "time buckets across the trace (default 2000, <= 100000);\n"
                 "a job: of each process (default 2000, less past 8 processes)"},
        {.name = "allocs", .kind = CLI_OPT_COUNT,
         .offset = offsetof(struct report_args, vo.max_allocs), .arg = "N", .min = 1,
         .max = 100000,
         .help = "largest allocations drawn one by one (default 500,\n"
                 "<= 100000); a job: of each process (less past 8)"},
        {0},
    },
    .help_tail = "\nThe page embeds the trace's view (docs/views.md), whose size does not grow\n"
                 "with the record count: a few MB at most with the defaults; a job's, each\n"
                 "process's, shared out past 8 processes (docs/report.md).\n\n" CLI_OUT_HELP,
    .run = run,
};

static int write_page(const char *out, const struct cli_buf *data)
{
	struct cli_out o;
	if (cli_out_open(&o, out) != CLI_OK)
		return CLI_FAIL;
	bool ok = report_page_head(o.f) && report_page_data(o.f, data->p, data->len) &&
	          report_page_tail(o.f);
	return cli_out_close(&o, ok);
}

/* Several traces, or a folder of them: one page of the job. */
static int run_job(int argc, char **argv, const struct report_args *a)
{
	char **paths, err[512];
	size_t n;
	if (cgtrace_job_paths((const char *const *)argv + optind, (size_t)(argc - optind), &paths, &n,
	                      err, sizeof(err)) < 0) {
		fprintf(stderr, "%s\n", err);
		return CLI_FAIL;
	}
	int status = cli_report_job(paths, n, a->out, &a->vo, a->baseline);
	free(paths);
	return status;
}

static int run(int argc, char **argv)
{
	struct report_args a = {0};
	int status;
	if (!cli_parse(&cli_report, argc, argv, &a, &status))
		return status;
	if (cli_job_args(argc, argv))
		return run_job(argc, argv, &a);
	const char *path = cli_trace_arg(&cli_report, argc, argv, &status);
	if (!path)
		return status;
	struct stat sb;
	if (a.baseline && stat(a.baseline, &sb) == 0 && S_ISDIR(sb.st_mode))
		return cli_usage_error(&cli_report, "--baseline %s is a job's folder and %s one trace",
		                       a.baseline, path);
	/* BASE first: a bad one fails before the new trace is read. */
	struct cgtrace_view *bv = NULL;
	if (a.baseline && !(bv = report_base_load(a.baseline, &a.vo)))
		return CLI_FAIL;
	/* The page lists the largest allocations of the peak, and sums the rest. */
	struct cgtrace_view *v = cli_view_load(path, &a.vo, CGTRACE_READ_PEAK_LARGEST);
	if (!v) {
		cgtrace_view_free(bv);
		return CLI_FAIL;
	}
	struct cli_buf data = {0};
	struct report_limits lim;
	report_limits(&lim, 1);
	const struct report_base base = {.v = bv, .name = bv ? report_trace_name(a.baseline) : NULL};
	status = report_json(&data, v, path, report_trace_name(path), &lim, bv ? &base : NULL);
	cgtrace_view_free(v);
	cgtrace_view_free(bv);
	if (status == CLI_OK)
		status = write_page(a.out, &data);
	cli_buf_fini(&data);
	return status;
}

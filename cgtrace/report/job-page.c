/* SPDX-License-Identifier: MIT */
/*
 * The page of a job (job-page.h): the job's block first, then for each
 * process its lane and its own page's data, each a block of its own that
 * the page parses only when drawn. Views are read one at a time and
 * written as they come: the memory is the job's figures and one view.
 */
#include "job-page.h"

#include <stdlib.h>
#include <string.h>

#include "job-data.h"
#include "job-names.h"
#include "page-out.h"

/* Process i's lane and page, as blocks cg-lane-I and cg-p-I; false when they could not be made. */
static bool process_blocks(FILE *f, const struct cgtrace_job_process *p, size_t i,
                           const struct cgtrace_view_options *vo, const struct report_limits *lim,
                           bool *written)
{
	struct cgtrace_view *v = cli_view_load(p->path, vo, CGTRACE_READ_PEAK_LARGEST);
	if (!v)
		return false;
	struct cli_buf lane = {0}, page = {0};
	bool ok = report_lane_json(&lane, v) == 0;
	if (!ok)
		fprintf(stderr, "%s: out of memory\n", p->path);
	ok = ok && report_json(&page, v, p->path, report_trace_name(p->path), lim) == CLI_OK;
	cgtrace_view_free(v);
	char id[48];
	if (ok) {
		snprintf(id, sizeof(id), "cg-lane-%zu", i);
		*written = report_page_block(f, id) && report_page_data(f, lane.p, lane.len);
		snprintf(id, sizeof(id), "cg-p-%zu", i);
		*written =
		    *written && report_page_block(f, id) && report_page_data(f, page.p, page.len);
	}
	cli_buf_fini(&lane);
	cli_buf_fini(&page);
	return ok;
}

static int write_page(const char *out, const struct cgtrace_job *j, const struct cli_buf *data,
                      const struct cgtrace_view_options *vo, const struct report_limits *lim,
                      size_t *unread)
{
	struct cli_out o;
	if (cli_out_open(&o, out) != CLI_OK)
		return CLI_FAIL;
	bool ok = report_page_head(o.f) && report_page_data(o.f, data->p, data->len);
	for (size_t i = 0; ok && i < j->n_processes; i++) {
		const struct cgtrace_job_process *p = &j->processes[i];
		if (p->error) {
			fprintf(stderr, "%s\n", p->message);
			++*unread;
		} else if (!process_blocks(o.f, p, i, vo, lim, &ok)) {
			++*unread;
		}
	}
	ok = ok && report_page_tail(o.f);
	return cli_out_close(&o, ok);
}

int cli_report_job(char *const *paths, size_t n, const char *out,
                   const struct cgtrace_view_options *asked)
{
	/* Warnings are the views' to say: each trace is read again for its view. */
	const struct cgtrace_job_options jo = {.flags = CGTRACE_READ_SKIP_STACKS};
	struct cgtrace_job *j;
	int ret = cgtrace_job_read((const char *const *)paths, n, &jo, &j);
	if (ret < 0) {
		fprintf(stderr, "cgtrace: reading the job: %s\n", strerror(-ret));
		return CLI_FAIL;
	}
	/* Nothing to show: no file, as for one trace that cannot be read. */
	if (j->n_errors == j->n_processes) {
		for (size_t i = 0; i < j->n_processes; i++)
			fprintf(stderr, "%s\n", j->processes[i].message);
		cgtrace_job_free(j);
		return CLI_FAIL;
	}
	size_t pages = j->n_processes - j->n_errors, unread = 0, *order = NULL;
	struct cgtrace_view_options vo = *asked;
	struct report_limits lim;
	report_job_view_options(&vo, pages);
	report_limits(&lim, pages);
	struct cli_buf data = {0};
	ret = cli_job_order(j, &order);
	if (ret == 0)
		ret = report_job_json(&data, j, order, &vo, &lim);
	int status = CLI_FAIL;
	if (ret < 0)
		fprintf(stderr, "cgtrace: the job's page: %s\n", strerror(-ret));
	else
		status = write_page(out, j, &data, &vo, &lim, &unread);
	cli_buf_fini(&data);
	free(order);
	cgtrace_job_free(j);
	/* A trace that could not be read fails the command; the page shows the others. */
	return unread ? CLI_FAIL : status;
}

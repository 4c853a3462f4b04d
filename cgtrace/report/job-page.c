/* SPDX-License-Identifier: MIT */
/*
 * The page of a job (job-page.h): the job's block first, then for each
 * process its lane and its own page's data, each a block of its own that
 * the page parses only when drawn. Views are read one at a time and
 * written as they come: the memory is the job's figures and one view
 * (with a baseline, BASE's figures too, and its match's view beside).
 */
#include "job-page.h"

#include <stdlib.h>
#include <string.h>

#include "job-baseline.h"
#include "job-data.h"
#include "job-names.h"
#include "page-out.h"

/* The baseline job (--baseline BASE): its own block and what stands against what. */
struct job_base {
	struct cgtrace_job *j;
	size_t *order;
	long *process, *gpu;
	struct cli_buf data;
};

/* A lane's block, id "PREFIX-I", from view v; false when it could not be made or written. */
static bool lane_block(FILE *f, const char *prefix, size_t i, const struct cgtrace_view *v,
                       const char *path, bool *written)
{
	struct cli_buf lane = {0};
	bool ok = report_lane_json(&lane, v) == 0;
	if (!ok)
		fprintf(stderr, "%s: out of memory\n", path);
	char id[48];
	snprintf(id, sizeof(id), "%s-%zu", prefix, i);
	*written = *written &&
	           (!ok || (report_page_block(f, id) && report_page_data(f, lane.p, lane.len)));
	cli_buf_fini(&lane);
	return ok;
}

/*
 * Process i's lane and page, as blocks cg-lane-I and cg-p-I, and with a
 * baseline its match's lane, cg-base-lane-M, which its page is compared
 * with; false when they could not be made.
 */
static bool process_blocks(FILE *f, const struct cgtrace_job_process *p, size_t i,
                           const struct cgtrace_view_options *vo, const struct report_limits *lim,
                           const struct job_base *jb, bool *written)
{
	long m = jb ? jb->process[i] : -1;
	const char *bpath = m >= 0 ? jb->j->processes[m].path : NULL;
	struct cgtrace_view *bv = bpath ? report_base_load(bpath, vo) : NULL;
	if (bpath && !bv)
		return false;
	struct cgtrace_view *v = cli_view_load(p->path, vo, CGTRACE_READ_PEAK_LARGEST);
	bool ok = v && lane_block(f, "cg-lane", i, v, p->path, written);
	if (ok && bv)
		ok = lane_block(f, "cg-base-lane", (size_t)m, bv, bpath, written);
	struct cli_buf page = {0};
	const struct report_base base = {.v = bv, .name = bpath ? report_trace_name(bpath) : NULL};
	ok = ok && report_json(&page, v, p->path, report_trace_name(p->path), lim,
	                       bv ? &base : NULL) == CLI_OK;
	cgtrace_view_free(v);
	cgtrace_view_free(bv);
	char id[48];
	snprintf(id, sizeof(id), "cg-p-%zu", i);
	*written = *written &&
	           (!ok || (report_page_block(f, id) && report_page_data(f, page.p, page.len)));
	cli_buf_fini(&page);
	return ok;
}

static int write_page(const char *out, const struct cgtrace_job *j, const struct cli_buf *data,
                      const struct cgtrace_view_options *vo, const struct report_limits *lim,
                      const struct job_base *jb, size_t *unread)
{
	struct cli_out o;
	if (cli_out_open(&o, out) != CLI_OK)
		return CLI_FAIL;
	bool ok = report_page_head(o.f) && report_page_data(o.f, data->p, data->len);
	if (jb)
		ok = ok && report_page_block(o.f, "cg-base") &&
		     report_page_data(o.f, jb->data.p, jb->data.len);
	for (size_t i = 0; ok && i < j->n_processes; i++) {
		const struct cgtrace_job_process *p = &j->processes[i];
		if (p->error) {
			fprintf(stderr, "%s\n", p->message);
			++*unread;
		} else if (!process_blocks(o.f, p, i, vo, lim, jb, &ok)) {
			++*unread;
		}
	}
	ok = ok && report_page_tail(o.f);
	return cli_out_close(&o, ok);
}

/* Warnings are the views' to say: each trace is read again for its view. */
static const struct cgtrace_job_options job_read = {.flags = CGTRACE_READ_SKIP_STACKS};

/* BASE read as a job; each trace of it must be readable. CLI_FAIL printed. */
static int base_read(struct job_base *jb, const char *path)
{
	char **paths, err[512];
	size_t n;
	if (cgtrace_job_paths(&path, 1, &paths, &n, err, sizeof(err)) < 0) {
		fprintf(stderr, "%s\n", err);
		return CLI_FAIL;
	}
	int ret = cgtrace_job_read((const char *const *)paths, n, &job_read, &jb->j);
	free(paths);
	if (ret < 0) {
		fprintf(stderr, "%s: reading the baseline: %s\n", path, strerror(-ret));
		return CLI_FAIL;
	}
	for (size_t i = 0; i < jb->j->n_processes; i++)
		if (jb->j->processes[i].error)
			fprintf(stderr, "%s\n", jb->j->processes[i].message);
	return jb->j->n_errors ? CLI_FAIL : CLI_OK;
}

static void base_free(struct job_base *jb)
{
	cgtrace_job_free(jb->j);
	free(jb->order);
	free(jb->process);
	free(jb->gpu);
	cli_buf_fini(&jb->data);
}

/* The baseline's own block, as a job's, and the matches of j's processes and GPUs. 0 or -ENOMEM. */
static int base_blocks(struct job_base *jb, const struct cgtrace_job *j, const size_t *order,
                       const struct cgtrace_view_options *vo, const struct report_limits *lim)
{
	int ret = cli_job_order(jb->j, &jb->order);
	if (ret == 0)
		ret = report_job_json(&jb->data, jb->j, jb->order, vo, lim, NULL);
	if (ret == 0)
		ret = report_job_match(j, order, jb->j, jb->order, &jb->process, &jb->gpu);
	return ret;
}

int cli_report_job(char *const *paths, size_t n, const char *out,
                   const struct cgtrace_view_options *asked, const char *baseline)
{
	struct job_base base = {0}, *jb = baseline ? &base : NULL;
	/* BASE first: a bad one fails before the job is read. */
	if (jb && base_read(jb, baseline) != CLI_OK) {
		base_free(jb);
		return CLI_FAIL;
	}
	struct cgtrace_job *j;
	int ret = cgtrace_job_read((const char *const *)paths, n, &job_read, &j);
	if (ret < 0) {
		fprintf(stderr, "cgtrace: reading the job: %s\n", strerror(-ret));
		if (jb)
			base_free(jb);
		return CLI_FAIL;
	}
	/* Nothing to show: no file, as for one trace that cannot be read. */
	if (j->n_errors == j->n_processes) {
		for (size_t i = 0; i < j->n_processes; i++)
			fprintf(stderr, "%s\n", j->processes[i].message);
		cgtrace_job_free(j);
		if (jb)
			base_free(jb);
		return CLI_FAIL;
	}
	size_t pages = j->n_processes - j->n_errors, unread = 0, *order = NULL;
	struct cgtrace_view_options vo = *asked;
	struct report_limits lim;
	report_job_view_options(&vo, pages);
	report_limits(&lim, pages);
	struct cli_buf data = {0};
	ret = cli_job_order(j, &order);
	if (ret == 0 && jb)
		ret = base_blocks(jb, j, order, &vo, &lim);
	const struct report_job_base rb = {
	    .name = baseline ? report_trace_name(baseline) : NULL,
	    .traces = jb ? jb->j->n_processes : 0,
	    .process = jb ? jb->process : NULL,
	    .gpu = jb ? jb->gpu : NULL,
	};
	if (ret == 0)
		ret = report_job_json(&data, j, order, &vo, &lim, jb ? &rb : NULL);
	int status = CLI_FAIL;
	if (ret < 0)
		fprintf(stderr, "cgtrace: the job's page: %s\n", strerror(-ret));
	else
		status = write_page(out, j, &data, &vo, &lim, jb, &unread);
	cli_buf_fini(&data);
	free(order);
	cgtrace_job_free(j);
	if (jb)
		base_free(jb);
	/* A trace that could not be read fails the command; the page shows the others. */
	return unread ? CLI_FAIL : status;
}

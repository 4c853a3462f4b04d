/* SPDX-License-Identifier: MIT */
/*
 * The data of a job's page (docs/report.md, "A job"): the job's block,
 * what the job page draws, and each process's lane; each process's own
 * page is a trace's data block (data.h).
 */
#ifndef CGTRACE_REPORT_JOB_DATA_H
#define CGTRACE_REPORT_JOB_DATA_H

#include "data.h"

/* Buckets of each GPU's summed bytes on the job's lanes (two samples a bucket at most). */
#define REPORT_JOB_GPU_BUCKETS 2000

/*
 * The views each process's page is drawn from, among `pages`: what vo
 * asks (the command's --buckets and --allocs), else a trace's own page's
 * up to REPORT_FULL_PAGES pages, past them less in proportion, down to
 * 200 buckets and 50 allocations; vo's members are set either way.
 */
void report_job_view_options(struct cgtrace_view_options *vo, size_t pages);

/* The baseline job a job's page is compared with, and what stands against what (job-baseline.h). */
struct report_job_base {
	const char *name;    /* what the page calls BASE */
	size_t traces;       /* its traces */
	const long *process; /* per process of the job, its match among BASE's, -1: none */
	const long *gpu;     /* per GPU, likewise */
};

/*
 * The job's block: its figures, each process (in the job's order of
 * paths) with what the process table shows, the order of the lanes, the
 * machines, each physical GPU with its summed bytes as a series; vo and
 * lim say what each process's page holds; base (NULL: none) adds
 * job.baseline and each process's and GPU's match, "baseline". 0 or
 * -ENOMEM.
 */
int report_job_json(struct cli_buf *b, const struct cgtrace_job *job, const size_t *order,
                    const struct cgtrace_view_options *vo, const struct report_limits *lim,
                    const struct report_job_base *base);

/*
 * A process's lane: each device of view v as the samples of its live
 * bytes (each bucket's highest, then its end when another), times on the
 * process's own clock. 0 or -ENOMEM.
 */
int report_lane_json(struct cli_buf *b, const struct cgtrace_view *v);

#endif

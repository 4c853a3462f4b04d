/* SPDX-License-Identifier: MIT */
/*
 * A job's page against a baseline job (cgtrace report --baseline BASE,
 * docs/report.md, "Against a baseline"): which of BASE's processes and
 * physical GPUs each of the job's is drawn against.
 */
#ifndef CGTRACE_REPORT_JOB_BASELINE_H
#define CGTRACE_REPORT_JOB_BASELINE_H

#include "cli.h"

/*
 * For each process of j (in the order of its paths), the index of its
 * match among b's processes, -1 for none: by rank, where both have one
 * and neither is a fork child (which inherits its parent's); else by
 * command, the k-th of a command in the lanes' order (order, border) to
 * the k-th of the same command in BASE's. For each GPU of j, BASE's of
 * the same key (UUID, or host and device), else the first left over in
 * BASE's order. Each of b's matched once at most. *process and *gpu are
 * malloc'ed; -ENOMEM.
 */
int report_job_match(const struct cgtrace_job *j, const size_t *order, const struct cgtrace_job *b,
                     const size_t *border, long **process, long **gpu);

#endif

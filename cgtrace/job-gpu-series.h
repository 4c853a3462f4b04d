/* SPDX-License-Identifier: MIT */
/* A physical device's sum over a job's time, bounded for the views (job-gpu-series.c). */
#ifndef CLI_JOB_GPU_SERIES_H
#define CLI_JOB_GPU_SERIES_H

#include <stddef.h>
#include <stdint.h>

#include "cli.h"

/*
 * The bytes of every process on job->gpus[gpu] (cgtrace_job_gpu_each) in
 * at most `buckets` equal buckets of the job's time (*bucket_ns wide,
 * unless NULL): per bucket with a change, a sample at its highest moment
 * (the earliest among equals), then one at its last change when that is
 * another. So the series' highest sample is the device's exact peak, at
 * its moment, and it holds at most two samples a bucket. fn gets them in
 * time order; its non-zero return stops the walk and is returned.
 * -EINVAL for no such device, -ENOMEM.
 */
int cli_job_gpu_series(const struct cgtrace_job *job, size_t gpu, size_t buckets,
                       int (*fn)(void *user, uint64_t t, uint64_t bytes), void *user,
                       uint64_t *bucket_ns);

#endif

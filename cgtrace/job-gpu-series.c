/* SPDX-License-Identifier: MIT */
/*
 * A physical device's sum over a job's time as the views draw it
 * (job-gpu-series.h): the library walks every moment the sum changed,
 * as many as the records of all its processes, so the pictures keep two
 * samples a bucket, the highest and the last, as a view's grid does.
 */
#include "job-gpu-series.h"

struct series {
	int (*fn)(void *user, uint64_t t, uint64_t bytes);
	void *user;
	uint64_t width, bucket;
	bool open; /* a bucket with changes is being gathered */
	uint64_t max, max_t, last, last_t;
};

static int flush(struct series *s)
{
	if (!s->open)
		return 0;
	s->open = false;
	int ret = s->fn(s->user, s->max_t, s->max);
	if (ret == 0 && s->last_t != s->max_t)
		ret = s->fn(s->user, s->last_t, s->last);
	return ret;
}

static int on_moment(void *user, uint64_t t, uint64_t bytes)
{
	struct series *s = user;
	uint64_t b = t / s->width;
	int ret = s->open && b != s->bucket ? flush(s) : 0;
	if (ret)
		return ret;
	if (!s->open) {
		*s = (struct series){s->fn, s->user, s->width, b, true, bytes, t, bytes, t};
		return 0;
	}
	if (bytes > s->max) {
		s->max = bytes;
		s->max_t = t;
	}
	s->last = bytes;
	s->last_t = t;
	return 0;
}

int cli_job_gpu_series(const struct cgtrace_job *job, size_t gpu, size_t buckets,
                       int (*fn)(void *user, uint64_t t, uint64_t bytes), void *user,
                       uint64_t *bucket_ns)
{
	/* Every moment lies in [0, span_ns]: span_ns + 1 instants in all. */
	uint64_t n = buckets ? buckets : 1, width = job->span_ns / n + 1;
	struct series s = {.fn = fn, .user = user, .width = width};
	if (bucket_ns)
		*bucket_ns = width;
	int ret = cgtrace_job_gpu_each(job, gpu, on_moment, &s);
	return ret ? ret : flush(&s);
}

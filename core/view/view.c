/* SPDX-License-Identifier: MIT */
/* The view of a trace: under construction (issue 13); the model is in cgtrace.h. */
#include <errno.h>
#include <stdio.h>

#include "cgtrace.h"
#include "export.h"

CG_EXPORT int cgtrace_view_read(const char *path, const struct cgtrace_view_options *opts,
				struct cgtrace_view **out, char *err, size_t errlen)
{
	(void)opts;
	*out = NULL;
	snprintf(err, errlen, "%s: views are not built yet", path);
	return -ENOSYS;
}

CG_EXPORT void cgtrace_view_free(struct cgtrace_view *view)
{
	(void)view;
}

CG_EXPORT size_t cgtrace_view_bucket_of(const struct cgtrace_view *v, uint64_t t)
{
	if (!v->n_buckets || t <= v->start_ns || !v->bucket_ns)
		return 0;
	uint64_t i = (t - v->start_ns) / v->bucket_ns;
	return i < v->n_buckets ? (size_t)i : v->n_buckets - 1;
}

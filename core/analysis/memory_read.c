/* SPDX-License-Identifier: MIT */
/* Reading with the memory analysis attached to a streamed read (memory_read.h). */
#include "memory_read.h"

#include "export.h"
#include "trace_read.h"

CG_EXPORT int cgtrace_doc_read_flags(const char *path, const struct cgtrace_read_options *opts,
				     unsigned flags, struct cgtrace_doc **out, char *err,
				     size_t errlen)
{
	const struct cg_read_req q = {.opts = opts, .flags = flags, .out = out, .err = err,
				      .errlen = errlen, .sink = &cg_stream_sink};
	return cg_read_path(path, &q);
}

CG_EXPORT int cgtrace_doc_read_mem_flags(const char *name, const void *data, size_t len,
					 const struct cgtrace_read_options *opts, unsigned flags,
					 struct cgtrace_doc **out, char *err, size_t errlen)
{
	const struct cg_read_req q = {.name = name, .opts = opts, .flags = flags, .out = out,
				      .err = err, .errlen = errlen, .sink = &cg_stream_sink};
	return cg_read_mem(data, len, &q);
}

int cg_read_hooked(const char *path, const struct cgtrace_read_options *opts, unsigned flags,
		   const struct cg_stream_hooks *hooks, void *user, struct cgtrace_doc **out,
		   char *err, size_t errlen)
{
	int stopped = 0;
	const struct cg_stream_cfg cfg = {.hooks = hooks, .hooks_user = user, .stopped = &stopped};
	const struct cg_read_req q = {.opts = opts, .flags = CGTRACE_READ_STREAM_MEMORY | flags,
				      .out = out, .err = err, .errlen = errlen,
				      .sink = &cg_stream_sink, .sink_cfg = &cfg};
	int ret = cg_read_path(path, &q);
	return stopped ? stopped : ret;
}

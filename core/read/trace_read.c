/* SPDX-License-Identifier: MIT */
/*
 * The reader: lines (or compact records) -> records -> document, stopping
 * at the first broken rule with "PATH:LINE: message" (read_apply.c handles
 * each line) or "PATH: record N: message" (read_compact.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cgtrace.h"
#include "doc.h"
#include "export.h"
#include "read_apply.h"
#include "read_compact.h"
#include "read_pipe.h"
#include "trace_src.h"

static int read_source(struct cg_src *src, const char *name,
		       const struct cgtrace_read_options *opts, struct cgtrace_doc **out,
		       char *err, size_t errlen)
{
	struct cgtrace_doc *doc = cg_doc_new();
	if (!doc) {
		snprintf(err, errlen, "%s: out of memory", name);
		return -ENOMEM;
	}
	struct cg_read_ctx ctx = {
		.name = name, .opts = opts, .doc = doc, .err = err, .errlen = errlen};
	int ret = src->cdec ? cg_read_compact(&ctx, src->cdec) : cg_read_pipe(&ctx, &src->lines);
	if (ret < 0 && !src->cdec && src->lines.err[0])
		snprintf(err, errlen, "%s: %s", name, src->lines.err);
	if (ret == 0) {
		char msg[256];
		ret = cg_doc_finish(doc, msg, sizeof(msg));
		if (ret < 0)
			snprintf(err, errlen, "%s: %s", name, msg);
	}
	if (ret < 0) {
		cgtrace_doc_free(doc);
		return ret;
	}
	*out = doc;
	return 0;
}

CG_EXPORT int cgtrace_doc_read(const char *path, const struct cgtrace_read_options *opts,
			       struct cgtrace_doc **out, char *err, size_t errlen)
{
	bool is_stdin = strcmp(path, "-") == 0;
	if (errlen)
		err[0] = '\0';
	const char *name = is_stdin ? "<stdin>" : path;
	int fd = is_stdin ? STDIN_FILENO : open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;
		snprintf(err, errlen, "%s: %s", name, strerror(e));
		return -e;
	}
	struct cg_src src;
	int ret = cg_src_open_fd(&src, fd);
	if (ret < 0)
		snprintf(err, errlen, "%s: %s", name, src.err);
	else
		ret = read_source(&src, name, opts, out, err, errlen);
	cg_src_close(&src);
	if (!is_stdin)
		close(fd);
	return ret;
}

CG_EXPORT int cgtrace_doc_read_mem(const char *name, const void *data, size_t len,
				   const struct cgtrace_read_options *opts,
				   struct cgtrace_doc **out, char *err, size_t errlen)
{
	struct cg_src src;
	if (errlen)
		err[0] = '\0';
	int ret = cg_src_open_mem(&src, data, len);
	if (ret < 0)
		snprintf(err, errlen, "%s: %s", name, src.err);
	else
		ret = read_source(&src, name, opts, out, err, errlen);
	cg_src_close(&src);
	return ret;
}

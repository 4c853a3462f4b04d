/* SPDX-License-Identifier: MIT */
/*
 * The reader: lines -> records -> document, stopping at the first broken
 * rule with "PATH:LINE: message" (read_apply.c handles each line).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cgtrace.h"
#include "doc.h"
#include "export.h"
#include "lines.h"
#include "read_apply.h"
#include "read_pipe.h"

static int read_source(struct cg_lines *l, const char *name,
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
	int ret = cg_read_pipe(&ctx, l);
	if (ret < 0 && l->err[0])
		snprintf(err, errlen, "%s: %s", name, l->err);
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
	struct cg_lines l;
	int ret = cg_lines_open_fd(&l, fd);
	if (ret < 0)
		snprintf(err, errlen, "%s: %s", name, l.err[0] ? l.err : strerror(-ret));
	else
		ret = read_source(&l, name, opts, out, err, errlen);
	cg_lines_close(&l);
	if (!is_stdin)
		close(fd);
	return ret;
}

CG_EXPORT int cgtrace_doc_read_mem(const char *name, const void *data, size_t len,
				   const struct cgtrace_read_options *opts,
				   struct cgtrace_doc **out, char *err, size_t errlen)
{
	struct cg_lines l;
	if (errlen)
		err[0] = '\0';
	int ret = cg_lines_open_mem(&l, data, len);
	if (ret < 0)
		snprintf(err, errlen, "%s: %s", name, l.err[0] ? l.err : strerror(-ret));
	else
		ret = read_source(&l, name, opts, out, err, errlen);
	cg_lines_close(&l);
	return ret;
}

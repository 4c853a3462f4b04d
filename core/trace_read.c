/* SPDX-License-Identifier: MIT */
/*
 * The reader: lines -> records -> document, stopping at the first broken
 * rule with "PATH:LINE: message". A last line cut short without a newline
 * is what a killed writer leaves behind: it is reported and skipped.
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
#include "parse.h"

static bool blank(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r')
			return false;
	return true;
}

static void warn(const struct cgtrace_read_options *opts, const char *msg)
{
	if (opts && opts->warn)
		opts->warn(opts->user, msg);
	else
		fprintf(stderr, "%s\n", msg);
}

static int read_lines(struct cg_lines *l, const char *name, const struct cgtrace_read_options *opts,
		      struct cgtrace_doc *doc, char *err, size_t errlen)
{
	struct cg_parse p;
	struct cg_rec rec;
	const char *line;
	size_t len;
	bool terminated;
	int ret = 0, r;

	cg_parse_init(&p);
	while ((r = cg_lines_next(l, &line, &len, &terminated)) > 0) {
		if (blank(line, len))
			continue;
		ret = cg_parse_line(&p, line, len, &rec);
		if (ret == -EBADMSG && !terminated && p.syntax) {
			char msg[512];
			snprintf(msg, sizeof(msg),
				 "%s:%llu: trace truncated, incomplete last record ignored", name,
				 (unsigned long long)l->line_no);
			warn(opts, msg);
			doc->truncated = true;
			ret = 0;
			break;
		}
		if (ret == 0) {
			char msg[sizeof(p.err)];
			ret = cg_doc_add(doc, &rec, msg, sizeof(msg));
			if (ret < 0)
				snprintf(p.err, sizeof(p.err), "%s", msg);
		}
		if (ret < 0) {
			if (ret == -ENOMEM)
				snprintf(p.err, sizeof(p.err), "out of memory");
			snprintf(err, errlen, "%s:%llu: %s", name, (unsigned long long)l->line_no,
				 p.err);
			break;
		}
	}
	if (r < 0) {
		snprintf(err, errlen, "%s: %s", name, l->err);
		ret = r;
	}
	cg_parse_fini(&p);
	return ret;
}

static int read_source(struct cg_lines *l, const char *name,
		       const struct cgtrace_read_options *opts, struct cgtrace_doc **out,
		       char *err, size_t errlen)
{
	struct cgtrace_doc *doc = cg_doc_new();
	if (!doc) {
		snprintf(err, errlen, "%s: out of memory", name);
		return -ENOMEM;
	}
	int ret = read_lines(l, name, opts, doc, err, errlen);
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
	int ret = cg_lines_open_mem(&l, data, len);
	if (ret < 0)
		snprintf(err, errlen, "%s: %s", name, l.err[0] ? l.err : strerror(-ret));
	else
		ret = read_source(&l, name, opts, out, err, errlen);
	cg_lines_close(&l);
	return ret;
}

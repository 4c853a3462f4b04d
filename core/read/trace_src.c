/* SPDX-License-Identifier: MIT */
#include "trace_src.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The messages of an input that is no trace at all, before any decoder sees it. */
#define EMPTY_INPUT "empty file"
#define IS_A_DIRECTORY "is a directory"

int cg_src_open_path(const char *path, const char **name, char *err, size_t errlen)
{
	bool is_stdin = strcmp(path, "-") == 0;
	struct stat st;
	if (errlen)
		err[0] = '\0';
	*name = is_stdin ? "<stdin>" : path;
	int fd = is_stdin ? STDIN_FILENO : open(path, O_RDONLY | O_CLOEXEC);
	/* A directory opens, and its read fails only later, or in a thread reading a pipe. */
	int e = fd < 0 ? errno : fstat(fd, &st) < 0 ? errno : S_ISDIR(st.st_mode) ? EISDIR : 0;
	if (e == 0)
		return fd;
	if (fd >= 0 && !is_stdin)
		close(fd);
	snprintf(err, errlen, "%s: %s", *name, e == EISDIR ? IS_A_DIRECTORY : strerror(e));
	return -e;
}

static int open_fail(struct cg_src *s, int ret, const char *why)
{
	snprintf(s->err, sizeof(s->err), "%s", why ? why : strerror(-ret));
	return ret;
}

int cg_src_open_fd(struct cg_src *s, int fd)
{
	memset(s, 0, sizeof(*s));
	s->lines.fd = -1;
	uint8_t pre[CG_COMPACT_MAGIC_LEN];
	size_t n = 0;
	/* Only as far as the bytes can still be the magic: a JSONL line may be all there is. */
	while (n < sizeof(pre) && (n == 0 || cg_cdec_sniff(pre, n))) {
		ssize_t r = read(fd, pre + n, sizeof(pre) - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return open_fail(s, -errno, NULL);
		if (r == 0)
			break;
		n += (size_t)r;
	}
	if (n == 0)
		return open_fail(s, -EBADMSG, EMPTY_INPUT);
	int ret;
	if (cg_cdec_sniff(pre, n))
		ret = cg_cdec_open_fd(&s->cdec, fd, pre, n);
	else
		ret = cg_lines_open_fd_pre(&s->lines, fd, pre, n);
	return ret < 0 ? open_fail(s, ret, s->lines.err[0] ? s->lines.err : NULL) : 0;
}

int cg_src_open_mem(struct cg_src *s, const void *data, size_t len)
{
	memset(s, 0, sizeof(*s));
	s->lines.fd = -1;
	if (len == 0)
		return open_fail(s, -EBADMSG, EMPTY_INPUT);
	int ret;
	if (cg_cdec_sniff(data, len))
		ret = cg_cdec_open_mem(&s->cdec, data, len);
	else
		ret = cg_lines_open_mem(&s->lines, data, len);
	return ret < 0 ? open_fail(s, ret, s->lines.err[0] ? s->lines.err : NULL) : 0;
}

void cg_src_close(struct cg_src *s)
{
	cg_cdec_close(s->cdec);
	s->cdec = NULL;
	cg_lines_close(&s->lines);
}

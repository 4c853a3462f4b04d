/* SPDX-License-Identifier: MIT */
#include "sink.h"

#include "write_all.h"
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "write_all.h"

/* Creates one directory unless something usable is already there. */
static int mkdir_one(const char *dir)
{
	if (mkdir(dir, 0777) == 0 || errno == EEXIST)
		return 0;
	/*
	 * Some file systems report EROFS or EACCES before EEXIST; an existing
	 * directory is fine whatever mkdir said.
	 */
	int err = -errno;
	struct stat st;
	if (stat(dir, &st) == 0 && S_ISDIR(st.st_mode))
		return 0;
	return err;
}

/* mkdir -p of everything before the last '/' of path. */
static int make_parents(const char *path)
{
	const char *last = strrchr(path, '/');
	if (!last || last == path)
		return 0;

	size_t n = (size_t)(last - path);
	char *dir = malloc(n + 1);
	if (!dir)
		return -ENOMEM;
	memcpy(dir, path, n);
	dir[n] = '\0';

	int err = 0;
	/* Each '/' after the first byte ends a prefix to create; empty components are skipped. */
	for (size_t i = 1; i <= n && !err; i++) {
		if (i < n && dir[i] != '/')
			continue;
		if (dir[i - 1] == '/')
			continue;
		char saved = dir[i];
		dir[i] = '\0';
		err = mkdir_one(dir);
		dir[i] = saved;
	}
	free(dir);
	return err;
}

/* Opens an existing path when it is a character device or a FIFO. */
static int open_special(const char *path, int *fd)
{
	struct stat st;
	if (stat(path, &st) < 0)
		return -errno;
	if (!S_ISCHR(st.st_mode) && !S_ISFIFO(st.st_mode))
		return -EEXIST;
	int f = open(path, O_WRONLY | O_CLOEXEC);
	if (f < 0)
		return -errno;
	/* The path may have been replaced between stat and open: check what was opened. */
	if (fstat(f, &st) < 0 || (!S_ISCHR(st.st_mode) && !S_ISFIFO(st.st_mode))) {
		close(f);
		return -EEXIST;
	}
	*fd = f;
	return 0;
}

int cg_sink_create_path(const char *path, int *fd)
{
	if (!path || !*path || !fd)
		return -EINVAL;
	int err = make_parents(path);
	if (err)
		return err;
	int f = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
	if (f >= 0) {
		*fd = f;
		return 0;
	}
	if (errno != EEXIST)
		return -errno;
	return open_special(path, fd);
}

void cg_sink_init(struct cg_sink *s, int fd)
{
	memset(s, 0, sizeof(*s));
	s->fd = fd;
}

/* Records the first error and drops what is buffered (see sink.h). */
static int fail(struct cg_sink *s, int err)
{
	if (!s->err)
		s->err = err;
	s->buf.len = 0;
	return s->err;
}

int cg_sink_flush(struct cg_sink *s)
{
	if (!s->err && s->buf.err)
		return fail(s, s->buf.err);
	if (s->err)
		return fail(s, s->err);
	if (s->buf.len) {
		int err = cg_write_all(s->fd, s->buf.p, s->buf.len);
		if (err)
			return fail(s, err);
		s->buf.len = 0;
	}
	return 0;
}

int cg_sink_commit(struct cg_sink *s)
{
	if (s->err || s->buf.err || s->buf.len >= CG_SINK_COMMIT_BYTES)
		return cg_sink_flush(s);
	return 0;
}

int cg_sink_close(struct cg_sink *s)
{
	int err = cg_sink_flush(s);
	/*
	 * close(2) can report a deferred write error (NFS, quotas). After
	 * EINTR the descriptor is gone on Linux, so it is not retried.
	 */
	if (s->fd >= 0 && close(s->fd) < 0 && !err && errno != EINTR)
		err = s->err = -errno;
	s->fd = -1;
	cg_buf_fini(&s->buf);
	return err;
}

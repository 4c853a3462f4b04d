/* SPDX-License-Identifier: MIT */
/*
 * The output file of a view or an export (plot, report, Perfetto, massif,
 * JSONL, compact, folded): a regular file is replaced whole or not at all.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

static int out_fail(struct cli_out *o, const char *why)
{
	fprintf(stderr, "%s: %s\n", o->path, why);
	free(o->target);
	free(o->tmp);
	o->target = o->tmp = NULL;
	return CLI_FAIL;
}

/* Standard output by another name: /dev/stdout, /proc/self/fd/1, the file it was redirected to. */
static bool is_stdout(const struct stat *st)
{
	struct stat out;
	return fstat(STDOUT_FILENO, &out) == 0 && out.st_dev == st->st_dev &&
	       out.st_ino == st->st_ino;
}

/*
 * A FIFO or a character device (/dev/null, a terminal) cannot be replaced:
 * it is written as it is, and what a failed run wrote there stays.
 */
static int open_stream(struct cli_out *o)
{
	o->f = fopen(o->path, "w");
	return o->f ? CLI_OK : out_fail(o, strerror(errno));
}

/*
 * A temporary file beside the one to replace (the file a symbolic link
 * names, so the link stays), renamed over it at the end: a reader of the
 * old file never sees half a new one, and a failed run leaves the old one
 * and nothing else.
 */
static int open_replacing(struct cli_out *o, const struct stat *old)
{
	o->target = old ? realpath(o->path, NULL) : strdup(o->path);
	if (!o->target)
		return out_fail(o, strerror(errno));
	size_t n = strlen(o->target) + 16;
	o->tmp = malloc(n);
	if (!o->tmp)
		return out_fail(o, strerror(ENOMEM));
	snprintf(o->tmp, n, "%s.tmpXXXXXX", o->target);
	int fd = mkstemp(o->tmp);
	if (fd < 0)
		return out_fail(o, strerror(errno));
	/* Not mkstemp's 0600: the mode a new file would get, or the old file's. */
	mode_t mask = umask(0);
	umask(mask);
	o->mode = old ? old->st_mode & 07777 : 0666 & ~mask;
	o->f = fdopen(fd, "w");
	if (!o->f) {
		int e = errno;
		close(fd);
		unlink(o->tmp);
		return out_fail(o, strerror(e));
	}
	return CLI_OK;
}

int cli_out_open(struct cli_out *o, const char *path)
{
	struct stat st;
	memset(o, 0, sizeof(*o));
	o->path = path ? path : "-";
	if (strcmp(o->path, "-") == 0) {
		o->f = stdout;
		return CLI_OK;
	}
	if (stat(o->path, &st) < 0)
		return errno == ENOENT ? open_replacing(o, NULL) : out_fail(o, strerror(errno));
	if (is_stdout(&st)) {
		o->f = stdout;
		return CLI_OK;
	}
	if (S_ISDIR(st.st_mode))
		return out_fail(o, "is a directory");
	if (S_ISREG(st.st_mode))
		return open_replacing(o, &st);
	if (S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode))
		return open_stream(o);
	return out_fail(o, "not a regular file, FIFO or character device");
}

int cli_out_close(struct cli_out *o, bool ok)
{
	const char *name = o->f == stdout ? "<stdout>" : o->path;
	int err = 0;
	if (ok && (fflush(o->f) || ferror(o->f)))
		err = errno ? errno : EIO;
	if (o->f != stdout && fclose(o->f) && ok && !err)
		err = errno;
	if (o->tmp) {
		if (ok && !err && chmod(o->tmp, o->mode))
			err = errno;
		if (ok && !err && rename(o->tmp, o->target))
			err = errno;
		if (!ok || err)
			unlink(o->tmp);
	}
	free(o->tmp);
	free(o->target);
	memset(o, 0, sizeof(*o));
	if (err)
		fprintf(stderr, "%s: %s\n", name, strerror(err));
	return ok && !err ? CLI_OK : CLI_FAIL;
}

struct cgtrace_view *cli_view_load(const char *path, const struct cgtrace_view_options *opts,
				   unsigned flags)
{
	struct cgtrace_view *v = NULL;
	char err[2048];
	if (cgtrace_view_read_flags(path, opts, flags, &v, err, sizeof(err)) < 0) {
		fprintf(stderr, "%s\n", err);
		return NULL;
	}
	if (err[0])
		fprintf(stderr, "%s\n", err);
	return v;
}

/* SPDX-License-Identifier: MIT */
/* The output file of a view (plot, report, Perfetto, massif): written whole or not at all. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

int cli_out_open(struct cli_out *o, const char *path, bool replace)
{
	memset(o, 0, sizeof(*o));
	o->path = path;
	o->replace = replace;
	if (!path || strcmp(path, "-") == 0) {
		o->f = stdout;
		return CLI_OK;
	}
	/* Refused before the work is done; the final rename checks again, atomically. */
	if (!replace && access(path, F_OK) == 0) {
		fprintf(stderr, "%s: %s\n", path, strerror(EEXIST));
		return CLI_FAIL;
	}
	/*
	 * A temporary name beside the file, renamed over it at the end: a
	 * reader of the old file never sees half a new one, and a failed run
	 * leaves nothing behind.
	 */
	size_t n = strlen(path) + 16;
	o->tmp = malloc(n);
	if (!o->tmp) {
		fprintf(stderr, "%s: %s\n", path, strerror(ENOMEM));
		return CLI_FAIL;
	}
	snprintf(o->tmp, n, "%s.tmpXXXXXX", path);
	int fd = mkstemp(o->tmp);
	if (fd >= 0)
		o->f = fdopen(fd, "w");
	if (!o->f) {
		fprintf(stderr, "%s: %s\n", path, strerror(errno));
		if (fd >= 0) {
			close(fd);
			unlink(o->tmp);
		}
		free(o->tmp);
		o->tmp = NULL;
		return CLI_FAIL;
	}
	return CLI_OK;
}

/*
 * The temporary file takes path's name: over an old file, or only where
 * none is (a file made meanwhile is not overwritten). Where the file
 * system cannot rename without replacing, a hard link does the same.
 */
static int settle(const struct cli_out *o)
{
	if (o->replace)
		return rename(o->tmp, o->path) ? errno : 0;
	if (renameat2(AT_FDCWD, o->tmp, AT_FDCWD, o->path, RENAME_NOREPLACE) == 0)
		return 0;
	if (errno != EINVAL && errno != ENOSYS)
		return errno;
	if (link(o->tmp, o->path))
		return errno;
	unlink(o->tmp);
	return 0;
}

int cli_out_close(struct cli_out *o, bool ok)
{
	const char *name = o->tmp ? o->path : "<stdout>";
	int err = 0;
	if (ok && (fflush(o->f) || ferror(o->f)))
		err = errno ? errno : EIO;
	if (o->tmp) {
		if (fclose(o->f) && ok && !err)
			err = errno;
		/* mkstemp's 0600 is not what a plot or a report wants: as a new file would be. */
		mode_t mask = umask(0);
		umask(mask);
		if (ok && !err && chmod(o->tmp, 0666 & ~mask))
			err = errno;
		if (ok && !err)
			err = settle(o);
		if (!ok || err)
			unlink(o->tmp);
		free(o->tmp);
	}
	o->f = NULL;
	o->tmp = NULL;
	if (err)
		fprintf(stderr, "%s: %s\n", name, strerror(err));
	return ok && !err ? CLI_OK : CLI_FAIL;
}

struct cgtrace_view *cli_view_load(const char *path, const struct cgtrace_view_options *opts)
{
	struct cgtrace_view *v = NULL;
	char err[2048];
	if (cgtrace_view_read(path, opts, &v, err, sizeof(err)) < 0) {
		fprintf(stderr, "%s\n", err);
		return NULL;
	}
	if (err[0])
		fprintf(stderr, "%s\n", err);
	return v;
}

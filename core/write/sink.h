/* SPDX-License-Identifier: MIT */
/*
 * Buffered output to a file descriptor with a sticky error.
 *
 * Producers append lines to buf and call cg_sink_commit after each one; the
 * buffer goes out in large writes. The first error (a failed write(2) or an
 * allocation failure of buf) is kept in err and returned by every later
 * call. From then on the sink writes nothing more and drops what it is
 * given: a trace cut at the failure ends in at most one partial line, which
 * readers report as truncated, whereas resuming after a gap would leave a
 * corrupt line in the middle of the file.
 */
#ifndef CG_SINK_H
#define CG_SINK_H

#include "buf.h"

/* commit writes the buffer out once it holds this much. */
#define CG_SINK_COMMIT_BYTES (64 * 1024)

struct cg_sink {
	int fd;
	struct cg_buf buf;
	int err; /* first error, as a negative errno; 0 while healthy */
};

/*
 * Creates the missing parent directories of path (mode 0777 & ~umask), then
 * creates path with O_WRONLY|O_CREAT|O_EXCL|O_CLOEXEC, mode 0666. When path
 * already exists and is a character device or a FIFO (/dev/stdout, /dev/null,
 * a named pipe), it is opened O_WRONLY|O_CLOEXEC as it is; opening a FIFO
 * waits for a reader. Returns 0 with *fd set, or -EEXIST for any other
 * existing file, or another negative errno.
 */
int cg_sink_create_path(const char *path, int *fd);

/* Takes ownership of fd; the buffer is allocated on first use. */
void cg_sink_init(struct cg_sink *s, int fd);

/* Writes the buffer out when it has grown past CG_SINK_COMMIT_BYTES; returns err. */
int cg_sink_commit(struct cg_sink *s);

/* Writes out everything buffered (retrying EINTR and short writes); returns err. */
int cg_sink_flush(struct cg_sink *s);

/* Flushes, closes the descriptor and frees the buffer; returns the first error. */
int cg_sink_close(struct cg_sink *s);

#endif

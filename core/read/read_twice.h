/* SPDX-License-Identifier: MIT */
/*
 * A source read twice: a regular file from where it began; anything else
 * (stdin, a pipe) through a thread that copies each block it reads to an
 * unlinked spool file and to a socket the first read reads, so the first
 * read goes on while the bytes arrive, whatever decodes them.
 */
#ifndef CG_READ_TWICE_H
#define CG_READ_TWICE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <sys/types.h>

struct cg_twice {
	int fd;
	off_t start;   /* -1: not a regular file */
	int spool;     /* -1: none */
	int sock[2];   /* the reader's end, the thread's end */
	pthread_t thread;
	bool running;  /* the thread was started and not joined */
	atomic_bool keep; /* once the reader is gone: copy the rest to the spool, else stop */
	int err;       /* the thread's first error reading fd or writing the spool */
};

/* fd to be read twice; a stream gets its spool ($TMPDIR, else /tmp) and thread when it can. */
void cg_twice_open(struct cg_twice *t, int fd);
/* Whether it can be read twice: without a spool (none could be made) a stream cannot. */
bool cg_twice_ok(const struct cg_twice *t);
/* The descriptor the first read reads. */
int cg_twice_fd(const struct cg_twice *t);
/* Back to the start: the descriptor to read again, or a -errno. */
int cg_twice_rewind(struct cg_twice *t);
void cg_twice_close(struct cg_twice *t);

#endif

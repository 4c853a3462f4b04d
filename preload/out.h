/* SPDX-License-Identifier: MIT */
/*
 * The trace file: plain or zstd-compressed (compressed on the writer
 * thread), with a sticky error. A failed write (a full disk, a closed pipe)
 * stops output for good; the program is never told.
 */
#ifndef CG_OUT_H
#define CG_OUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ZSTD_CCtx_s;

struct cg_out {
	int fd;
	struct ZSTD_CCtx_s *z;
	char *zbuf;
	size_t zcap;
	int err;
	bool reserve;      /* a regular file that takes fallocate(KEEP_SIZE) */
	uint64_t written;  /* bytes written to fd */
	uint64_t reserved; /* end of the space reserved ahead of them */
	bool timed;        /* CGPROBE_STATS: write_ns counts the writer CPU spent in write(2) */
	uint64_t write_ns;
	/*
	 * A new descriptor for the same file, or -errno: set for a trace file
	 * the probe created, called when the program closed the descriptor.
	 */
	int (*reopen)(void);
	bool closed_by_program; /* err is -EBADF because the program closed fd */
};

int cg_out_open(struct cg_out *o, int fd, bool zstd);
/* Writes (or compresses) n bytes; returns the sticky error. */
int cg_out_write(struct cg_out *o, const char *p, size_t n);
/* Pushes everything out, a complete zstd block included, so a reader sees it. */
int cg_out_flush(struct cg_out *o);
/*
 * Rewrites n bytes already written at offset off (pwrite), in a plain
 * regular file: what a trace's head holds once the trace ends. -ESPIPE
 * for a compressed output, a FIFO or a device.
 */
int cg_out_write_at(struct cg_out *o, uint64_t off, const void *p, size_t n);
/* Gives back disk space reserved past the end of the file (before exec). */
void cg_out_trim(struct cg_out *o);
/* Ends the zstd frame, closes the file; returns the first error. */
int cg_out_close(struct cg_out *o);

#endif

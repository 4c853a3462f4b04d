/* SPDX-License-Identifier: MIT */
#include "out.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/falloc.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zstd.h>

#include "write_all.h"

/*
 * Once a trace passes RESERVE_STEP, disk space is reserved that far ahead
 * of the writes, beyond the end of the file (its size only grows with
 * what is written): the file system then allocates blocks once per step
 * instead of once per page written, a twentieth of the writer's time on
 * ext4. Small traces never reserve. Where fallocate is refused (pipes,
 * devices, file systems without it) or the disk is full, writes go on
 * without. Close and exec give back what was not used; only a SIGKILL
 * can leave up to RESERVE_STEP allocated past the end of a file.
 */
#define RESERVE_STEP (8u << 20)

static void reserve_ahead(struct cg_out *o, size_t n)
{
	if (!o->reserve || o->written < RESERVE_STEP || o->written + n <= o->reserved)
		return;
	uint64_t from = o->reserved > o->written ? o->reserved : o->written;
	uint64_t to = (o->written + n + RESERVE_STEP) & ~(uint64_t)(RESERVE_STEP - 1);
	if (fallocate(o->fd, FALLOC_FL_KEEP_SIZE, (off_t)from, (off_t)(to - from)) < 0) {
		o->reserve = false;
		return;
	}
	o->reserved = to;
}

/*
 * Launchers (orterun, daemons) close every descriptor they did not open
 * between fork and exec, ours included; a fork child's trace would then
 * lose its end. Once a write says EBADF, the file is opened again by its
 * path (the reopen callback checks it is still the same file) and the
 * writes go on where the last whole buffer ended.
 */
static int write_reopened(struct cg_out *o, const char *p, size_t n)
{
	int fd = o->reopen ? o->reopen() : -EBADF;
	if (fd < 0) {
		o->closed_by_program = true;
		return -EBADF;
	}
	o->fd = fd;
	o->reserved = o->written;
	if (lseek(fd, (off_t)o->written, SEEK_SET) < 0)
		return -errno;
	return cg_write_all(fd, p, n);
}

/*
 * The first error sticks. `written` counts whole buffers only, so the
 * truncate at close cuts a buffer a full disk took only part of.
 */
static int write_all(struct cg_out *o, const char *p, size_t n)
{
	if (o->err || n == 0)
		return o->err;
	struct timespec t0, t1;
	if (o->timed)
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
	reserve_ahead(o, n);
	o->err = cg_write_all(o->fd, p, n);
	if (o->err == -EBADF)
		o->err = write_reopened(o, p, n);
	if (o->timed) {
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t1);
		o->write_ns +=
		    (uint64_t)((t1.tv_sec - t0.tv_sec) * 1000000000 + (t1.tv_nsec - t0.tv_nsec));
	}
	if (!o->err)
		o->written += n;
	return o->err;
}

int cg_out_open(struct cg_out *o, int fd, bool zstd)
{
	o->fd = fd;
	o->z = NULL;
	o->zbuf = NULL;
	o->err = 0;
	o->written = o->reserved = 0;
	o->timed = false;
	o->write_ns = 0;
	o->reopen = NULL;
	o->closed_by_program = false;
	struct stat st;
	o->reserve = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size == 0;
	if (!zstd)
		return 0;
	o->z = ZSTD_createCCtx();
	o->zcap = ZSTD_CStreamOutSize();
	o->zbuf = malloc(o->zcap);
	if (!o->z || !o->zbuf)
		return o->err = -ENOMEM;
	/* Level 1: about 10x smaller JSONL at hundreds of MB/s on the writer thread. */
	ZSTD_CCtx_setParameter(o->z, ZSTD_c_compressionLevel, 1);
	return 0;
}

static int compress(struct cg_out *o, const char *p, size_t n, ZSTD_EndDirective mode)
{
	ZSTD_inBuffer in = {p, n, 0};
	for (;;) {
		ZSTD_outBuffer out = {o->zbuf, o->zcap, 0};
		size_t left = ZSTD_compressStream2(o->z, &out, &in, mode);
		if (ZSTD_isError(left))
			return o->err = -EIO;
		if (write_all(o, o->zbuf, out.pos) < 0)
			return o->err;
		if (mode == ZSTD_e_continue ? in.pos == in.size : left == 0)
			return 0;
	}
}

int cg_out_write(struct cg_out *o, const char *p, size_t n)
{
	if (o->err)
		return o->err;
	return o->z ? compress(o, p, n, ZSTD_e_continue) : write_all(o, p, n);
}

int cg_out_flush(struct cg_out *o)
{
	if (o->err || !o->z)
		return o->err;
	return compress(o, NULL, 0, ZSTD_e_flush);
}

int cg_out_write_at(struct cg_out *o, uint64_t off, const void *p, size_t n)
{
	if (o->fd < 0 || o->err)
		return o->err ? o->err : -EBADF;
	if (o->z || off + n > o->written)
		return -ESPIPE;
	const char *c = p;
	while (n) {
		ssize_t k = pwrite(o->fd, c, n, (off_t)off);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return k < 0 ? -errno : -EIO;
		c += k;
		off += (uint64_t)k;
		n -= (size_t)k;
	}
	return 0;
}

void cg_out_trim(struct cg_out *o)
{
	/* A truncate to the size frees the blocks reserved past it. */
	if (o->fd >= 0 && o->reserved > o->written && ftruncate(o->fd, (off_t)o->written) == 0)
		o->reserved = o->written;
}

int cg_out_close(struct cg_out *o)
{
	if (o->z && !o->err)
		compress(o, NULL, 0, ZSTD_e_end);
	ZSTD_freeCCtx(o->z);
	free(o->zbuf);
	o->z = NULL;
	o->zbuf = NULL;
	cg_out_trim(o);
	if (o->fd >= 0 && close(o->fd) < 0 && !o->err)
		o->err = -errno;
	o->fd = -1;
	return o->err;
}

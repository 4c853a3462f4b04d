/* SPDX-License-Identifier: MIT */
#include "out.h"

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>
#include <zstd.h>

static int write_all(struct cg_out *o, const char *p, size_t n)
{
	while (n > 0 && !o->err) {
		ssize_t w = write(o->fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			o->err = w < 0 ? -errno : -EIO;
			break;
		}
		p += w;
		n -= (size_t)w;
	}
	return o->err;
}

int cg_out_open(struct cg_out *o, int fd, bool zstd)
{
	o->fd = fd;
	o->z = NULL;
	o->zbuf = NULL;
	o->err = 0;
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

int cg_out_close(struct cg_out *o)
{
	if (o->z && !o->err)
		compress(o, NULL, 0, ZSTD_e_end);
	ZSTD_freeCCtx(o->z);
	free(o->zbuf);
	o->z = NULL;
	o->zbuf = NULL;
	if (o->fd >= 0 && close(o->fd) < 0 && !o->err)
		o->err = -errno;
	o->fd = -1;
	return o->err;
}

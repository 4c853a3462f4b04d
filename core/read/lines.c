/* SPDX-License-Identifier: MIT */
#include "lines.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>

#define CHUNK (4u << 20)
#define BLOCK (1u << 20)

static const unsigned char zstd_magic[4] = {0x28, 0xb5, 0x2f, 0xfd};

static int init(struct cg_lines *l)
{
	memset(l, 0, sizeof(*l));
	l->fd = -1;
	l->cap = CHUNK;
	l->buf = malloc(l->cap);
	return l->buf ? 0 : -ENOMEM;
}

/* Reads raw bytes from the source into dst; 0 at end of input. */
static ssize_t raw_read(struct cg_lines *l, char *dst, size_t n)
{
	if (l->fd < 0) {
		size_t k = l->mem_len - l->mem_pos < n ? l->mem_len - l->mem_pos : n;
		memcpy(dst, l->mem + l->mem_pos, k);
		l->mem_pos += k;
		return (ssize_t)k;
	}
	for (;;) {
		ssize_t r = read(l->fd, dst, n);
		if (r >= 0 || errno != EINTR)
			return r < 0 ? -errno : r;
	}
}

/* Looks at the first bytes to decide between plain text and zstd. */
static int sniff(struct cg_lines *l)
{
	while (l->len < 4) {
		ssize_t r = raw_read(l, l->buf + l->len, 4 - l->len);
		if (r < 0) {
			snprintf(l->err, sizeof(l->err), "%s", strerror((int)-r));
			return (int)r;
		}
		if (r == 0)
			break;
		l->len += (size_t)r;
	}
	if (l->len < 4 || memcmp(l->buf, zstd_magic, 4) != 0)
		return 0;
	l->z = ZSTD_createDCtx();
	l->in_cap = ZSTD_DStreamInSize();
	l->in = malloc(l->in_cap);
	if (!l->z || !l->in)
		return -ENOMEM;
	memcpy(l->in, l->buf, l->len);
	l->in_len = l->len;
	l->len = 0;
	return 0;
}

void cg_lines_close(struct cg_lines *l)
{
	ZSTD_freeDCtx(l->z);
	free(l->in);
	free(l->buf);
	l->z = NULL;
	l->in = l->buf = NULL;
}

static int fill_zstd(struct cg_lines *l)
{
	for (;;) {
		if (l->in_pos == l->in_len && !l->in_eof) {
			ssize_t r = raw_read(l, l->in, l->in_cap);
			if (r < 0) {
				snprintf(l->err, sizeof(l->err), "%s", strerror((int)-r));
				return (int)r;
			}
			l->in_len = (size_t)r;
			l->in_pos = 0;
			l->in_eof = r == 0;
		}
		ZSTD_inBuffer in = {l->in, l->in_len, l->in_pos};
		ZSTD_outBuffer out = {l->buf, l->cap, l->len};
		size_t ret = ZSTD_decompressStream(l->z, &out, &in);
		if (ZSTD_isError(ret)) {
			snprintf(l->err, sizeof(l->err), "zstd: %s", ZSTD_getErrorName(ret));
			return -EBADMSG;
		}
		l->in_pos = in.pos;
		l->zstd_pending = ret != 0;
		size_t got = out.pos - l->len;
		l->len = out.pos;
		if (got > 0)
			return (int)(got > 0);
		/* A stream cut short mid-frame ends here: the reader sees a cut-off line. */
		if (l->in_eof && l->in_pos == l->in_len)
			return 0;
		if (out.pos == out.size)
			return 1;
	}
}

/* Appends more decoded bytes after l->len; 0 at the end of input. */
static int fill(struct cg_lines *l)
{
	if (l->start > 0) {
		memmove(l->buf, l->buf + l->start, l->len - l->start);
		l->len -= l->start;
		l->start = 0;
	}
	if (l->cap - l->len < CHUNK / 2) {
		size_t cap = l->cap * 2;
		char *b = realloc(l->buf, cap);
		if (!b) {
			snprintf(l->err, sizeof(l->err), "out of memory for a %zu-byte line", l->len);
			return -ENOMEM;
		}
		l->buf = b;
		l->cap = cap;
	}
	if (l->z)
		return fill_zstd(l);
	ssize_t r = raw_read(l, l->buf + l->len, l->cap - l->len);
	if (r < 0) {
		snprintf(l->err, sizeof(l->err), "%s", strerror((int)-r));
		return (int)r;
	}
	l->len += (size_t)r;
	return r > 0;
}

/*
 * Every record of a JSONL trace is a JSON object: text whose first byte
 * after blank lines is anything but '{' is no trace (random bytes, another
 * file), said so once rather than as the first line's JSON error. Past
 * CHUNK bytes of blanks the lines are left to the reader.
 */
static int check_start(struct cg_lines *l)
{
	size_t at = 0;
	for (;;) {
		for (; l->start + at < l->len; at++) {
			char c = l->buf[l->start + at];
			if (c == ' ' || c == '\t' || c == '\r' || c == '\n')
				continue;
			if (c == '{')
				return 0;
			snprintf(l->err, sizeof(l->err), "not a trace: neither compact nor JSONL");
			return -EBADMSG;
		}
		if (l->eof || at >= CHUNK)
			break;
		int r = fill(l);
		if (r < 0)
			return r;
		if (r == 0)
			l->eof = true;
	}
	return 0;
}

/* The encoding, then whether the text can be a trace at all. */
static int open_rest(struct cg_lines *l)
{
	int r = sniff(l);
	return r < 0 ? r : check_start(l);
}

int cg_lines_open_fd(struct cg_lines *l, int fd)
{
	int r = init(l);
	if (r < 0)
		return r;
	l->fd = fd;
	return open_rest(l);
}

int cg_lines_open_mem(struct cg_lines *l, const void *data, size_t len)
{
	int r = init(l);
	if (r < 0)
		return r;
	l->mem = data;
	l->mem_len = len;
	return open_rest(l);
}

int cg_lines_open_fd_pre(struct cg_lines *l, int fd, const void *pre, size_t npre)
{
	int r = init(l);
	if (r < 0)
		return r;
	l->fd = fd;
	/* The bytes the caller read to tell the encoding come first. */
	memcpy(l->buf, pre, npre);
	l->len = npre;
	return open_rest(l);
}

int cg_lines_next(struct cg_lines *l, const char **line, size_t *len, bool *terminated)
{
	size_t scanned = l->start;
	for (;;) {
		char *nl = memchr(l->buf + scanned, '\n', l->len - scanned);
		if (nl) {
			*line = l->buf + l->start;
			*len = (size_t)(nl - *line);
			*terminated = true;
			l->start = (size_t)(nl - l->buf) + 1;
			l->line_no++;
			return 1;
		}
		if (l->eof)
			break;
		size_t seen = l->len - l->start;
		int r = fill(l);
		if (r < 0)
			return r;
		if (r == 0)
			l->eof = true;
		scanned = l->start + seen;
	}
	if (l->start == l->len)
		return 0;
	*line = l->buf + l->start;
	*len = l->len - l->start;
	*terminated = false;
	l->start = l->len;
	l->line_no++;
	return 1;
}

int cg_lines_next_block(struct cg_lines *l, const char **data, size_t *len, bool *unterminated)
{
	for (;;) {
		const char *base = l->buf + l->start;
		size_t n = l->len - l->start;
		/* Blocks of about 1 MiB keep the reader's pipeline buffers small. */
		const char *nl = n ? memrchr(base, '\n', n < BLOCK ? n : BLOCK) : NULL;
		if (!nl && n > BLOCK)
			nl = memchr(base + BLOCK, '\n', n - BLOCK);
		if (nl) {
			*data = base;
			*len = (size_t)(nl - base) + 1;
			*unterminated = false;
			l->start += *len;
			return 1;
		}
		if (l->eof) {
			if (n == 0)
				return 0;
			*data = base;
			*len = n;
			*unterminated = true;
			l->start = l->len;
			return 1;
		}
		int r = fill(l);
		if (r < 0)
			return r;
		if (r == 0)
			l->eof = true;
	}
}

/* SPDX-License-Identifier: MIT */
/* Splits a plain or zstd-compressed stream into lines, streaming. */
#ifndef CG_LINES_H
#define CG_LINES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ZSTD_DCtx_s;

struct cg_lines {
	int fd;              /* -1 when reading from memory */
	const char *mem;     /* whole input, for memory sources */
	size_t mem_len, mem_pos;
	struct ZSTD_DCtx_s *z;
	bool zstd_pending;   /* a zstd frame was begun and not finished */
	char *in;            /* compressed input window */
	size_t in_len, in_pos, in_cap;
	bool in_eof;
	char *buf;           /* decoded bytes: [start, len) are not yet returned */
	size_t start, len, cap;
	bool eof;
	uint64_t line_no;    /* 1-based number of the line last returned */
	char err[200];
};

/*
 * 0, or a negative errno with l->err set: -EBADMSG when the first byte
 * that is not blank does not begin a JSON object (not a trace at all).
 */
int cg_lines_open_fd(struct cg_lines *l, int fd);
int cg_lines_open_mem(struct cg_lines *l, const void *data, size_t len);
/* Like cg_lines_open_fd, pre[0..npre) (npre <= 16) being fd's first bytes, read already. */
int cg_lines_open_fd_pre(struct cg_lines *l, int fd, const void *pre, size_t npre);
void cg_lines_close(struct cg_lines *l);
/*
 * 1 with the next line (without its newline), 0 at the end, or a negative
 * errno with l->err set. *terminated is false for a last line that had no
 * newline. The line stays valid until the next call.
 */
int cg_lines_next(struct cg_lines *l, const char **line, size_t *len, bool *terminated);

/*
 * Like cg_lines_next for a run of whole lines: 1 with [*data, *data + *len)
 * ending in a newline, or holding only the last line when *unterminated is
 * set; 0 at the end. Valid until the next call. Does not count lines.
 */
int cg_lines_next_block(struct cg_lines *l, const char **data, size_t *len, bool *unterminated);

/* A line of spaces, tabs and carriage returns holds no record: readers skip it. */
static inline bool cg_line_blank(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r')
			return false;
	return true;
}

#endif

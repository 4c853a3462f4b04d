/* SPDX-License-Identifier: MIT */
/* A growable byte buffer for cold paths (reader output, export, sessions). */
#ifndef CG_BUF_H
#define CG_BUF_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct cg_buf {
	char *p;
	size_t len;
	size_t cap;
	int err; /* sticky -ENOMEM */
};

void cg_buf_fini(struct cg_buf *b);
/* Makes room for n more bytes; returns the write pointer or NULL (b->err set). */
char *cg_buf_reserve(struct cg_buf *b, size_t n);

static inline void cg_buf_put(struct cg_buf *b, const void *s, size_t n)
{
	char *w = (b->cap - b->len >= n) ? b->p + b->len : cg_buf_reserve(b, n);
	if (!w)
		return;
	memcpy(w, s, n);
	b->len += n;
}

static inline void cg_buf_putc(struct cg_buf *b, char c)
{
	cg_buf_put(b, &c, 1);
}

#define cg_buf_lit(b, s) cg_buf_put((b), (s), sizeof(s) - 1)

static inline void cg_buf_puts(struct cg_buf *b, const char *s)
{
	cg_buf_put(b, s, strlen(s));
}

#endif

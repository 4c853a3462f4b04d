/* SPDX-License-Identifier: MIT */
/* A growable output buffer: an output goes out whole, or not at all when memory ran out. */
#ifndef CGTRACE_BUF_H
#define CGTRACE_BUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct cli_buf {
	char *p;
	size_t len, cap;
	bool err; /* sticky: out of memory */
};

/* cli_buf_put where the bytes do not fit: grows the buffer first. */
void cli_buf_put_grow(struct cli_buf *b, const void *s, size_t n);

/*
 * Inline where the bytes fit: the CSV and JSON writers put a few bytes at
 * a time, a record at a time, into a buffer that has long stopped growing.
 */
static inline void cli_buf_put(struct cli_buf *b, const void *s, size_t n)
{
	if (b->p && b->cap - b->len >= n && !b->err) {
		memcpy(b->p + b->len, s, n);
		b->len += n;
	} else {
		cli_buf_put_grow(b, s, n);
	}
}

static inline void cli_buf_putc(struct cli_buf *b, char c)
{
	if (b->len < b->cap && !b->err)
		b->p[b->len++] = c;
	else
		cli_buf_put_grow(b, &c, 1);
}

void cli_buf_puts(struct cli_buf *b, const char *s);
/* v in decimal: the JSON writer's numbers and the CSV rows'. */
void cli_buf_u64(struct cli_buf *b, uint64_t v);
#define cli_buf_lit(b, s) cli_buf_put((b), (s), sizeof(s) - 1)
void cli_buf_fini(struct cli_buf *b);

#endif

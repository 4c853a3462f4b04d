/* SPDX-License-Identifier: MIT */
#include "cli-buf.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

void cli_buf_put_grow(struct cli_buf *b, const void *s, size_t n)
{
	if (b->err)
		return;
	if (b->cap - b->len < n) {
		size_t cap = b->cap ? b->cap : 4096;
		while (cap - b->len < n)
			cap *= 2;
		char *p = realloc(b->p, cap);
		if (!p) {
			b->err = true;
			return;
		}
		b->p = p;
		b->cap = cap;
	}
	/* n is 0 with nothing allocated yet: no copy from or to NULL. */
	if (n)
		memcpy(b->p + b->len, s, n);
	b->len += n;
}

void cli_buf_puts(struct cli_buf *b, const char *s)
{
	cli_buf_put(b, s, strlen(s));
}

void cli_buf_u64(struct cli_buf *b, uint64_t v)
{
	char tmp[24];
	cli_buf_put(b, tmp, (size_t)snprintf(tmp, sizeof(tmp), "%" PRIu64, v));
}

void cli_buf_fini(struct cli_buf *b)
{
	free(b->p);
	memset(b, 0, sizeof(*b));
}

/* SPDX-License-Identifier: MIT */
#include "buf.h"

#include <errno.h>
#include <stdlib.h>

void cg_buf_fini(struct cg_buf *b)
{
	free(b->p);
	b->p = NULL;
	b->len = b->cap = 0;
}

char *cg_buf_reserve(struct cg_buf *b, size_t n)
{
	if (b->err)
		return NULL;
	if (b->cap - b->len >= n)
		return b->p + b->len;
	size_t cap = b->cap ? b->cap : 256;
	while (cap - b->len < n) {
		if (cap > SIZE_MAX / 2) {
			b->err = -ENOMEM;
			return NULL;
		}
		cap *= 2;
	}
	char *p = realloc(b->p, cap);
	if (!p) {
		b->err = -ENOMEM;
		return NULL;
	}
	b->p = p;
	b->cap = cap;
	return p + b->len;
}

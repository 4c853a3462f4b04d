/* SPDX-License-Identifier: MIT */
#include "vec.h"

#include <errno.h>
#include <string.h>

#include "bigmem.h"

int cg_vec_grow(struct cg_vec *v, size_t elem, size_t want)
{
	if (want <= v->cap)
		return 0;
	size_t cap = v->cap ? v->cap : 16;
	while (cap < want)
		cap += cap / 2 + 16;
	void *p = cg_big_realloc(v->p, v->cap * elem, cap * elem);
	if (!p)
		return -ENOMEM;
	v->p = p;
	v->cap = cap;
	return 0;
}

void cg_vec_free(struct cg_vec *v, size_t elem)
{
	cg_big_free(v->p, v->cap * elem);
	memset(v, 0, sizeof(*v));
}

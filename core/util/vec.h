/* SPDX-License-Identifier: MIT */
/* A growable array of fixed-size elements for the document's tables (cold growth, big blocks). */
#ifndef CG_VEC_H
#define CG_VEC_H

#include <stddef.h>

struct cg_vec {
	void *p;
	size_t len;
	size_t cap;
};

/* Makes room for want elements of elem bytes; 0 or -ENOMEM. */
int cg_vec_grow(struct cg_vec *v, size_t elem, size_t want);
void cg_vec_free(struct cg_vec *v, size_t elem);

#define CG_VEC_PUSH(v, type) \
	(((v)->len < (v)->cap || cg_vec_grow((v), sizeof(type), (v)->len + 1) == 0) \
		 ? &((type *)(v)->p)[(v)->len++] \
		 : NULL)
#define CG_VEC_AT(v, type, i) (&((type *)(v)->p)[i])

#endif

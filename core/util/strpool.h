/* SPDX-License-Identifier: MIT */
/*
 * Interned strings with dense ids. A trace repeats a handful of span ids,
 * op names and devices millions of times and reuses heap addresses, so
 * each distinct string is stored once and records carry a 32-bit id.
 */
#ifndef CG_STRPOOL_H
#define CG_STRPOOL_H

#include <stddef.h>
#include <stdint.h>

#include "sv.h"

/* Id 0 is the absent string; real strings start at 1. */
#define CG_STR_NONE 0u

struct cg_strpool {
	char *data;        /* [u32 len][bytes][NUL] ... */
	size_t data_len;
	size_t data_cap;
	uint32_t *offsets; /* id -> offset of the entry's bytes in data */
	uint32_t count;    /* ids in use, including CG_STR_NONE */
	uint32_t offsets_cap;
	uint64_t *slots;   /* open addressing: (hash << 32) | id, 0 = empty */
	uint32_t mask;
	int err;
};

void cg_strpool_init(struct cg_strpool *p);
void cg_strpool_fini(struct cg_strpool *p);
/* Interns s; returns its id, CG_STR_NONE for an absent view, or 0 with p->err set. */
uint32_t cg_strpool_intern(struct cg_strpool *p, struct cg_sv s);

static inline const char *cg_strpool_get(const struct cg_strpool *p, uint32_t id)
{
	return id == CG_STR_NONE ? NULL : p->data + p->offsets[id];
}

static inline uint32_t cg_strpool_len(const struct cg_strpool *p, uint32_t id)
{
	uint32_t n;
	if (id == CG_STR_NONE)
		return 0;
	__builtin_memcpy(&n, p->data + p->offsets[id] - 4, 4);
	return n;
}

static inline struct cg_sv cg_strpool_sv(const struct cg_strpool *p, uint32_t id)
{
	struct cg_sv v = {cg_strpool_get(p, id), cg_strpool_len(p, id)};
	return v;
}

/* Bytewise comparison of two interned strings, as Rust orders String. */
int cg_strpool_cmp(const struct cg_strpool *p, uint32_t a, uint32_t b);

#endif

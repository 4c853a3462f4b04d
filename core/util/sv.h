/* SPDX-License-Identifier: MIT */
/* String views: a pointer and a length, never NUL-terminated, never owning. */
#ifndef CG_SV_H
#define CG_SV_H

#include <stdbool.h>
#include <stdint.h>

/* A string view; p == NULL means absent. Never contains a NUL byte. */
struct cg_sv {
	const char *p;
	uint32_t n;
};

#define CG_SV_NONE ((struct cg_sv){NULL, 0})
#define CG_SV_LIT(s) ((struct cg_sv){(s), (uint32_t)(sizeof(s) - 1)})

static inline bool cg_sv_eq(struct cg_sv a, struct cg_sv b)
{
	if ((a.p == NULL) != (b.p == NULL))
		return false;
	return a.n == b.n && (a.n == 0 || __builtin_memcmp(a.p, b.p, a.n) == 0);
}

static inline struct cg_sv cg_sv_c(const char *s)
{
	struct cg_sv v = {s, s ? (uint32_t)__builtin_strlen(s) : 0};
	return v;
}

#endif

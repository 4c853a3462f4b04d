/* SPDX-License-Identifier: MIT */
/* The fast parser: the flat, escape-free records writers emit, in one pass. */
#ifndef CG_PARSE_FAST_H
#define CG_PARSE_FAST_H

#include <stddef.h>

#include "parse.h"
#include "record.h"

enum { CG_PARSE_DECLINED = 1 };

/* 0 with *out filled, or CG_PARSE_DECLINED. Never fails otherwise. */
int cg_parse_fast(struct cg_parse *p, const char *s, size_t n, struct cg_rec *out);

#endif

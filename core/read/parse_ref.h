/* SPDX-License-Identifier: MIT */
/* The reference parser: strict and complete, the source of every error message. */
#ifndef CG_PARSE_REF_H
#define CG_PARSE_REF_H

#include <stddef.h>

#include "parse.h"
#include "record.h"

/* 0 with *out filled, or -EBADMSG / -ENOMEM with p->err (and p->syntax). */
int cg_parse_ref(struct cg_parse *p, const char *s, size_t n, struct cg_rec *out);

#endif

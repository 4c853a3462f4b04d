/* SPDX-License-Identifier: MIT */
/*
 * Line parsers. The reference parser is strict and complete: the project's
 * JSON scanner checks what cJSON lets through, cJSON builds the tree and the
 * project's scanner reads integers exactly. The fast parser reads the flat,
 * escape-free records writers actually emit in one pass, and declines
 * anything else, so every error message comes from the reference parser.
 */
#ifndef CG_PARSE_H
#define CG_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "arena.h"
#include "json_scan.h"
#include "record.h"
#include "schema.h"

struct cJSON;

struct cg_parse {
	struct cg_arena arena;
	struct cg_json_scan scan;
	struct cJSON *tree; /* the reference parser's last tree, views point into it */
	char *masked;
	size_t masked_cap;
	char err[320];
	size_t err_col; /* 1-based byte column of the error, 0 when none applies */
	const char *kind_label;
	bool syntax;    /* the line is not well-formed JSON (a cut-off line looks so) */
};

void cg_parse_init(struct cg_parse *p);
void cg_parse_fini(struct cg_parse *p);

/* Store helpers shared by both parsers. */
static inline void cg_rec_set(struct cg_rec *r, uint16_t off, const void *v, size_t n)
{
	memcpy((char *)r + off, v, n);
}

static inline void cg_rec_set_sv(struct cg_rec *r, const struct cg_field *f, struct cg_sv v)
{
	cg_rec_set(r, f->off, &v, sizeof(v));
}

static inline void cg_rec_set_u64(struct cg_rec *r, const struct cg_field *f, uint64_t v)
{
	cg_rec_set(r, f->off, &v, sizeof(v));
	if (f->off2) {
		bool t = true;
		cg_rec_set(r, f->off2, &t, 1);
	}
}

static inline void cg_rec_set_list(struct cg_rec *r, const struct cg_field *f, const void *v,
				   uint32_t n)
{
	cg_rec_set(r, f->off, &v, sizeof(v));
	cg_rec_set(r, f->off2, &n, sizeof(n));
}

#endif

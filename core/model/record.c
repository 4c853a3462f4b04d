/* SPDX-License-Identifier: MIT */
/*
 * Value equality of records, for differential tests (two parsers, or a
 * format/parse round trip). A field behind a has-flag is compared only
 * when present, so garbage in an absent slot never makes records differ.
 */
#include "record.h"

#include <string.h>

static bool u64s_eq(const uint64_t *a, uint32_t na, const uint64_t *b, uint32_t nb)
{
	return na == nb && (na == 0 || memcmp(a, b, na * sizeof(*a)) == 0);
}

static bool svs_eq(const struct cg_sv *a, uint32_t na, const struct cg_sv *b, uint32_t nb)
{
	if (na != nb)
		return false;
	for (uint32_t i = 0; i < na; i++)
		if (!cg_sv_eq(a[i], b[i]))
			return false;
	return true;
}

static bool opt_u64_eq(bool ha, uint64_t a, bool hb, uint64_t b)
{
	return ha == hb && (!ha || a == b);
}

static bool tags_eq(const struct cg_tagv *a, uint32_t na, const struct cg_tagv *b, uint32_t nb)
{
	if (na != nb)
		return false;
	for (uint32_t i = 0; i < na; i++)
		if (!cg_sv_eq(a[i].key, b[i].key) || !cg_sv_eq(a[i].value, b[i].value))
			return false;
	return true;
}

/* Bitwise, so -0.0 differs from 0.0 and a NaN equals the same NaN. */
static bool opt_f64_eq(bool ha, double a, bool hb, double b)
{
	return ha == hb && (!ha || memcmp(&a, &b, sizeof(a)) == 0);
}

static bool mods_eq(const struct cg_modv *a, uint32_t na, const struct cg_modv *b, uint32_t nb)
{
	if (na != nb)
		return false;
	for (uint32_t i = 0; i < na; i++)
		if (!cg_sv_eq(a[i].path, b[i].path) || a[i].base != b[i].base ||
		    a[i].start != b[i].start || a[i].end != b[i].end ||
		    (a[i].build_id.p == NULL) != (b[i].build_id.p == NULL) ||
		    !cg_sv_eq(a[i].build_id, b[i].build_id))
			return false;
	return true;
}

static bool pycodes_eq(const struct cg_pycodev *a, uint32_t na, const struct cg_pycodev *b,
		       uint32_t nb)
{
	if (na != nb)
		return false;
	for (uint32_t i = 0; i < na; i++)
		if (a[i].id != b[i].id || a[i].line != b[i].line || a[i].format != b[i].format ||
		    !cg_sv_eq(a[i].name, b[i].name) || !cg_sv_eq(a[i].file, b[i].file) ||
		    (a[i].qualname.p == NULL) != (b[i].qualname.p == NULL) ||
		    !cg_sv_eq(a[i].qualname, b[i].qualname) || a[i].table_len != b[i].table_len ||
		    (a[i].table_len && memcmp(a[i].table, b[i].table, a[i].table_len)))
			return false;
	return true;
}

/* One comparison per field of record_fields.h, joined by &&. */
#define EQ(k, type, ...) &&EQ_##type(x, y, __VA_ARGS__)
#define EQ_STR(x, y, m, pres) cg_sv_eq(x->m, y->m)
#define EQ_DEV(x, y, m, pres) cg_sv_eq(x->m, y->m)
#define EQ_U64(x, y, m, pres) (x->m == y->m)
#define EQ_U64_OPT(x, y, m, pres, has) opt_u64_eq(x->has, x->m, y->has, y->m)
#define EQ_BOOL(x, y, m, pres) (x->m == y->m)
#define EQ_FLAG(x, y, m, pres) (x->m == y->m)
#define EQ_ENUM(x, y, m, pres, names, def) (x->m == y->m)
#define EQ_STRS(x, y, m, pres, n) svs_eq(x->m, x->n, y->m, y->n)
#define EQ_U64S(x, y, m, pres, n) u64s_eq(x->m, x->n, y->m, y->n)
#define EQ_F64_OPT(x, y, m, pres, has) opt_f64_eq(x->has, x->m, y->has, y->m)
#define EQ_TAGS(x, y, m, pres, n) tags_eq(x->m, x->n, y->m, y->n)
#define EQ_ID(x, y, m, pres) (x->m == y->m)
#define EQ_HEXS(x, y, m, pres, n) u64s_eq(x->m, x->n, y->m, y->n)
#define EQ_MODS(x, y, m, pres, n) mods_eq(x->m, x->n, y->m, y->n)
#define EQ_PYCODES(x, y, m, pres, n) pycodes_eq(x->m, x->n, y->m, y->n)

#define KIND_EQ(k, json, kind)                                                                     \
	static bool k##_eq(const struct cg_rec_##k *x, const struct cg_rec_##k *y)                 \
	{                                                                                          \
		return true CG_FIELDS_##k(EQ, k);                                                  \
	}
CG_RECORD_KINDS(KIND_EQ)

bool cg_rec_equal(const struct cg_rec *a, const struct cg_rec *b)
{
	if (a->kind != b->kind)
		return false;
	switch (a->kind) {
#define CASE_EQ(k, json, kind)                                                                     \
	case kind:                                                                                 \
		return k##_eq(&a->u.k, &b->u.k);
		CG_RECORD_KINDS(CASE_EQ)
	case CGTRACE_KIND_COUNT:
		break;
	}
	return false;
}

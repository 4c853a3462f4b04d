/* SPDX-License-Identifier: MIT */
#include "schema.h"

#include <string.h>

#include "names.h"

#define OFF(k, f) ((uint16_t)offsetof(struct cg_rec, u.k.f))
#define NAME(s) .name = s, .name_len = sizeof(s) - 1
#define BASE(k, m, t, pres) NAME(#m), .type = t, .presence = pres, .off = OFF(k, m)
#define N_ENUM(tab) ((uint8_t)(sizeof(tab) / sizeof(tab[0])))

/* One struct cg_field per field of record_fields.h; SF_type gives its initialisers. */
#define SF(k, type, ...) {SF_##type(k, __VA_ARGS__)},
#define SF_STR(k, m, pres) BASE(k, m, CG_F_STR, pres)
#define SF_DEV(k, m, pres) BASE(k, m, CG_F_STR, pres)
#define SF_U64(k, m, pres) BASE(k, m, CG_F_U64, pres)
#define SF_U64_OPT(k, m, pres, has) BASE(k, m, CG_F_U64, pres), .off2 = OFF(k, has)
#define SF_BOOL(k, m, pres) BASE(k, m, CG_F_BOOL, pres)
#define SF_FLAG(k, m, pres) BASE(k, m, CG_F_BOOL, pres)
#define SF_ENUM(k, m, pres, tab, def)                                                              \
	BASE(k, m, CG_F_ENUM, pres), .enum_names = tab, .n_enum = N_ENUM(tab), .enum_default = def
#define SF_STRS(k, m, pres, n) BASE(k, m, CG_F_STRS, pres), .off2 = OFF(k, n)
#define SF_U64S(k, m, pres, n) BASE(k, m, CG_F_U64S, pres), .off2 = OFF(k, n)
#define SF_F64_OPT(k, m, pres, has) BASE(k, m, CG_F_F64, pres), .off2 = OFF(k, has)
#define SF_TAGS(k, m, pres, n) BASE(k, m, CG_F_TAGS, pres), .off2 = OFF(k, n)
/* Stacks and modules: the key is cgprobe_ and the member (record_fields.h). */
#define EXT(k, m, t, pres) NAME("cgprobe_" #m), .type = t, .presence = pres, .off = OFF(k, m)
#define SF_ID(k, m, pres) EXT(k, m, CG_F_ID, pres)
#define SF_HEXS(k, m, pres, n) EXT(k, m, CG_F_HEXS, pres), .off2 = OFF(k, n)
#define SF_MODS(k, m, pres, n) EXT(k, m, CG_F_MODS, pres), .off2 = OFF(k, n)
#define SF_PYCODES(k, m, pres, n) EXT(k, m, CG_F_PYCODES, pres), .off2 = OFF(k, n)

#define FIELD_TABLE(k, json, kind)                                                                 \
	static const struct cg_field k##_fields[] = {CG_FIELDS_##k(SF, k)};
CG_RECORD_KINDS(FIELD_TABLE)

#define KIND(k, json, kind_)                                                                       \
	{NAME(json), .kind = kind_, .fields = k##_fields,                                          \
	 .n_fields = sizeof(k##_fields) / sizeof(k##_fields[0])},

/* Indexed by enum cgtrace_kind: the kinds list follows the enum's order. */
static const struct cg_kind_desc kinds[CGTRACE_KIND_COUNT] = {CG_RECORD_KINDS(KIND)};

const struct cg_kind_desc *cg_schema_kind(const char *s, size_t n)
{
	for (size_t i = 0; i < CGTRACE_KIND_COUNT; i++)
		if (kinds[i].name_len == n && kinds[i].name[0] == s[0] &&
		    memcmp(kinds[i].name, s, n) == 0)
			return &kinds[i];
	return NULL;
}

int cg_schema_field(const struct cg_kind_desc *desc, const char *s, size_t n)
{
	for (int i = 0; i < desc->n_fields; i++) {
		const struct cg_field *f = &desc->fields[i];
		if (f->name_len == n && memcmp(f->name, s, n) == 0)
			return i;
	}
	return -1;
}

const char *cg_schema_type_name(const struct cg_field *f)
{
	switch (f->type) {
	case CG_F_STR:
		return "a string";
	case CG_F_U64:
		return "an unsigned 64-bit integer";
	case CG_F_BOOL:
		return "a boolean";
	case CG_F_ENUM:
		return "a string";
	case CG_F_STRS:
		return "an array of strings";
	case CG_F_U64S:
		return "an array of unsigned 64-bit integers";
	case CG_F_TAGS:
		return "an object of strings";
	case CG_F_F64:
		return "a number";
	case CG_F_ID:
		return "an integer from 1 to 18446744073709551615";
	case CG_F_HEXS:
		return "an array of hex strings";
	case CG_F_MODS:
		return "an array of module objects";
	case CG_F_PYCODES:
		return "an array of code objects";
	}
	return "?";
}

const struct cg_kind_desc *cg_schema_kind_of(enum cgtrace_kind kind)
{
	return kind < CGTRACE_KIND_COUNT ? &kinds[kind] : NULL;
}

bool cg_schema_field_ext(const struct cg_field *f)
{
	return strncmp(f->name, "cgprobe_", 8) == 0 || strcmp(f->name, "managed") == 0 ||
	       strcmp(f->name, "oom_request_bytes") == 0;
}

bool cg_schema_kind_ext(enum cgtrace_kind kind)
{
	return kind == CGTRACE_KIND_DEVICE_INFO;
}

static bool flag_at(const struct cg_rec *r, uint16_t off)
{
	bool b;
	memcpy(&b, (const char *)r + off, 1);
	return b;
}

static uint64_t u64_at(const struct cg_rec *r, uint16_t off)
{
	uint64_t v;
	memcpy(&v, (const char *)r + off, sizeof(v));
	return v;
}

static uint32_t u32_at(const struct cg_rec *r, uint16_t off)
{
	uint32_t v;
	memcpy(&v, (const char *)r + off, sizeof(v));
	return v;
}

bool cg_schema_field_set(const struct cg_field *f, const struct cg_rec *r)
{
	switch (f->type) {
	case CG_F_STR: {
		struct cg_sv v;
		memcpy(&v, (const char *)r + f->off, sizeof(v));
		return v.p != NULL;
	}
	case CG_F_U64:
	case CG_F_F64:
		return f->off2 ? flag_at(r, f->off2) : true;
	case CG_F_BOOL:
		return f->presence == CG_REQUIRED || flag_at(r, f->off);
	case CG_F_ID:
		return u64_at(r, f->off) != 0;
	case CG_F_HEXS:
	case CG_F_MODS:
	case CG_F_PYCODES:
		return u32_at(r, f->off2) != 0;
	default:
		return true;
	}
}

void cg_schema_strip_ext(struct cg_rec *r)
{
	const struct cg_kind_desc *desc = cg_schema_kind_of(r->kind);
	for (int i = 0; desc && i < desc->n_fields; i++) {
		const struct cg_field *f = &desc->fields[i];
		if (!cg_schema_field_ext(f))
			continue;
		char *base = (char *)r;
		switch (f->type) {
		case CG_F_STR:
			memset(base + f->off, 0, sizeof(struct cg_sv));
			break;
		case CG_F_U64:
		case CG_F_F64:
			if (f->off2)
				memset(base + f->off2, 0, 1);
			break;
		case CG_F_BOOL:
			memset(base + f->off, 0, 1);
			break;
		case CG_F_ID:
			memset(base + f->off, 0, sizeof(uint64_t));
			break;
		case CG_F_HEXS:
		case CG_F_MODS:
		case CG_F_PYCODES:
			memset(base + f->off, 0, sizeof(void *));
			memset(base + f->off2, 0, sizeof(uint32_t));
			break;
		}
	}
}

void cg_schema_defaults(const struct cg_kind_desc *desc, struct cg_rec *r)
{
	for (int i = 0; i < desc->n_fields; i++) {
		const struct cg_field *f = &desc->fields[i];
		if (f->type == CG_F_ENUM)
			*((uint8_t *)r + f->off) = f->enum_default;
	}
}

/* SPDX-License-Identifier: MIT */
/*
 * The record schema as data: one table per kind naming each field, its
 * JSON type, whether it is required, optional (null = absent) or defaulted
 * (absent = default, null = error), and where it lands in struct cg_rec.
 * Both parsers read it, so they cannot disagree about the format.
 */
#ifndef CG_SCHEMA_H
#define CG_SCHEMA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "record.h"

enum cg_ftype {
	CG_F_STR,
	CG_F_U64,
	CG_F_BOOL,
	CG_F_ENUM,
	CG_F_STRS,
	CG_F_U64S,
	CG_F_TAGS,
	CG_F_F64,
	CG_F_ID,   /* u64 of at least 1 */
	CG_F_HEXS, /* array of hex strings, read as u64 */
	CG_F_MODS, /* array of module objects, read as struct cg_modv */
	CG_F_PYCODES, /* array of Python code objects, read as struct cg_pycodev */
};

enum cg_presence {
	CG_REQUIRED,
	CG_OPTIONAL, /* absent or null: flag cleared / view NULL */
	CG_DEFAULT,  /* absent: zero or enum default; null is an error */
};

struct cg_field {
	const char *name;
	uint8_t name_len;
	uint8_t type;
	uint8_t presence;
	uint8_t enum_default;
	uint16_t off;  /* value */
	uint16_t off2; /* list count (uint32_t) or has-flag (bool) */
	const char *const *enum_names;
	uint8_t n_enum;
};

struct cg_kind_desc {
	const char *name;
	uint8_t name_len;
	enum cgtrace_kind kind;
	const struct cg_field *fields;
	uint8_t n_fields;
};

/* The description of a record kind named s, or NULL when unknown. */
const struct cg_kind_desc *cg_schema_kind(const char *s, size_t n);
/* Index of the field named s in desc, or -1. */
int cg_schema_field(const struct cg_kind_desc *desc, const char *s, size_t n);
/* Human name of a field's type, for messages. */
const char *cg_schema_type_name(const struct cg_field *f);
/*
 * True for an extension field, one the trace/6 spec does not define:
 * every cgprobe_* field, `managed` and `oom_request_bytes`
 * (docs/trace-format.md, Extensions).
 */
bool cg_schema_field_ext(const struct cg_field *f);
/* True for an extension kind (cgprobe_device). */
bool cg_schema_kind_ext(enum cgtrace_kind kind);
/* Clears every extension field of r: what a strict trace/6 reader keeps. */
void cg_schema_strip_ext(struct cg_rec *r);
/* Whether field f of r holds a value (absent optional and unset extension fields do not). */
bool cg_schema_field_set(const struct cg_field *f, const struct cg_rec *r);
/* The description of a kind by its enum value. */
const struct cg_kind_desc *cg_schema_kind_of(enum cgtrace_kind kind);
/* Sets the defaults of every defaulted enum field (the rest is zeroed). */
void cg_schema_defaults(const struct cg_kind_desc *desc, struct cg_rec *r);

#endif

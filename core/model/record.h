/* SPDX-License-Identifier: MIT */
/*
 * One trace record as a set of views: what the parsers produce, what the
 * document builder consumes and what the JSONL formatter writes. Strings
 * point into the parsed line or a per-line scratch arena, so a record only
 * lives until the next line is parsed.
 */
#ifndef CG_RECORD_H
#define CG_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cgtrace.h"
#include "record_fields.h"
#include "sv.h"

struct cg_tagv {
	struct cg_sv key;
	struct cg_sv value;
};

/* The most frames one stack may have (docs/stacks.md); readers reject more. */
#define CG_STACK_FRAMES_MAX 1024u
/* The longest build id, in hex digits (GNU build ids are 40). */
#define CG_BUILD_ID_HEX_MAX 128u

/* One entry of a memory record's cgprobe_modules (docs/stacks.md). */
struct cg_modv {
	struct cg_sv path;
	uint64_t base;  /* the load bias */
	uint64_t start; /* [start, end): the PT_LOAD address range */
	uint64_t end;
	struct cg_sv build_id; /* lowercase hex; p NULL: none */
};

/*
 * One entry of a memory record's cgprobe_py_codes (docs/python-frames.md):
 * a Python code object that frames of stacks name by id.
 */
struct cg_pycodev {
	uint64_t id;           /* 1 and up */
	int64_t line;          /* its first line (co_firstlineno) */
	struct cg_sv name;     /* co_name */
	struct cg_sv qualname; /* co_qualname, p NULL: none (before Python 3.11) */
	struct cg_sv file;     /* co_filename */
	const uint8_t *table;  /* the line table's bytes */
	uint32_t table_len;
	uint8_t format;        /* the table's, enum cg_py_lt; 0: no table */
};

/*
 * The kinds' structs, expanded from record_fields.h. Members go by width,
 * eight-byte ones first, then counts, then bytes and flags, so a struct
 * has no padding holes whatever the format's field order.
 */
#define CG_W8(k, type, ...) CG_W8_##type(__VA_ARGS__)
#define CG_W8_STR(m, pres) struct cg_sv m;
#define CG_W8_DEV(m, pres) struct cg_sv m;
#define CG_W8_U64(m, pres) uint64_t m;
#define CG_W8_U64_OPT(m, pres, has) uint64_t m;
#define CG_W8_BOOL(m, pres)
#define CG_W8_FLAG(m, pres)
#define CG_W8_ENUM(m, pres, names, def)
#define CG_W8_STRS(m, pres, n) const struct cg_sv *m;
#define CG_W8_U64S(m, pres, n) const uint64_t *m;
#define CG_W8_F64_OPT(m, pres, has) double m;
#define CG_W8_TAGS(m, pres, n) const struct cg_tagv *m; /* in record order, keys unique */
#define CG_W8_ID(m, pres) uint64_t m; /* 0: absent */
#define CG_W8_HEXS(m, pres, n) const uint64_t *m;
#define CG_W8_MODS(m, pres, n) const struct cg_modv *m;
#define CG_W8_PYCODES(m, pres, n) const struct cg_pycodev *m;

#define CG_W4(k, type, ...) CG_W4_##type(__VA_ARGS__)
#define CG_W4_STR(m, pres)
#define CG_W4_DEV(m, pres)
#define CG_W4_U64(m, pres)
#define CG_W4_U64_OPT(m, pres, has)
#define CG_W4_BOOL(m, pres)
#define CG_W4_FLAG(m, pres)
#define CG_W4_ENUM(m, pres, names, def)
#define CG_W4_STRS(m, pres, n) uint32_t n;
#define CG_W4_U64S(m, pres, n) uint32_t n;
#define CG_W4_F64_OPT(m, pres, has)
#define CG_W4_TAGS(m, pres, n) uint32_t n;
#define CG_W4_ID(m, pres)
#define CG_W4_HEXS(m, pres, n) uint32_t n;
#define CG_W4_MODS(m, pres, n) uint32_t n;
#define CG_W4_PYCODES(m, pres, n) uint32_t n;

#define CG_W1(k, type, ...) CG_W1_##type(__VA_ARGS__)
#define CG_W1_STR(m, pres)
#define CG_W1_DEV(m, pres)
#define CG_W1_U64(m, pres)
#define CG_W1_U64_OPT(m, pres, has) bool has;
#define CG_W1_BOOL(m, pres) bool m;
#define CG_W1_FLAG(m, pres) bool m;
#define CG_W1_ENUM(m, pres, names, def) uint8_t m; /* index into names */
#define CG_W1_STRS(m, pres, n)
#define CG_W1_U64S(m, pres, n)
#define CG_W1_F64_OPT(m, pres, has) bool has;
#define CG_W1_TAGS(m, pres, n)
#define CG_W1_ID(m, pres)
#define CG_W1_HEXS(m, pres, n)
#define CG_W1_MODS(m, pres, n)
#define CG_W1_PYCODES(m, pres, n)

#define CG_REC_STRUCT(k, json, kind)                                                               \
	struct cg_rec_##k {                                                                        \
		CG_FIELDS_##k(CG_W8, k) CG_FIELDS_##k(CG_W4, k) CG_FIELDS_##k(CG_W1, k)            \
	};
CG_RECORD_KINDS(CG_REC_STRUCT)
#undef CG_REC_STRUCT

struct cg_rec {
	enum cgtrace_kind kind;
	union {
#define CG_REC_MEMBER(k, json, kind) struct cg_rec_##k k;
		CG_RECORD_KINDS(CG_REC_MEMBER)
#undef CG_REC_MEMBER
	} u;
};

/* True when both records hold the same values (used by differential tests). */
bool cg_rec_equal(const struct cg_rec *a, const struct cg_rec *b);

#endif

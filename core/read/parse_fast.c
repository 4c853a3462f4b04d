/* SPDX-License-Identifier: MIT */
/*
 * The fast parser: one pass over a flat record whose first key is `kind`,
 * with ASCII strings free of escapes and only known fields. Anything else,
 * valid or not, is declined and left to the reference parser, so this file
 * only has to be right about what it accepts.
 */
#include "names.h"
#include "num_scan.h"
#include "parse_fast.h"
#include "swar.h"

#include <stdint.h>

#define MAX_LIST 32

/* Bytes that may stand inside a string here: printable ASCII but `"` and `\`. */
static inline bool plain(unsigned char c)
{
	return c >= 0x20 && c < 0x80 && c != '"' && c != '\\';
}

static inline const char *ws(const char *p, const char *e)
{
	while (p < e && (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n'))
		p++;
	return p;
}

static inline const char *str(const char *p, const char *e, struct cg_sv *out)
{
	if (p >= e || *p != '"')
		return NULL;
	const char *s = ++p;
	while (e - p >= 8) {
		uint64_t w;
		memcpy(&w, p, 8);
		if (cg_swar_special(w))
			break;
		p += 8;
	}
	while (p < e && plain((unsigned char)*p))
		p++;
	if (p >= e || *p != '"')
		return NULL;
	out->p = s;
	out->n = (uint32_t)(p - s);
	return p + 1;
}

static inline const char *u64(const char *p, const char *e, uint64_t *out)
{
	uint64_t v;
	if (cg_scan_u64_prefix(p, e, &v, &p) < 0)
		return NULL;
	if (p < e && (*p == '.' || *p == 'e' || *p == 'E'))
		return NULL;
	*out = v;
	return p;
}

/*
 * After a member of a list or an object: past the comma before the next
 * one, or at close with *closed set; NULL for anything else.
 */
static inline const char *next_member(const char *p, const char *e, char close, bool *closed)
{
	p = ws(p, e);
	*closed = p < e && *p == close;
	if (*closed)
		return p;
	if (p >= e || *p != ',')
		return NULL;
	return ws(p + 1, e);
}

static const char *list(struct cg_parse *ps, const char *p, const char *e,
			const struct cg_field *f, struct cg_rec *r)
{
	uint64_t nums[MAX_LIST];
	struct cg_sv strs[MAX_LIST];
	uint32_t n = 0;
	if (p >= e || *p != '[')
		return NULL;
	p = ws(p + 1, e);
	if (p < e && *p == ']') {
		cg_rec_set_list(r, f, NULL, 0);
		return p + 1;
	}
	for (bool closed = false; !closed; n++) {
		if (n == MAX_LIST)
			return NULL;
		p = f->type == CG_F_U64S ? u64(p, e, &nums[n]) : str(p, e, &strs[n]);
		if (!p || !(p = next_member(p, e, ']', &closed)))
			return NULL;
	}
	size_t sz = f->type == CG_F_U64S ? sizeof(nums[0]) : sizeof(strs[0]);
	void *arr = cg_arena_alloc(&ps->arena, n * sz);
	if (!arr)
		return NULL;
	memcpy(arr, f->type == CG_F_U64S ? (void *)nums : (void *)strs, n * sz);
	cg_rec_set_list(r, f, arr, n);
	return p + 1;
}

/*
 * A stack's frames: canonical hex strings into the arena. Anything odd
 * (empty, too many, a spelling the reference parser must judge) declines.
 */
static const char *hexs(struct cg_parse *ps, const char *p, const char *e,
			const struct cg_field *f, struct cg_rec *r)
{
	uint64_t v[CG_STACK_FRAMES_MAX];
	uint32_t n = 0;
	if (p >= e || *p != '[')
		return NULL;
	p = ws(p + 1, e);
	for (bool closed = false; !closed; n++) {
		struct cg_sv s;
		bool vmm;
		if (n == CG_STACK_FRAMES_MAX || !(p = str(p, e, &s)) ||
		    !cg_scan_hex_id(s.p, s.n, &vmm, &v[n]) || vmm ||
		    !(p = next_member(p, e, ']', &closed)))
			return NULL;
	}
	uint64_t *arr = cg_arena_alloc(&ps->arena, n * sizeof(*arr));
	if (!arr)
		return NULL;
	memcpy(arr, v, n * sizeof(*arr));
	cg_rec_set_list(r, f, arr, n);
	return p + 1;
}

static const char *value(struct cg_parse *ps, const char *p, const char *e,
			 const struct cg_field *f, struct cg_rec *r)
{
	switch (f->type) {
	case CG_F_STR: {
		struct cg_sv v;
		p = str(p, e, &v);
		if (p)
			cg_rec_set_sv(r, f, v);
		return p;
	}
	case CG_F_U64:
	case CG_F_ID: {
		/* Every allocation's stack id (ID) too; its 0 is the reference parser's error. */
		uint64_t v;
		p = u64(p, e, &v);
		if (!p || (f->type == CG_F_ID && v == 0))
			return NULL;
		cg_rec_set_u64(r, f, v);
		return p;
	}
	case CG_F_BOOL: {
		bool b;
		if (e - p >= 4 && memcmp(p, "true", 4) == 0)
			b = true, p += 4;
		else if (e - p >= 5 && memcmp(p, "false", 5) == 0)
			b = false, p += 5;
		else
			return NULL;
		cg_rec_set(r, f->off, &b, 1);
		return p;
	}
	case CG_F_ENUM: {
		struct cg_sv v;
		p = str(p, e, &v);
		int idx = p ? cg_name_lookup(f->enum_names, f->n_enum, v.p, v.n) : -1;
		if (idx < 0)
			return NULL;
		uint8_t x = (uint8_t)idx;
		cg_rec_set(r, f->off, &x, 1);
		return p;
	}
	case CG_F_STRS:
	case CG_F_U64S:
		return list(ps, p, e, f, r);
	case CG_F_HEXS:
		return hexs(ps, p, e, f, r);
	default:
		return NULL; /* tags, floats and modules are rare: the reference parser reads them */
	}
}

int cg_parse_fast(struct cg_parse *ps, const char *s, size_t n, struct cg_rec *out)
{
	const char *p = s, *e = s + n;
	struct cg_sv k;

	p = ws(p, e);
	if (e - p < 8 || memcmp(p, "{\"kind\"", 7) != 0)
		return CG_PARSE_DECLINED;
	p = ws(p + 7, e);
	if (p >= e || *p != ':')
		return CG_PARSE_DECLINED;
	p = str(ws(p + 1, e), e, &k);
	const struct cg_kind_desc *desc = p ? cg_schema_kind(k.p, k.n) : NULL;
	if (!desc)
		return CG_PARSE_DECLINED;

	memset(out, 0, sizeof(*out));
	out->kind = desc->kind;
	cg_schema_defaults(desc, out);
	uint64_t seen = 0;
	int expect = 0;
	for (;;) {
		bool closed;
		if (!(p = next_member(p, e, '}', &closed)))
			return CG_PARSE_DECLINED;
		if (closed)
			break;
		/* Writers emit fields in schema order: try the next one's `"name"` first. */
		int i = expect;
		const struct cg_field *f = i < desc->n_fields ? &desc->fields[i] : NULL;
		if (f && e - p > f->name_len + 1 && p[0] == '"' && p[f->name_len + 1] == '"' &&
		    memcmp(p + 1, f->name, f->name_len) == 0) {
			p += f->name_len + 2;
		} else {
			p = str(p, e, &k);
			if (!p)
				return CG_PARSE_DECLINED;
			i = cg_schema_field(desc, k.p, k.n);
		}
		expect = i + 1;
		if (i < 0 || (seen & (1ull << i)))
			return CG_PARSE_DECLINED;
		seen |= 1ull << i;
		p = ws(p, e);
		if (p >= e || *p != ':')
			return CG_PARSE_DECLINED;
		p = value(ps, ws(p + 1, e), e, &desc->fields[i], out);
		if (!p)
			return CG_PARSE_DECLINED;
	}
	if (ws(p + 1, e) != e)
		return CG_PARSE_DECLINED;
	for (int i = 0; i < desc->n_fields; i++)
		if (desc->fields[i].presence == CG_REQUIRED && !(seen & (1ull << i)))
			return CG_PARSE_DECLINED;
	return 0;
}

/* SPDX-License-Identifier: MIT */
#include "parse_ref.h"

#include "names.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "num_scan.h"
#include "py_lines.h"

#ifndef CG_JSON_MAX_DEPTH
#define CG_JSON_MAX_DEPTH 128
#endif

__attribute__((format(printf, 3, 4))) static int fail(struct cg_parse *p, bool syntax,
						     const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(p->err, sizeof(p->err), fmt, ap);
	va_end(ap);
	p->syntax = syntax;
	return -EBADMSG;
}

/*
 * cJSON reads numbers as doubles and stops at 63 characters, so every number
 * is masked to `0` before cJSON sees the line; the exact text stays in the
 * scanner's token list, matched to nodes by their preorder position.
 */
static int mask_numbers(struct cg_parse *p, const char *s, size_t n)
{
	if (p->masked_cap < n + 1) {
		char *m = realloc(p->masked, n + 1);
		if (!m)
			return -ENOMEM;
		p->masked = m;
		p->masked_cap = n + 1;
	}
	memcpy(p->masked, s, n);
	p->masked[n] = '\0';
	for (size_t i = 0; i < p->scan.n_nums; i++) {
		const struct cg_json_tok *t = &p->scan.nums[i];
		p->masked[t->off] = '0';
		memset(p->masked + t->off + 1, ' ', t->len - 1);
	}
	return 0;
}

/* Numbers each number node with its token index, in document order. */
static void number_nodes(cJSON *root)
{
	/* The scanner caps nesting at 128 levels, so the stack cannot overflow. */
	cJSON *stack[CG_JSON_MAX_DEPTH + 2];
	size_t depth = 0, k = 0;
	cJSON *node = root->child;
	while (node) {
		if (cJSON_IsNumber(node))
			node->valuedouble = (double)k++;
		if (node->child && depth < sizeof(stack) / sizeof(stack[0])) {
			stack[depth++] = node;
			node = node->child;
			continue;
		}
		while (!node->next && depth)
			node = stack[--depth];
		node = node->next;
	}
}

static const struct cg_json_tok *token_of(struct cg_parse *p, const cJSON *node)
{
	size_t k = (size_t)node->valuedouble;
	return k < p->scan.n_nums ? &p->scan.nums[k] : NULL;
}

static int type_error(struct cg_parse *p, const struct cg_field *f, const cJSON *v)
{
	if (cJSON_IsNull(v))
		return fail(p, false, "%s record: field `%s` must be %s, not null", p->kind_label,
			    f->name, cg_schema_type_name(f));
	return fail(p, false, "%s record: field `%s` must be %s", p->kind_label, f->name,
		    cg_schema_type_name(f));
}

static int read_u64(struct cg_parse *p, const char *line, const struct cg_field *f,
		    const cJSON *v, uint64_t *out)
{
	const struct cg_json_tok *t = cJSON_IsNumber(v) ? token_of(p, v) : NULL;
	if (!t)
		return type_error(p, f, v);
	int r = cg_scan_u64(line + t->off, t->len, out);
	if (r == -ERANGE)
		return fail(p, false, "%s record: field `%s` is out of range: %.*s (maximum "
				      "18446744073709551615)",
			    p->kind_label, f->name, (int)(t->len > 40 ? 40 : t->len), line + t->off);
	if (r < 0)
		return fail(p, false,
			    "%s record: field `%s` must be an unsigned 64-bit integer, got %.*s",
			    p->kind_label, f->name, (int)(t->len > 40 ? 40 : t->len), line + t->off);
	return 0;
}

static struct cg_sv node_sv(const cJSON *v)
{
	return cg_sv_c(v->valuestring);
}

static int read_list(struct cg_parse *p, const char *line, const struct cg_field *f,
		     const cJSON *v, struct cg_rec *r)
{
	if (!cJSON_IsArray(v))
		return type_error(p, f, v);
	uint32_t n = 0;
	for (const cJSON *e = v->child; e; e = e->next)
		n++;
	size_t elem = f->type == CG_F_STRS ? sizeof(struct cg_sv) : sizeof(uint64_t);
	char *arr = n ? cg_arena_alloc(&p->arena, (size_t)n * elem) : NULL;
	if (n && !arr)
		return -ENOMEM;
	uint32_t i = 0;
	for (const cJSON *e = v->child; e; e = e->next, i++) {
		if (f->type == CG_F_STRS) {
			if (!cJSON_IsString(e))
				return type_error(p, f, e);
			((struct cg_sv *)arr)[i] = node_sv(e);
		} else {
			int ret = read_u64(p, line, f, e, &((uint64_t *)arr)[i]);
			if (ret)
				return ret;
		}
	}
	cg_rec_set_list(r, f, arr, n);
	return 0;
}

static int read_tags(struct cg_parse *p, const struct cg_field *f, const cJSON *v,
		     struct cg_rec *r)
{
	if (!cJSON_IsObject(v))
		return type_error(p, f, v);
	uint32_t n = 0;
	for (const cJSON *e = v->child; e; e = e->next)
		n++;
	struct cg_tagv *tags = n ? cg_arena_alloc(&p->arena, (size_t)n * sizeof(*tags)) : NULL;
	if (n && !tags)
		return -ENOMEM;
	uint32_t i = 0;
	for (const cJSON *e = v->child; e; e = e->next, i++) {
		if (!cJSON_IsString(e))
			return fail(p, false, "%s record: tag `%s` must be a string", p->kind_label,
				    e->string);
		tags[i].key = cg_sv_c(e->string);
		tags[i].value = node_sv(e);
	}
	cg_rec_set_list(r, f, tags, n);
	return 0;
}

/* Shows a JSON value in a message: a string quoted, anything else by its type. */
static void show(const cJSON *v, char *out, size_t n)
{
	if (cJSON_IsString(v))
		snprintf(out, n, "\"%.40s\"", v->valuestring);
	else
		snprintf(out, n, "%s",
			 cJSON_IsNull(v)     ? "null"
			 : cJSON_IsNumber(v) ? "a number"
			 : cJSON_IsBool(v)   ? "a boolean"
			 : cJSON_IsArray(v)  ? "an array"
					     : "an object");
}

/* A hex string of docs/stacks.md: "0x" and lowercase hex digits without leading zeros. */
static bool hex_value(const cJSON *v, uint64_t *out)
{
	bool vmm;
	return cJSON_IsString(v) &&
	       cg_scan_hex_id(v->valuestring, strlen(v->valuestring), &vmm, out) && !vmm;
}

static int read_id(struct cg_parse *p, const char *line, const struct cg_field *f, const cJSON *v,
		   struct cg_rec *r)
{
	uint64_t x;
	int ret = read_u64(p, line, f, v, &x);
	if (ret == 0 && x == 0)
		return fail(p, false, "%s: must be 1 or more, not 0", f->name);
	if (ret == 0)
		cg_rec_set_u64(r, f, x);
	return ret;
}

static int count_array(struct cg_parse *p, const struct cg_field *f, const cJSON *v, uint32_t max,
		       uint32_t *n)
{
	if (!cJSON_IsArray(v))
		return type_error(p, f, v);
	uint32_t k = 0;
	for (const cJSON *e = v->child; e && k <= max; e = e->next)
		k++;
	if (k == 0)
		return fail(p, false, "%s: must not be empty", f->name);
	if (k > max)
		return fail(p, false, "%s: holds more than %u entries", f->name, max);
	*n = k;
	return 0;
}

static int read_hexs(struct cg_parse *p, const struct cg_field *f, const cJSON *v,
		     struct cg_rec *r)
{
	uint32_t n;
	int ret = count_array(p, f, v, CG_STACK_FRAMES_MAX, &n);
	if (ret)
		return ret;
	uint64_t *arr = cg_arena_alloc(&p->arena, (size_t)n * sizeof(*arr));
	if (!arr)
		return -ENOMEM;
	uint32_t i = 0;
	for (const cJSON *e = v->child; e; e = e->next, i++) {
		if (!hex_value(e, &arr[i])) {
			char got[64];
			show(e, got, sizeof(got));
			return fail(p, false, "%s: frame %u is %s, not \"0x\" and lowercase hex",
				    f->name, i, got);
		}
	}
	cg_rec_set_list(r, f, arr, n);
	return 0;
}

/* A build id: an even number of lowercase hex digits, 2 to CG_BUILD_ID_HEX_MAX. */
static bool build_id_ok(const char *s)
{
	size_t n = strlen(s);
	if (n < 2 || n > CG_BUILD_ID_HEX_MAX || n % 2)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return true;
}

static int read_module(struct cg_parse *p, const struct cg_field *f, uint32_t i, const cJSON *o,
		       struct cg_modv *m)
{
	if (!cJSON_IsObject(o))
		return fail(p, false, "%s: module %u must be an object", f->name, i);
	const cJSON *path = cJSON_GetObjectItemCaseSensitive(o, "path");
	if (!cJSON_IsString(path))
		return fail(p, false, "%s: module %u: `path` must be a string", f->name, i);
	m->path = node_sv(path);
	static const char *const keys[3] = {"base", "start", "end"};
	uint64_t *vals[3] = {&m->base, &m->start, &m->end};
	for (int k = 0; k < 3; k++) {
		const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, keys[k]);
		if (!x || !hex_value(x, vals[k])) {
			char got[64] = "missing";
			if (x)
				show(x, got, sizeof(got));
			return fail(p, false, "%s: module %u: `%s` is %s, not \"0x\" and lowercase hex",
				    f->name, i, keys[k], got);
		}
	}
	if (m->start > m->end)
		return fail(p, false, "%s: module %u: `start` is past `end`", f->name, i);
	const cJSON *bid = cJSON_GetObjectItemCaseSensitive(o, "build_id");
	m->build_id = CG_SV_NONE;
	if (bid && !cJSON_IsNull(bid)) {
		if (!cJSON_IsString(bid) || !build_id_ok(bid->valuestring))
			return fail(p, false,
				    "%s: module %u: `build_id` must be 2 to %u lowercase hex digits, "
				    "an even number",
				    f->name, i, CG_BUILD_ID_HEX_MAX);
		m->build_id = node_sv(bid);
	}
	return 0;
}

static int read_mods(struct cg_parse *p, const struct cg_field *f, const cJSON *v,
		     struct cg_rec *r)
{
	uint32_t n;
	int ret = count_array(p, f, v, UINT32_MAX - 1, &n);
	if (ret)
		return ret;
	struct cg_modv *arr = cg_arena_alloc(&p->arena, (size_t)n * sizeof(*arr));
	if (!arr)
		return -ENOMEM;
	uint32_t i = 0;
	for (const cJSON *e = v->child; e; e = e->next, i++)
		if ((ret = read_module(p, f, i, e, &arr[i])) != 0)
			return ret;
	cg_rec_set_list(r, f, arr, n);
	return 0;
}

/* An integer member of a code object, 0 to max (numbers are read from the line: mask_numbers). */
static bool int_member(struct cg_parse *p, const char *line, const struct cg_field *f,
		       const cJSON *o, const char *key, uint64_t max, uint64_t *out)
{
	const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, key);
	return cJSON_IsNumber(x) && read_u64(p, line, f, x, out) == 0 && *out <= max;
}

static int hex_digit(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* A code object's line table: lowercase hex digits, two a byte, into the arena. */
static int read_table(struct cg_parse *p, const struct cg_field *f, uint32_t i, const cJSON *t,
		      struct cg_pycodev *c)
{
	size_t n = strlen(t->valuestring);
	if (n % 2 || n / 2 > UINT32_MAX)
		return fail(p, false, "%s: code %u: `linetable` must be an even number of hex digits",
			    f->name, i);
	uint8_t *b = n ? cg_arena_alloc(&p->arena, n / 2) : NULL;
	if (n && !b)
		return -ENOMEM;
	for (size_t k = 0; k < n; k += 2) {
		int hi = hex_digit(t->valuestring[k]), lo = hex_digit(t->valuestring[k + 1]);
		if (hi < 0 || lo < 0)
			return fail(p, false, "%s: code %u: `linetable` holds a character that is "
					      "not a lowercase hex digit",
				    f->name, i);
		b[k / 2] = (uint8_t)(hi << 4 | lo);
	}
	c->table = b;
	c->table_len = (uint32_t)(n / 2);
	return 0;
}

static int read_pycode(struct cg_parse *p, const char *line, const struct cg_field *f, uint32_t i,
		       const cJSON *o, struct cg_pycodev *c)
{
	*c = (struct cg_pycodev){.qualname = CG_SV_NONE};
	if (!cJSON_IsObject(o))
		return fail(p, false, "%s: code %u must be an object", f->name, i);
	uint64_t first;
	if (!int_member(p, line, f, o, "id", 0x7fffffffu, &c->id) || !c->id)
		return fail(p, false, "%s: code %u: `id` must be an integer from 1 to 2147483647",
			    f->name, i);
	if (!int_member(p, line, f, o, "line", 0x7fffffffu, &first))
		return fail(p, false, "%s: code %u: `line` must be an integer from 0 to 2147483647",
			    f->name, i);
	c->line = (int64_t)first;
	static const char *const keys[3] = {"name", "file", "qualname"};
	struct cg_sv *vals[3] = {&c->name, &c->file, &c->qualname};
	for (int k = 0; k < 3; k++) {
		const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, keys[k]);
		if (k == 2 && (!x || cJSON_IsNull(x)))
			break;
		if (!cJSON_IsString(x))
			return fail(p, false, "%s: code %u: `%s` must be a string", f->name, i,
				    keys[k]);
		*vals[k] = node_sv(x);
	}
	const cJSON *fmt = cJSON_GetObjectItemCaseSensitive(o, "format");
	const cJSON *t = cJSON_GetObjectItemCaseSensitive(o, "linetable");
	if ((fmt && !cJSON_IsNull(fmt)) != (t && !cJSON_IsNull(t)))
		return fail(p, false, "%s: code %u: `format` and `linetable` go together", f->name,
			    i);
	if (!fmt || cJSON_IsNull(fmt))
		return 0;
	int fi = cJSON_IsString(fmt) ? (int)cg_py_lt_of(fmt->valuestring, strlen(fmt->valuestring))
				     : 0;
	if (fi <= 0)
		return fail(p, false,
			    "%s: code %u: `format` must be \"lnotab\", \"linetable\" or \"locations\"",
			    f->name, i);
	c->format = (uint8_t)fi;
	if (!cJSON_IsString(t))
		return fail(p, false, "%s: code %u: `linetable` must be a string", f->name, i);
	return read_table(p, f, i, t, c);
}

static int read_pycodes(struct cg_parse *p, const char *line, const struct cg_field *f,
			const cJSON *v, struct cg_rec *r)
{
	uint32_t n;
	int ret = count_array(p, f, v, UINT32_MAX - 1, &n);
	if (ret)
		return ret;
	struct cg_pycodev *arr = cg_arena_alloc(&p->arena, (size_t)n * sizeof(*arr));
	if (!arr)
		return -ENOMEM;
	uint32_t i = 0;
	for (const cJSON *e = v->child; e; e = e->next, i++)
		if ((ret = read_pycode(p, line, f, i, e, &arr[i])) != 0)
			return ret;
	cg_rec_set_list(r, f, arr, n);
	return 0;
}

static int read_field(struct cg_parse *p, const char *line, const struct cg_field *f,
		      const cJSON *v, struct cg_rec *r)
{
	if (cJSON_IsNull(v) && f->presence == CG_OPTIONAL)
		return 0;
	switch (f->type) {
	case CG_F_STR:
		if (!cJSON_IsString(v))
			return type_error(p, f, v);
		cg_rec_set_sv(r, f, node_sv(v));
		return 0;
	case CG_F_U64: {
		uint64_t x;
		int ret = read_u64(p, line, f, v, &x);
		if (ret == 0)
			cg_rec_set_u64(r, f, x);
		return ret;
	}
	case CG_F_BOOL: {
		if (!cJSON_IsBool(v))
			return type_error(p, f, v);
		bool b = cJSON_IsTrue(v);
		cg_rec_set(r, f->off, &b, 1);
		return 0;
	}
	case CG_F_ENUM: {
		int idx = cJSON_IsString(v) ? cg_name_lookup(f->enum_names, f->n_enum,
							      v->valuestring,
							      strlen(v->valuestring))
					    : -2;
		if (idx == -2)
			return type_error(p, f, v);
		if (idx < 0) {
			char list[160] = "";
			size_t at = 0;
			for (size_t i = 0; i < f->n_enum && at < sizeof(list); i++)
				if (f->enum_names[i])
					at += (size_t)snprintf(list + at, sizeof(list) - at,
							       "%s`%s`", at ? ", " : "",
							       f->enum_names[i]);
			return fail(p, false, "%s record: field `%s` must be one of %s, got \"%.40s\"",
				    p->kind_label, f->name, list, v->valuestring);
		}
		uint8_t e = (uint8_t)idx;
		cg_rec_set(r, f->off, &e, 1);
		return 0;
	}
	case CG_F_STRS:
	case CG_F_U64S:
		return read_list(p, line, f, v, r);
	case CG_F_TAGS:
		return read_tags(p, f, v, r);
	case CG_F_F64: {
		const struct cg_json_tok *t = cJSON_IsNumber(v) ? token_of(p, v) : NULL;
		if (!t)
			return type_error(p, f, v);
		double x;
		if (cg_scan_f64(line + t->off, t->len, &x) < 0)
			return fail(p, false, "%s record: field `%s` is out of range: %.*s",
				    p->kind_label, f->name, (int)(t->len > 40 ? 40 : t->len),
				    line + t->off);
		cg_rec_set(r, f->off, &x, sizeof(x));
		bool has = true;
		cg_rec_set(r, f->off2, &has, 1);
		return 0;
	}
	case CG_F_ID:
		return read_id(p, line, f, v, r);
	case CG_F_HEXS:
		return read_hexs(p, f, v, r);
	case CG_F_MODS:
		return read_mods(p, f, v, r);
	case CG_F_PYCODES:
		return read_pycodes(p, line, f, v, r);
	}
	return -EINVAL;
}

static int build_record(struct cg_parse *p, const char *line, const cJSON *root,
			struct cg_rec *out)
{
	const cJSON *kind = cJSON_GetObjectItemCaseSensitive(root, "kind");
	if (!kind)
		return fail(p, false, "record has no `kind` field");
	if (!cJSON_IsString(kind))
		return fail(p, false, "field `kind` must be a string");
	const struct cg_kind_desc *desc =
		cg_schema_kind(kind->valuestring, strlen(kind->valuestring));
	if (!desc)
		return fail(p, false, "unknown record kind \"%.60s\"", kind->valuestring);
	p->kind_label = desc->name;

	memset(out, 0, sizeof(*out));
	out->kind = desc->kind;
	cg_schema_defaults(desc, out);
	uint64_t seen = 0;
	for (const cJSON *c = root->child; c; c = c->next) {
		int i = cg_schema_field(desc, c->string, strlen(c->string));
		if (i < 0)
			continue; /* unknown fields are ignored, as serde does */
		int ret = read_field(p, line, &desc->fields[i], c, out);
		if (ret)
			return ret;
		seen |= 1ull << i;
	}
	for (int i = 0; i < desc->n_fields; i++)
		if (desc->fields[i].presence == CG_REQUIRED && !(seen & (1ull << i)))
			return fail(p, false, "%s record: missing field `%s`", desc->name,
				    desc->fields[i].name);
	return 0;
}

int cg_parse_ref(struct cg_parse *p, const char *s, size_t n, struct cg_rec *out)
{
	cJSON_Delete(p->tree);
	p->tree = NULL;
	p->err_col = 0;
	int ret = cg_json_scan(&p->scan, s, n);
	if (ret == -ENOMEM)
		return ret;
	if (ret < 0) {
		p->err_col = p->scan.err_off + 1;
		return fail(p, true, "invalid JSON at column %zu: %s", p->err_col, p->scan.err);
	}
	if (!p->scan.top_is_object)
		return fail(p, false, "record must be a JSON object");
	if (mask_numbers(p, s, n) < 0)
		return -ENOMEM;
	p->tree = cJSON_ParseWithLength(p->masked, n);
	if (!p->tree)
		return -ENOMEM; /* the scanner accepted it, so only memory can fail */
	number_nodes(p->tree);
	return build_record(p, s, p->tree, out);
}

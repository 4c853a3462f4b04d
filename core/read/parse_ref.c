/* SPDX-License-Identifier: MIT */
#include "parse_ref.h"

#include "names.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "num_scan.h"

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

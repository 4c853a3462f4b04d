/* SPDX-License-Identifier: MIT */
/*
 * JSONL formatting of struct cg_rec.
 *
 * Each line is written in two passes: a cheap upper bound of its length
 * (a constant for keys and numbers plus the worst case of every string),
 * one reservation, then straight stores through a cursor. That keeps the
 * per-field cost to a memcpy or a digit loop, with no capacity checks and
 * no printf, which matters for the preload probe's allocation records.
 */
#include "jsonl_format.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "export.h"
#include "fmt_num.h"
#include "names.h"
#include "py_lines.h"
#include "schema.h"
#include "swar.h"
#include "utf8.h"

/* Room for every key, punctuation, enum spelling and scalar number of any one kind. */
#define FIXED_MAX 1024
/* A u64 array element: digits and a comma. */
#define U64_ELEM_MAX (CG_FMT_U64_MAX + 1)
/* Tags sorted on the stack up to this count, on the heap beyond. */
#define TAGS_ON_STACK 64

/* ------------------------------------------------------------------ */
/* Strings                                                             */
/* ------------------------------------------------------------------ */

/* 0: copied as is; 1: escaped; 2: start of a multi-byte (or invalid) sequence. */
static const uint8_t byte_class[256] = {
	/* 0x00 - 0x1f: control characters */
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	/* 0x20 - 0x7f: only '"' (0x22) and '\\' (0x5c) need escaping; DEL does not */
	0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	/* 0x80 - 0xff */
	2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2,
	2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2,
	2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2,
	2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2,
	2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2,
	2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2,
	2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2,
	2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2,
};

/* Writes the escape for a byte of class 1. */
static char *put_escape(char *w, unsigned char c)
{
	static const char hex[16] = "0123456789abcdef";
	char name = 0;

	switch (c) {
	case '"':
		name = '"';
		break;
	case '\\':
		name = '\\';
		break;
	case '\n':
		name = 'n';
		break;
	case '\r':
		name = 'r';
		break;
	case '\t':
		name = 't';
		break;
	case '\b':
		name = 'b';
		break;
	case '\f':
		name = 'f';
		break;
	}
	if (name) {
		w[0] = '\\';
		w[1] = name;
		return w + 2;
	}
	/* Lower-case hex like serde_json. */
	memcpy(w, "\\u00", 4);
	w[4] = hex[c >> 4];
	w[5] = hex[c & 15];
	return w + 6;
}

/*
 * Writes s[0..n) quoted and escaped; w must have CG_JSON_STR_MAX(n) bytes.
 * Strings in traces are mostly short ids, so plain bytes are moved eight at
 * a time (checked and stored in one go) and the rest byte by byte, rather
 * than through memcpy calls of a few bytes each.
 */
static char *put_str(char *w, const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t i = 0;

	*w++ = '"';
	while (i < n) {
		uint64_t x;
		while (i + 8 <= n) {
			memcpy(&x, s + i, sizeof(x));
			if (cg_swar_special(x))
				break;
			memcpy(w, &x, sizeof(x));
			w += 8;
			i += 8;
		}
		while (i < n && byte_class[u[i]] == 0)
			*w++ = s[i++];
		if (i == n)
			break;
		unsigned char c = u[i];
		if (byte_class[c] == 1) {
			w = put_escape(w, c);
			i++;
			continue;
		}
		/* A multi-byte sequence, copied when well-formed. */
		size_t bad = 1;
		size_t len = cg_utf8_seq(u + i, n - i, &bad);
		if (len) {
			while (len--)
				*w++ = s[i++];
		} else {
			/* Each maximal ill-formed subpart becomes one U+FFFD. */
			memcpy(w, "\xef\xbf\xbd", 3);
			w += 3;
			i += bad;
		}
	}
	*w++ = '"';
	return w;
}

void cg_json_put_str(struct cg_buf *b, const char *s, size_t n)
{
	if (n > (SIZE_MAX - 2) / 6) {
		b->err = -ENOMEM;
		return;
	}
	char *w = cg_buf_reserve(b, CG_JSON_STR_MAX(n));
	if (!w)
		return;
	b->len = (size_t)(put_str(w, s ? s : "", s ? n : 0) - b->p);
}

CG_EXPORT size_t cgtrace_json_string(char *out, const char *s, size_t n)
{
	return (size_t)(put_str(out, s, n) - out);
}

/* ------------------------------------------------------------------ */
/* Values                                                              */
/* ------------------------------------------------------------------ */

#define PUT_LIT(w, s) (memcpy((w), (s), sizeof(s) - 1), (w) + sizeof(s) - 1)

/* An absent view is written as "" (only optional fields may be absent, and those are skipped). */
static char *put_sv(char *w, struct cg_sv v)
{
	return v.p ? put_str(w, v.p, v.n) : put_str(w, "", 0);
}

static char *put_u64(char *w, uint64_t v)
{
	return w + cg_fmt_u64(w, v);
}

static char *put_bool(char *w, bool v)
{
	return v ? PUT_LIT(w, "true") : PUT_LIT(w, "false");
}

/* Enum spellings are plain ASCII, so they need no escaping. */
static char *put_name(char *w, const char *const *table, size_t n, unsigned i)
{
	const char *name = cg_name_at(table, n, i);
	*w++ = '"';
	/* A few bytes: a plain loop beats strlen plus a memcpy call. */
	for (const char *p = name ? name : ""; *p; p++)
		*w++ = *p;
	*w++ = '"';
	return w;
}

/* "0x" and lowercase hex without leading zeros, quoted. */
static char *put_hex(char *w, uint64_t v)
{
	w = PUT_LIT(w, "\"0x");
	w += cg_fmt_hex(w, v);
	*w++ = '"';
	return w;
}

/* A module object, keys in the order of docs/stacks.md. */
static char *put_mod(char *w, struct cg_modv m)
{
	w = PUT_LIT(w, "{\"path\":");
	w = put_sv(w, m.path);
	w = PUT_LIT(w, ",\"base\":");
	w = put_hex(w, m.base);
	w = PUT_LIT(w, ",\"start\":");
	w = put_hex(w, m.start);
	w = PUT_LIT(w, ",\"end\":");
	w = put_hex(w, m.end);
	if (m.build_id.p) {
		w = PUT_LIT(w, ",\"build_id\":");
		w = put_sv(w, m.build_id);
	}
	*w++ = '}';
	return w;
}

/* A Python code object, keys in the order of docs/python-frames.md; the table as hex digits. */
static char *put_pycode(char *w, struct cg_pycodev c)
{
	static const char digits[] = "0123456789abcdef";
	w = PUT_LIT(w, "{\"id\":");
	w = put_u64(w, c.id);
	w = PUT_LIT(w, ",\"name\":");
	w = put_sv(w, c.name);
	if (c.qualname.p) {
		w = PUT_LIT(w, ",\"qualname\":");
		w = put_sv(w, c.qualname);
	}
	w = PUT_LIT(w, ",\"file\":");
	w = put_sv(w, c.file);
	w = PUT_LIT(w, ",\"line\":");
	w = put_u64(w, c.line > 0 ? (uint64_t)c.line : 0);
	const char *fmt = cg_py_lt_name((enum cg_py_lt)c.format);
	if (fmt) {
		w = PUT_LIT(w, ",\"format\":\"");
		size_t n = strlen(fmt);
		memcpy(w, fmt, n);
		w += n;
		w = PUT_LIT(w, "\",\"linetable\":\"");
		for (uint32_t i = 0; i < c.table_len; i++) {
			*w++ = digits[c.table[i] >> 4];
			*w++ = digits[c.table[i] & 15];
		}
		*w++ = '"';
	}
	*w++ = '}';
	return w;
}

/* name(w, v, n): v[0..n) as a JSON array, each element written by put_one(w, v[i]). */
#define PUT_ARRAY(name, type, put_one)                                                             \
	static char *name(char *w, const type *v, uint32_t n)                                      \
	{                                                                                          \
		*w++ = '[';                                                                        \
		for (uint32_t i = 0; i < n; i++) {                                                 \
			if (i)                                                                     \
				*w++ = ',';                                                        \
			w = put_one(w, v[i]);                                                      \
		}                                                                                  \
		*w++ = ']';                                                                        \
		return w;                                                                          \
	}

PUT_ARRAY(put_u64s, uint64_t, put_u64)
PUT_ARRAY(put_svs, struct cg_sv, put_sv)
PUT_ARRAY(put_hexs, uint64_t, put_hex)
PUT_ARRAY(put_mods, struct cg_modv, put_mod)
PUT_ARRAY(put_pycodes, struct cg_pycodev, put_pycode)

/* ------------------------------------------------------------------ */
/* Tags                                                                */
/* ------------------------------------------------------------------ */

static int sv_cmp(struct cg_sv a, struct cg_sv b)
{
	uint32_t n = a.n < b.n ? a.n : b.n;
	int c = n ? memcmp(a.p, b.p, n) : 0;
	if (c)
		return c;
	return (a.n > b.n) - (a.n < b.n);
}

static int tag_cmp(const void *a, const void *b)
{
	const struct cg_tagv *x = *(const struct cg_tagv *const *)a;
	const struct cg_tagv *y = *(const struct cg_tagv *const *)b;
	return sv_cmp(x->key, y->key);
}

static bool tags_sorted(const struct cg_tagv *tags, uint32_t n)
{
	for (uint32_t i = 1; i < n; i++)
		if (sv_cmp(tags[i - 1].key, tags[i].key) > 0)
			return false;
	return true;
}

static char *put_tag(char *w, const struct cg_tagv *t, bool first)
{
	if (!first)
		*w++ = ',';
	w = put_sv(w, t->key);
	*w++ = ':';
	return put_sv(w, t->value);
}

/*
 * Writes the tags object in key order. order is NULL when the tags are
 * already sorted, else n pointers to sort.
 */
static char *put_tags(char *w, const struct cg_tagv *tags, uint32_t n,
		      const struct cg_tagv **order)
{
	*w++ = '{';
	if (order) {
		for (uint32_t i = 0; i < n; i++)
			order[i] = &tags[i];
		qsort(order, n, sizeof(*order), tag_cmp);
		for (uint32_t i = 0; i < n; i++)
			w = put_tag(w, order[i], i == 0);
	} else {
		for (uint32_t i = 0; i < n; i++)
			w = put_tag(w, &tags[i], i == 0);
	}
	*w++ = '}';
	return w;
}

/* ------------------------------------------------------------------ */
/* Records                                                             */
/* ------------------------------------------------------------------ */

/* Optional fields are left out when absent; the rest are always written. */
static inline bool shown_sv(enum cg_presence pres, struct cg_sv v)
{
	return pres != CG_OPTIONAL || v.p;
}

/* An optional enum is left out when its value has no spelling (CGTRACE_STEP_NONE). */
static inline bool shown_name(enum cg_presence pres, const char *const *table, size_t n, unsigned i)
{
	return pres != CG_OPTIONAL || cg_name_at(table, n, i);
}

#define N_NAMES(tab) (sizeof(tab) / sizeof(tab[0]))
#define PUT_KEY(w, m) PUT_LIT(w, ",\"" #m "\":")

/*
 * One straight-line writer per kind, a block per field of record_fields.h
 * in the format's order: no table is walked at run time.
 */
#define FMT(k, type, ...) FMT_##type(__VA_ARGS__)
#define FMT_STR(m, pres)                                                                           \
	if (shown_sv(pres, x->m)) {                                                                \
		w = PUT_KEY(w, m);                                                                 \
		w = put_sv(w, x->m);                                                               \
	}
#define FMT_DEV(m, pres) FMT_STR(m, pres)
#define FMT_U64(m, pres)                                                                           \
	w = PUT_KEY(w, m);                                                                         \
	w = put_u64(w, x->m);
#define FMT_U64_OPT(m, pres, has)                                                                  \
	if (x->has) {                                                                              \
		w = PUT_KEY(w, m);                                                                 \
		w = put_u64(w, x->m);                                                              \
	}
#define FMT_BOOL(m, pres)                                                                          \
	w = PUT_KEY(w, m);                                                                         \
	w = put_bool(w, x->m);
/* Extension booleans: written only when set, so plain traces stay plain trace/6. */
#define FMT_FLAG(m, pres)                                                                          \
	if (x->m)                                                                                  \
		w = PUT_LIT(w, ",\"" #m "\":true");
#define FMT_ENUM(m, pres, tab, def)                                                                \
	if (shown_name(pres, tab, N_NAMES(tab), x->m)) {                                           \
		w = PUT_KEY(w, m);                                                                 \
		w = put_name(w, tab, N_NAMES(tab), x->m);                                          \
	}
#define FMT_STRS(m, pres, n)                                                                       \
	w = PUT_KEY(w, m);                                                                         \
	w = put_svs(w, x->m, x->n);
#define FMT_U64S(m, pres, n)                                                                       \
	w = PUT_KEY(w, m);                                                                         \
	w = put_u64s(w, x->m, x->n);
/* JSON has no NaN or infinity: such a number is left out. */
#define FMT_F64_OPT(m, pres, has)                                                                  \
	if (x->has && isfinite(x->m)) {                                                            \
		w = PUT_KEY(w, m);                                                                 \
		w += cg_fmt_f64(w, x->m);                                                          \
	}
#define FMT_TAGS(m, pres, n)                                                                       \
	w = PUT_KEY(w, m);                                                                         \
	w = put_tags(w, x->m, x->n, order);
/* Stacks and modules: written only when set, keyed cgprobe_<member>. */
#define PUT_EXT_KEY(w, m) PUT_LIT(w, ",\"cgprobe_" #m "\":")
#define FMT_ID(m, pres)                                                                            \
	if (x->m) {                                                                                \
		w = PUT_EXT_KEY(w, m);                                                             \
		w = put_u64(w, x->m);                                                              \
	}
#define FMT_HEXS(m, pres, n)                                                                       \
	if (x->n) {                                                                                \
		w = PUT_EXT_KEY(w, m);                                                             \
		w = put_hexs(w, x->m, x->n);                                                       \
	}
#define FMT_MODS(m, pres, n)                                                                       \
	if (x->n) {                                                                                \
		w = PUT_EXT_KEY(w, m);                                                             \
		w = put_mods(w, x->m, x->n);                                                       \
	}
#define FMT_PYCODES(m, pres, n)                                                                    \
	if (x->n) {                                                                                \
		w = PUT_EXT_KEY(w, m);                                                             \
		w = put_pycodes(w, x->m, x->n);                                                    \
	}

/* order: the scratch for sorting tags, NULL when they are sorted or the kind has none. */
#define KIND_FMT(k, json, kind)                                                                    \
	static char *fmt_##k(char *w, const struct cg_rec_##k *x, const struct cg_tagv **order)    \
	{                                                                                          \
		(void)order;                                                                       \
		w = PUT_LIT(w, "{\"kind\":\"" json "\"");                                          \
		CG_FIELDS_##k(FMT, k)                                                              \
		return w;                                                                          \
	}
CG_RECORD_KINDS(KIND_FMT)
/* ------------------------------------------------------------------ */
/* Line length bound                                                   */
/* ------------------------------------------------------------------ */

/* Worst case of a string value (absent optional strings count as empty). */
static size_t sv_max(struct cg_sv v)
{
	return CG_JSON_STR_MAX(v.n);
}

static size_t svs_max(const struct cg_sv *v, uint32_t n)
{
	size_t total = 2;
	for (uint32_t i = 0; i < n; i++)
		total += sv_max(v[i]) + 1;
	return total;
}

static size_t u64s_max(uint32_t n)
{
	return 2 + (size_t)n * U64_ELEM_MAX;
}

/* A quoted hex value and its comma. */
#define HEX_ELEM_MAX (4 + CG_FMT_HEX_MAX + 1)

/* Keys, punctuation and the three hex values of a module, beside its strings. */
#define MOD_FIXED_MAX (64 + 3 * HEX_ELEM_MAX)

static size_t hexs_max(uint32_t n)
{
	return 2 + (size_t)n * HEX_ELEM_MAX;
}

static size_t mods_max(const struct cg_modv *v, uint32_t n)
{
	size_t total = 2;
	for (uint32_t i = 0; i < n; i++)
		total += MOD_FIXED_MAX + sv_max(v[i].path) + sv_max(v[i].build_id);
	return total;
}

/* Keys, punctuation, the id, line and format of a code object, beside its strings and table. */
#define PYCODE_FIXED_MAX (96 + 2 * U64_ELEM_MAX)

static size_t pycodes_max(const struct cg_pycodev *v, uint32_t n)
{
	size_t total = 2;
	for (uint32_t i = 0; i < n; i++)
		total += PYCODE_FIXED_MAX + sv_max(v[i].name) + sv_max(v[i].qualname) +
			 sv_max(v[i].file) + 2 * (size_t)v[i].table_len;
	return total;
}

static size_t tags_max(const struct cg_tagv *tags, uint32_t n)
{
	size_t total = 2;
	for (uint32_t i = 0; i < n; i++)
		total += sv_max(tags[i].key) + sv_max(tags[i].value) + 2;
	return total;
}

/* The variable part of a kind's bound: strings, string arrays, shapes and tags. */
#define MAX(k, type, ...) +MAX_##type(__VA_ARGS__)
#define MAX_STR(m, pres) sv_max(x->m)
#define MAX_DEV(m, pres) sv_max(x->m)
#define MAX_U64(m, pres) 0
#define MAX_U64_OPT(m, pres, has) 0
#define MAX_BOOL(m, pres) 0
#define MAX_FLAG(m, pres) 0
#define MAX_ENUM(m, pres, tab, def) 0
#define MAX_STRS(m, pres, n) svs_max(x->m, x->n)
#define MAX_U64S(m, pres, n) u64s_max(x->n)
#define MAX_F64_OPT(m, pres, has) 0
#define MAX_TAGS(m, pres, n) tags_max(x->m, x->n)
#define MAX_ID(m, pres) 0
#define MAX_HEXS(m, pres, n) hexs_max(x->n)
#define MAX_MODS(m, pres, n) mods_max(x->m, x->n)
#define MAX_PYCODES(m, pres, n) pycodes_max(x->m, x->n)

#define KIND_MAX(k, json, kind)                                                                    \
	static size_t max_##k(const struct cg_rec_##k *x)                                          \
	{                                                                                          \
		(void)x;                                                                           \
		return 0 CG_FIELDS_##k(MAX, k);                                                    \
	}
CG_RECORD_KINDS(KIND_MAX)

/*
 * Upper bound of the line's length: FIXED_MAX covers the keys, punctuation,
 * enum spellings and scalar numbers of every kind (the longest, meta, needs
 * under 400 bytes); the variable parts are bounded field by field. Lengths
 * are uint32_t views, so the sums cannot overflow a 64-bit size_t.
 */
size_t cg_jsonl_line_max(const struct cg_rec *r)
{
	switch (r->kind) {
#define CASE_MAX(k, json, kind)                                                                    \
	case kind:                                                                                 \
		return FIXED_MAX + max_##k(&r->u.k);
		CG_RECORD_KINDS(CASE_MAX)
	case CGTRACE_KIND_COUNT:
		break;
	}
	return FIXED_MAX;
}

/* ------------------------------------------------------------------ */

static char *fmt_body(char *w, const struct cg_rec *r, const struct cg_tagv **order)
{
	switch (r->kind) {
#define CASE_FMT(k, json, kind)                                                                    \
	case kind:                                                                                 \
		return fmt_##k(w, &r->u.k, order);
		CG_RECORD_KINDS(CASE_FMT)
	case CGTRACE_KIND_COUNT:
		break;
	}
	/* Not a record kind: still one well-formed line, never a crash. */
	return PUT_LIT(w, "{\"kind\":\"\"");
}
void cg_jsonl_format(struct cg_buf *b, const struct cg_rec *r)
{
	const struct cg_tagv *stack_order[TAGS_ON_STACK];
	const struct cg_tagv **order = NULL;

	/* Unsorted tags need a scratch array of pointers to sort. */
	if (r->kind == CGTRACE_KIND_META && !tags_sorted(r->u.meta.tags, r->u.meta.n_tags)) {
		uint32_t n = r->u.meta.n_tags;
		order = n <= TAGS_ON_STACK ? stack_order : malloc(n * sizeof(*order));
		if (!order) {
			b->err = -ENOMEM;
			return;
		}
	}
	char *w = cg_buf_reserve(b, cg_jsonl_line_max(r));
	if (w) {
		w = fmt_body(w, r, order);
		w = PUT_LIT(w, "}\n");
		b->len = (size_t)(w - b->p);
	}
	if (order != stack_order)
		free(order);
}

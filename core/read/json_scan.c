/* SPDX-License-Identifier: MIT */
#include "json_scan.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hash.h"
#include "swar.h"
#include "utf8.h"

/*
 * Objects with up to this many keys compare a new key with every earlier one:
 * cheaper than hashing for trace records, which have about a dozen keys.
 * Larger objects move to a hash set so that 10k keys stay linear.
 */
#define CG_LINEAR_KEYS 16
#define CG_KSET_MIN 64
/* Ids are reset between calls before they can wrap inside a call. */
#define CG_ID_RESET 0xf0000000u
#define CG_KEY_SHOW 40

struct cg_json_key {
	uint32_t off; /* into the input, or into kbuf when in_kbuf */
	uint32_t len;
	uint32_t hash; /* set once the object uses its hash set */
	uint32_t in_kbuf;
};

/* A slot whose id is not the id of the live object at its depth is empty. */
struct cg_json_slot {
	uint32_t id;
	uint32_t key;
};

struct cg_json_kset {
	struct cg_json_slot *slots;
	uint32_t cap; /* a power of two, or 0 */
	uint32_t used;
};

struct cg_json_frame {
	uint32_t key_base;
	uint32_t kbuf_base;
	uint32_t id; /* hash set id, 0 while keys are compared linearly */
	bool is_obj;
};

/* Only one object per depth is open at a time, hence one hash set per depth. */
struct cg_json_priv {
	struct cg_json_frame frames[CG_JSON_MAX_DEPTH];
	struct cg_json_kset sets[CG_JSON_MAX_DEPTH];
	struct cg_json_key *keys; /* the keys of all open objects, innermost last */
	size_t n_keys, cap_keys;
	uint8_t *kbuf; /* unescaped keys that differ from their input bytes */
	size_t kbuf_len, kbuf_cap;
	uint32_t next_id;
};

struct cg_jp {
	struct cg_json_scan *sc;
	struct cg_json_priv *pv;
	const uint8_t *s;
	size_t n;
	size_t pos;
	unsigned depth;
};

enum cg_jp_next { CG_NEXT_VALUE, CG_NEXT_ELEM_FIRST, CG_NEXT_AFTER, CG_NEXT_DONE };

void cg_json_scan_init(struct cg_json_scan *sc)
{
	memset(sc, 0, sizeof(*sc));
}

void cg_json_scan_fini(struct cg_json_scan *sc)
{
	struct cg_json_priv *pv = sc->priv;

	if (pv) {
		for (size_t i = 0; i < CG_JSON_MAX_DEPTH; i++)
			free(pv->sets[i].slots);
		free(pv->keys);
		free(pv->kbuf);
		free(pv);
	}
	free(sc->nums);
	memset(sc, 0, sizeof(*sc));
}

/* ---- errors ---- */

__attribute__((cold, noinline, format(printf, 3, 4))) static int
cg_fail(struct cg_jp *jp, size_t off, const char *fmt, ...)
{
	va_list ap;

	jp->sc->err_off = off;
	va_start(ap, fmt);
	vsnprintf(jp->sc->err, sizeof(jp->sc->err), fmt, ap);
	va_end(ap);
	return -EBADMSG;
}

__attribute__((cold, noinline)) static int cg_nomem(struct cg_jp *jp)
{
	jp->sc->err_off = jp->pos;
	snprintf(jp->sc->err, sizeof(jp->sc->err), "out of memory");
	return -ENOMEM;
}

/* ---- UTF-8 ---- */

/* Decodes a sequence cg_utf8_seq() accepted. */
static uint32_t cg_utf8_decode(const uint8_t *s, size_t len)
{
	static const uint8_t lead_mask[5] = {0, 0x7f, 0x1f, 0x0f, 0x07};
	uint32_t cp = s[0] & lead_mask[len];

	for (size_t i = 1; i < len; i++)
		cp = cp << 6 | (s[i] & 0x3f);
	return cp;
}

static size_t cg_utf8_put(uint8_t *out, uint32_t cp)
{
	if (cp < 0x80) {
		out[0] = (uint8_t)cp;
		return 1;
	}
	if (cp < 0x800) {
		out[0] = (uint8_t)(0xc0 | cp >> 6);
		out[1] = (uint8_t)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		out[0] = (uint8_t)(0xe0 | cp >> 12);
		out[1] = (uint8_t)(0x80 | (cp >> 6 & 0x3f));
		out[2] = (uint8_t)(0x80 | (cp & 0x3f));
		return 3;
	}
	out[0] = (uint8_t)(0xf0 | cp >> 18);
	out[1] = (uint8_t)(0x80 | (cp >> 12 & 0x3f));
	out[2] = (uint8_t)(0x80 | (cp >> 6 & 0x3f));
	out[3] = (uint8_t)(0x80 | (cp & 0x3f));
	return 4;
}

/*
 * "expected <what>, found <the byte at off>". A malformed UTF-8 sequence is
 * reported as such, because the whole line must be UTF-8 whatever else is wrong.
 */
__attribute__((cold, noinline)) static int cg_fail_expect(struct cg_jp *jp, size_t off,
                                                          const char *what)
{
	char found[16];
	uint8_t c;

	if (off >= jp->n)
		return cg_fail(jp, off, "expected %s", what);
	c = jp->s[off];
	if (c >= 0x80) {
		size_t len = cg_utf8_seq(jp->s + off, jp->n - off, NULL);

		if (!len)
			return cg_fail(jp, off, "invalid UTF-8");
		snprintf(found, sizeof(found), "U+%04X",
		         (unsigned)cg_utf8_decode(jp->s + off, len));
	} else if (c <= 0x20 || c == 0x7f) {
		snprintf(found, sizeof(found), "U+%04X", (unsigned)c);
	} else {
		snprintf(found, sizeof(found), "`%c`", c);
	}
	return cg_fail(jp, off, "expected %s, found %s", what, found);
}

/* ---- scalars ---- */

static inline bool cg_is_ws(uint8_t c)
{
	return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

static inline size_t cg_skip_ws(const uint8_t *s, size_t p, size_t n)
{
	while (p < n && s[p] <= ' ' && cg_is_ws(s[p]))
		p++;
	return p;
}

static inline bool cg_is_digit(uint8_t c)
{
	return (uint8_t)(c - '0') < 10;
}

static inline size_t cg_skip_digits(const uint8_t *s, size_t p, size_t n)
{
	while (p < n && cg_is_digit(s[p]))
		p++;
	return p;
}

/* Bytes a string may hold without a closer look: printable ASCII except `"` and `\`. */
static inline bool cg_is_plain(uint8_t c)
{
	return c >= 0x20 && c < 0x80 && c != '"' && c != '\\';
}

/* First byte at or after p that is not plain; eight bytes at a time where possible. */
static inline size_t cg_skip_plain(const uint8_t *s, size_t p, size_t n)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	while (n - p >= 8) {
		uint64_t w, t;

		memcpy(&w, s + p, 8);
		t = cg_swar_special(w);
		if (t)
			return p + ((size_t)__builtin_ctzll(t) >> 3);
		p += 8;
	}
#endif
	while (p < n && cg_is_plain(s[p]))
		p++;
	return p;
}

static int cg_hexval(uint8_t c)
{
	if (cg_is_digit(c))
		return c - '0';
	c |= 0x20;
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* The four hex digits of the `\u` escape whose backslash is at p. */
static int cg_jp_hex4(struct cg_jp *jp, size_t p, uint32_t *cp)
{
	uint32_t v = 0;

	for (size_t i = p + 2; i < p + 6; i++) {
		int d;

		if (i >= jp->n)
			return cg_fail(jp, jp->n, "unterminated string");
		d = cg_hexval(jp->s[i]);
		if (d < 0)
			return cg_fail_expect(jp, i, "4 hex digits after `\\u` in string");
		v = v << 4 | (uint32_t)d;
	}
	*cp = v;
	return 0;
}

__attribute__((cold, noinline)) static int cg_fail_surrogate(struct cg_jp *jp, size_t p)
{
	return cg_fail(jp, p, "lone surrogate `%.6s` in string", (const char *)jp->s + p);
}

/* A surrogate escape only stands for a character as a high-low pair. */
static int cg_jp_uescape(struct cg_jp *jp, size_t *pp)
{
	const uint8_t *s = jp->s;
	size_t p = *pp, n = jp->n;
	uint32_t hi, lo;
	int r;

	r = cg_jp_hex4(jp, p, &hi);
	if (r)
		return r;
	if (hi == 0)
		return cg_fail(jp, p, "NUL characters (`\\u0000`) are not supported in strings");
	if (hi < 0xd800 || hi > 0xdfff) {
		*pp = p + 6;
		return 0;
	}
	if (hi >= 0xdc00)
		return cg_fail_surrogate(jp, p);
	if (p + 6 >= n || (s[p + 6] == '\\' && p + 7 >= n))
		return cg_fail(jp, n, "unterminated string");
	if (s[p + 6] != '\\' || s[p + 7] != 'u')
		return cg_fail_surrogate(jp, p);
	r = cg_jp_hex4(jp, p + 6, &lo);
	if (r)
		return r;
	if (lo < 0xdc00 || lo > 0xdfff)
		return cg_fail_surrogate(jp, p);
	*pp = p + 12;
	return 0;
}

__attribute__((cold, noinline)) static int cg_fail_escape(struct cg_jp *jp, size_t p)
{
	uint8_t c = jp->s[p + 1];

	if (c > 0x20 && c < 0x7f)
		return cg_fail(jp, p, "invalid escape `\\%c` in string", c);
	if (c >= 0x80 && !cg_utf8_seq(jp->s + p + 1, jp->n - p - 1, NULL))
		return cg_fail(jp, p + 1, "invalid UTF-8");
	return cg_fail(jp, p, "invalid escape in string: `\\` followed by %s",
	               c >= 0x80 ? "a non-ASCII character" : "a control character or space");
}

/* The escape whose backslash is at *pp; *pp moves past it. */
static int cg_jp_escape(struct cg_jp *jp, size_t *pp)
{
	size_t p = *pp;

	if (p + 1 >= jp->n)
		return cg_fail(jp, jp->n, "unterminated string");
	switch (jp->s[p + 1]) {
	case '"':
	case '\\':
	case '/':
	case 'b':
	case 'f':
	case 'n':
	case 'r':
	case 't':
		*pp = p + 2;
		return 0;
	case 'u':
		return cg_jp_uescape(jp, pp);
	}
	return cg_fail_escape(jp, p);
}

/* The string whose opening quote is at jp->pos; jp->pos moves past its closing quote. */
static int cg_jp_string(struct cg_jp *jp, bool *escaped)
{
	const uint8_t *s = jp->s;
	size_t n = jp->n, p = jp->pos + 1, len;
	int r;

	for (;;) {
		p = cg_skip_plain(s, p, n);
		if (p >= n)
			return cg_fail(jp, n, "unterminated string");
		if (s[p] == '"')
			break;
		if (s[p] == '\\') {
			r = cg_jp_escape(jp, &p);
			if (r)
				return r;
			*escaped = true;
			continue;
		}
		if (s[p] < 0x20)
			return cg_fail(jp, p, "control character U+%04X in string must be escaped",
			               (unsigned)s[p]);
		len = cg_utf8_seq(s + p, n - p, NULL);
		if (!len)
			return cg_fail(jp, p, "invalid UTF-8");
		p += len;
	}
	jp->pos = p + 1;
	return 0;
}

static int cg_grow(void **p, size_t *cap, size_t need, size_t elem, size_t first)
{
	size_t c = *cap ? *cap : first;
	void *np;

	while (c < need) {
		if (c > SIZE_MAX / 2 / elem)
			return -ENOMEM;
		c *= 2;
	}
	np = realloc(*p, c * elem);
	if (!np)
		return -ENOMEM;
	*p = np;
	*cap = c;
	return 0;
}

static int cg_jp_push_num(struct cg_jp *jp, size_t off, size_t len)
{
	struct cg_json_scan *sc = jp->sc;

	if (sc->n_nums == sc->cap_nums &&
	    cg_grow((void **)&sc->nums, &sc->cap_nums, sc->n_nums + 1, sizeof(*sc->nums), 16))
		return cg_nomem(jp);
	sc->nums[sc->n_nums].off = (uint32_t)off;
	sc->nums[sc->n_nums].len = (uint32_t)len;
	sc->n_nums++;
	return 0;
}

/* -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? exactly. */
static int cg_jp_number(struct cg_jp *jp)
{
	const uint8_t *s = jp->s;
	size_t n = jp->n, start = jp->pos, p = start;

	if (s[p] == '-') {
		p++;
		if (p >= n || !cg_is_digit(s[p]))
			return cg_fail_expect(jp, p, "a digit after `-` in number");
	}
	if (s[p] == '0') {
		p++;
		if (p < n && cg_is_digit(s[p]))
			return cg_fail(jp, p, "leading zero in number");
	} else {
		p = cg_skip_digits(s, p, n);
	}
	if (p < n && s[p] == '.') {
		p++;
		if (p >= n || !cg_is_digit(s[p]))
			return cg_fail_expect(jp, p, "a digit after `.` in number");
		p = cg_skip_digits(s, p, n);
	}
	if (p < n && (s[p] | 0x20) == 'e') {
		p++;
		if (p < n && (s[p] == '+' || s[p] == '-'))
			p++;
		if (p >= n || !cg_is_digit(s[p]))
			return cg_fail_expect(jp, p, "a digit in the exponent of number");
		p = cg_skip_digits(s, p, n);
	}
	jp->pos = p;
	return cg_jp_push_num(jp, start, p - start);
}

static int cg_jp_literal(struct cg_jp *jp, const char *lit, size_t len)
{
	char what[32];

	for (size_t i = 0; i < len; i++) {
		size_t p = jp->pos + i;

		if (p >= jp->n || jp->s[p] != (uint8_t)lit[i]) {
			snprintf(what, sizeof(what), "`%s`", lit);
			return cg_fail_expect(jp, p, what);
		}
	}
	jp->pos += len;
	return 0;
}

/* ---- keys ---- */

static const uint8_t *cg_key_bytes(const struct cg_jp *jp, const struct cg_json_key *k)
{
	return k->in_kbuf ? jp->pv->kbuf + k->off : jp->s + k->off;
}

static bool cg_key_eq(const struct cg_jp *jp, const struct cg_json_key *a,
                      const struct cg_json_key *b)
{
	return a->len == b->len && memcmp(cg_key_bytes(jp, a), cg_key_bytes(jp, b), a->len) == 0;
}

static uint32_t cg_hex4_at(const uint8_t *s)
{
	uint32_t v = 0;

	for (int i = 0; i < 4; i++)
		v = v << 4 | (uint32_t)cg_hexval(s[i]);
	return v;
}

/* Unescapes a string body the scanner accepted; out has room for n bytes. */
static size_t cg_unescape(const uint8_t *in, size_t n, uint8_t *out)
{
	static const uint8_t simple[128] = {
	    ['"'] = '"',  ['\\'] = '\\', ['/'] = '/',  ['b'] = '\b',
	    ['f'] = '\f', ['n'] = '\n',  ['r'] = '\r', ['t'] = '\t',
	};
	size_t i = 0, o = 0;

	while (i < n) {
		uint32_t cp;

		if (in[i] != '\\') {
			out[o++] = in[i++];
			continue;
		}
		if (in[i + 1] != 'u') {
			out[o++] = simple[in[i + 1] & 0x7f];
			i += 2;
			continue;
		}
		cp = cg_hex4_at(in + i + 2);
		i += 6;
		if (cp >= 0xd800 && cp <= 0xdbff) {
			cp = 0x10000 + ((cp - 0xd800) << 10) + (cg_hex4_at(in + i + 2) - 0xdc00);
			i += 6;
		}
		o += cg_utf8_put(out + o, cp);
	}
	return o;
}

/* Shows a key on one line: control characters escaped, long keys cut at a character boundary. */
static void cg_key_show(const uint8_t *k, size_t n, char *out, size_t cap)
{
	size_t i = 0, o = 0;

	while (i < n && i < CG_KEY_SHOW && o + 8 < cap) {
		size_t len = k[i] < 0x80 ? 1 : cg_utf8_seq(k + i, n - i, NULL);

		if (k[i] < 0x20 || k[i] == 0x7f) {
			o += (size_t)snprintf(out + o, cap - o, "\\u%04x", (unsigned)k[i]);
			i++;
			continue;
		}
		if (!len || i + len > CG_KEY_SHOW || o + len + 4 >= cap)
			break;
		memcpy(out + o, k + i, len);
		o += len;
		i += len;
	}
	if (i < n && o + 4 <= cap) {
		memcpy(out + o, "...", 3);
		o += 3;
	}
	out[o] = '\0';
}

__attribute__((cold, noinline)) static int cg_fail_dup(struct cg_jp *jp, size_t q,
                                                       const struct cg_json_key *k)
{
	char shown[CG_KEY_SHOW * 2 + 16];

	cg_key_show(cg_key_bytes(jp, k), k->len, shown, sizeof(shown));
	return cg_fail(jp, q, "duplicate key `%s`", shown);
}

static int cg_jp_push_key(struct cg_jp *jp, const struct cg_json_key *k)
{
	struct cg_json_priv *pv = jp->pv;

	if (pv->n_keys == pv->cap_keys &&
	    cg_grow((void **)&pv->keys, &pv->cap_keys, pv->n_keys + 1, sizeof(*pv->keys), 64))
		return cg_nomem(jp);
	pv->keys[pv->n_keys++] = *k;
	return 0;
}

static void cg_kset_put(struct cg_json_kset *set, uint32_t id, uint32_t hash, uint32_t key)
{
	uint32_t mask = set->cap - 1, i = hash & mask;

	while (set->slots[i].id == id)
		i = (i + 1) & mask;
	set->slots[i].id = id;
	set->slots[i].key = key;
	set->used++;
}

/* Keeps the load at most one half, rehashing the object's keys into a larger table. */
static int cg_kset_reserve(struct cg_jp *jp, const struct cg_json_frame *f,
                           struct cg_json_kset *set, size_t need)
{
	struct cg_json_slot *slots;
	size_t cap = set->cap ? set->cap : CG_KSET_MIN;

	if (need * 2 <= set->cap)
		return 0;
	while (cap < need * 2)
		cap *= 2;
	if (cap > UINT32_MAX / 2 + 1)
		return cg_nomem(jp);
	slots = calloc(cap, sizeof(*slots));
	if (!slots)
		return cg_nomem(jp);
	free(set->slots);
	set->slots = slots;
	set->cap = (uint32_t)cap;
	set->used = 0;
	for (size_t i = f->key_base; i < jp->pv->n_keys; i++)
		cg_kset_put(set, f->id, jp->pv->keys[i].hash, (uint32_t)i);
	return 0;
}

/* Moves the innermost object from linear comparison to its depth's hash set. */
static int cg_kset_start(struct cg_jp *jp, struct cg_json_frame *f, struct cg_json_kset *set)
{
	struct cg_json_priv *pv = jp->pv;
	size_t count = pv->n_keys - f->key_base;

	f->id = pv->next_id++;
	set->used = 0;
	for (size_t i = f->key_base; i < pv->n_keys; i++) {
		struct cg_json_key *k = &pv->keys[i];

		k->hash = cg_hash_bytes(cg_key_bytes(jp, k), k->len);
	}
	if (set->cap >= count * 2) {
		for (size_t i = f->key_base; i < pv->n_keys; i++)
			cg_kset_put(set, f->id, pv->keys[i].hash, (uint32_t)i);
		return 0;
	}
	return cg_kset_reserve(jp, f, set, count);
}

static int cg_jp_add_hashed(struct cg_jp *jp, struct cg_json_frame *f, struct cg_json_kset *set,
                            struct cg_json_key *k, size_t q)
{
	struct cg_json_priv *pv = jp->pv;
	uint32_t mask, i;
	int r;

	r = cg_kset_reserve(jp, f, set, set->used + 1);
	if (r)
		return r;
	k->hash = cg_hash_bytes(cg_key_bytes(jp, k), k->len);
	mask = set->cap - 1;
	for (i = k->hash & mask; set->slots[i].id == f->id; i = (i + 1) & mask) {
		if (cg_key_eq(jp, &pv->keys[set->slots[i].key], k))
			return cg_fail_dup(jp, q, k);
	}
	r = cg_jp_push_key(jp, k);
	if (r)
		return r;
	set->slots[i].id = f->id;
	set->slots[i].key = (uint32_t)(pv->n_keys - 1);
	set->used++;
	return 0;
}

/* Records the key just scanned (opening quote at q) in the innermost object. */
static int cg_jp_add_key(struct cg_jp *jp, size_t q, bool escaped)
{
	struct cg_json_priv *pv = jp->pv;
	struct cg_json_frame *f = &pv->frames[jp->depth - 1];
	struct cg_json_kset *set = &pv->sets[jp->depth - 1];
	size_t body = q + 1, blen = jp->pos - 1 - body;
	struct cg_json_key k = {(uint32_t)body, (uint32_t)blen, 0, 0};
	int r;

	if (escaped) {
		if (pv->kbuf_cap - pv->kbuf_len < blen &&
		    cg_grow((void **)&pv->kbuf, &pv->kbuf_cap, pv->kbuf_len + blen, 1, 256))
			return cg_nomem(jp);
		k.off = (uint32_t)pv->kbuf_len;
		k.len = (uint32_t)cg_unescape(jp->s + body, blen, pv->kbuf + pv->kbuf_len);
		k.in_kbuf = 1;
		pv->kbuf_len += k.len;
	}
	if (f->id)
		return cg_jp_add_hashed(jp, f, set, &k, q);
	for (size_t i = f->key_base; i < pv->n_keys; i++) {
		if (cg_key_eq(jp, &pv->keys[i], &k))
			return cg_fail_dup(jp, q, &k);
	}
	r = cg_jp_push_key(jp, &k);
	if (r || pv->n_keys - f->key_base <= CG_LINEAR_KEYS)
		return r;
	return cg_kset_start(jp, f, set);
}

/* A member's key and colon, at jp->pos; leaves jp->pos at the value. */
static int cg_jp_key(struct cg_jp *jp, bool first)
{
	size_t q = jp->pos;
	bool escaped = false;
	int r;

	if (q >= jp->n || jp->s[q] != '"')
		return cg_fail_expect(jp, q,
		                      first ? "a string key or `}`" : "a string key after `,`");
	r = cg_jp_string(jp, &escaped);
	if (r)
		return r;
	r = cg_jp_add_key(jp, q, escaped);
	if (r)
		return r;
	jp->pos = cg_skip_ws(jp->s, jp->pos, jp->n);
	if (jp->pos >= jp->n || jp->s[jp->pos] != ':')
		return cg_fail_expect(jp, jp->pos, "`:` after object key");
	jp->pos = cg_skip_ws(jp->s, jp->pos + 1, jp->n);
	return 0;
}

/* ---- containers ---- */

static int cg_jp_open(struct cg_jp *jp, bool is_obj)
{
	struct cg_json_frame *f;

	if (jp->depth == CG_JSON_MAX_DEPTH)
		return cg_fail(jp, jp->pos, "nesting deeper than %d arrays/objects",
		               CG_JSON_MAX_DEPTH);
	f = &jp->pv->frames[jp->depth++];
	f->is_obj = is_obj;
	f->id = 0;
	f->key_base = (uint32_t)jp->pv->n_keys;
	f->kbuf_base = (uint32_t)jp->pv->kbuf_len;
	jp->pos = cg_skip_ws(jp->s, jp->pos + 1, jp->n);
	return 0;
}

/* Closes the innermost container at its closing bracket (jp->pos). */
static void cg_jp_close(struct cg_jp *jp)
{
	const struct cg_json_frame *f = &jp->pv->frames[--jp->depth];

	if (f->is_obj) {
		jp->pv->n_keys = f->key_base;
		jp->pv->kbuf_len = f->kbuf_base;
	}
	jp->pos++;
}

static int cg_jp_object(struct cg_jp *jp, int *next)
{
	int r = cg_jp_open(jp, true);

	if (r)
		return r;
	if (jp->pos < jp->n && jp->s[jp->pos] == '}') {
		cg_jp_close(jp);
		*next = CG_NEXT_AFTER;
		return 0;
	}
	*next = CG_NEXT_VALUE;
	return cg_jp_key(jp, true);
}

static int cg_jp_array(struct cg_jp *jp, int *next)
{
	int r = cg_jp_open(jp, false);

	if (r)
		return r;
	if (jp->pos < jp->n && jp->s[jp->pos] == ']') {
		cg_jp_close(jp);
		*next = CG_NEXT_AFTER;
		return 0;
	}
	*next = CG_NEXT_ELEM_FIRST;
	return 0;
}

/* The value that starts at jp->pos (whitespace already skipped). */
static int cg_jp_value(struct cg_jp *jp, bool first_elem, int *next)
{
	bool escaped = false;

	*next = CG_NEXT_AFTER;
	if (jp->pos < jp->n) {
		switch (jp->s[jp->pos]) {
		case '"':
			return cg_jp_string(jp, &escaped);
		case '{':
			return cg_jp_object(jp, next);
		case '[':
			return cg_jp_array(jp, next);
		case '-':
		case '0':
		case '1':
		case '2':
		case '3':
		case '4':
		case '5':
		case '6':
		case '7':
		case '8':
		case '9':
			return cg_jp_number(jp);
		case 't':
			return cg_jp_literal(jp, "true", 4);
		case 'f':
			return cg_jp_literal(jp, "false", 5);
		case 'n':
			return cg_jp_literal(jp, "null", 4);
		}
	}
	return cg_fail_expect(jp, jp->pos, first_elem ? "a JSON value or `]`" : "a JSON value");
}

__attribute__((cold, noinline)) static int cg_fail_trailing(struct cg_jp *jp)
{
	const uint8_t *s = jp->s;
	size_t p = jp->pos;

	if (s[p] >= 0x80 && !cg_utf8_seq(s + p, jp->n - p, NULL))
		return cg_fail(jp, p, "invalid UTF-8");
	return cg_fail(jp, p, "trailing characters after the JSON value");
}

/* What follows a complete value: a separator, a closing bracket or the end. */
static int cg_jp_after(struct cg_jp *jp, int *next)
{
	const struct cg_json_frame *f;
	uint8_t close;

	jp->pos = cg_skip_ws(jp->s, jp->pos, jp->n);
	if (jp->depth == 0) {
		*next = CG_NEXT_DONE;
		return jp->pos == jp->n ? 0 : cg_fail_trailing(jp);
	}
	f = &jp->pv->frames[jp->depth - 1];
	close = f->is_obj ? '}' : ']';
	if (jp->pos < jp->n && jp->s[jp->pos] == ',') {
		jp->pos = cg_skip_ws(jp->s, jp->pos + 1, jp->n);
		*next = CG_NEXT_VALUE;
		return f->is_obj ? cg_jp_key(jp, false) : 0;
	}
	if (jp->pos < jp->n && jp->s[jp->pos] == close) {
		cg_jp_close(jp);
		*next = CG_NEXT_AFTER;
		return 0;
	}
	return cg_fail_expect(jp, jp->pos,
	                      f->is_obj ? "`,` or `}` after object member"
	                                : "`,` or `]` after array element");
}

static int cg_json_priv_get(struct cg_json_scan *sc)
{
	struct cg_json_priv *pv = sc->priv;

	if (!pv) {
		pv = calloc(1, sizeof(*pv));
		if (!pv)
			return -ENOMEM;
		pv->next_id = 1;
		sc->priv = pv;
	}
	if (pv->next_id >= CG_ID_RESET) {
		for (size_t i = 0; i < CG_JSON_MAX_DEPTH; i++) {
			if (pv->sets[i].slots)
				memset(pv->sets[i].slots, 0,
				       pv->sets[i].cap * sizeof(*pv->sets[i].slots));
		}
		pv->next_id = 1;
	}
	pv->n_keys = 0;
	pv->kbuf_len = 0;
	return 0;
}

int cg_json_scan(struct cg_json_scan *sc, const char *s, size_t n)
{
	struct cg_jp jp = {.sc = sc, .s = (const uint8_t *)s, .n = n};
	int next = CG_NEXT_VALUE, r = 0;
	size_t start;

	sc->n_nums = 0;
	sc->top_is_object = false;
	sc->err_off = 0;
	sc->err[0] = '\0';
	if (n > UINT32_MAX)
		return cg_fail(&jp, 0, "input longer than 4 GiB");
	if (cg_json_priv_get(sc))
		return cg_nomem(&jp);
	jp.pv = sc->priv;
	start = jp.pos = cg_skip_ws(jp.s, 0, n);
	while (next != CG_NEXT_DONE) {
		if (next == CG_NEXT_AFTER)
			r = cg_jp_after(&jp, &next);
		else
			r = cg_jp_value(&jp, next == CG_NEXT_ELEM_FIRST, &next);
		if (r)
			return r;
	}
	sc->top_is_object = jp.s[start] == '{';
	return 0;
}

/* SPDX-License-Identifier: MIT */
#include "jsonl_heap.h"

#include <string.h>

#include "fmt_num.h"

#define PUT(w, lit) (memcpy((w), (lit), sizeof(lit) - 1), (w) + sizeof(lit) - 1)

/* Two hex digits per byte from a table: addresses are 12 digits, six steps. */
static const char hex_pairs[513] =
	"000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
	"202122232425262728292a2b2c2d2e2f303132333435363738393a3b3c3d3e3f"
	"404142434445464748494a4b4c4d4e4f505152535455565758595a5b5c5d5e5f"
	"606162636465666768696a6b6c6d6e6f707172737475767778797a7b7c7d7e7f"
	"808182838485868788898a8b8c8d8e8f909192939495969798999a9b9c9d9e9f"
	"a0a1a2a3a4a5a6a7a8a9aaabacadaeafb0b1b2b3b4b5b6b7b8b9babbbcbdbebf"
	"c0c1c2c3c4c5c6c7c8c9cacbcccdcecfd0d1d2d3d4d5d6d7d8d9dadbdcdddedf"
	"e0e1e2e3e4e5e6e7e8e9eaebecedeeeff0f1f2f3f4f5f6f7f8f9fafbfcfdfeff";

static char *put_hex(char *w, uint64_t v)
{
	int n = v ? (64 - __builtin_clzll(v) + 3) / 4 : 1;
	int i = n;
	while (i >= 2) {
		memcpy(w + i - 2, hex_pairs + 2 * (v & 0xff), 2);
		v >>= 8;
		i -= 2;
	}
	if (i)
		w[0] = hex_pairs[2 * (v & 0xf) + 1];
	return w + n;
}

/* Short copies: a loop beats a call for the few bytes of a name or a number. */
static char *put_n(char *w, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		w[i] = s[i];
	return w + n;
}

/* `","category":"activation"}` and friends, with their lengths, made once. */
static const struct tail {
	const char *s;
	size_t n;
} tails[CGTRACE_CAT_COUNT] = {
#define TAIL(c) {"],\"dtype\":\"u8\",\"category\":\"" c "\"}\n", sizeof("],\"dtype\":\"u8\",\"category\":\"" c "\"}\n") - 1}
	[CGTRACE_CAT_PARAMETER] = TAIL("parameter"),
	[CGTRACE_CAT_ACTIVATION] = TAIL("activation"),
	[CGTRACE_CAT_GRADIENT] = TAIL("gradient"),
	[CGTRACE_CAT_OPTIMIZER] = TAIL("optimizer"),
	[CGTRACE_CAT_OTHER] = TAIL("other"),
#undef TAIL
};

void cg_jsonl_format_heap(struct cg_buf *b, const struct cg_heap_rec *r)
{
	size_t op_len = r->op_len ? r->op_len : strlen(r->op_name);
	char *w = cg_buf_reserve(b, CG_HEAP_LINE_MAX + op_len);
	if (!w)
		return;
	char *start = w;
	w = PUT(w, "{\"kind\":\"memory\",\"timestamp_ns\":");
	w += cg_fmt_u64(w, r->timestamp_ns);
	w = PUT(w, ",\"tensor_id\":\"0x");
	w = put_hex(w, r->addr);
	w = PUT(w, "\",\"span_id\":\"s");
	w += cg_fmt_u64(w, r->span);
	w = PUT(w, "\",\"op_name\":\"");
	w = put_n(w, r->op_name, op_len);
	w = PUT(w, "\",\"device\":\"cpu\",\"bytes\":");
	char *bytes = w;
	w += cg_fmt_u64(w, r->bytes);
	size_t bytes_len = (size_t)(w - bytes);
	w = r->action == CGTRACE_ALLOC ? PUT(w, ",\"action\":\"alloc\",\"shape\":[")
				       : PUT(w, ",\"action\":\"free\",\"shape\":[");
	w = put_n(w, bytes, bytes_len);
	const struct tail *t = &tails[r->category < CGTRACE_CAT_COUNT ? r->category : CGTRACE_CAT_OTHER];
	memcpy(w, t->s, t->n);
	w += t->n;
	b->len += (size_t)(w - start);
}

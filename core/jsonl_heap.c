/* SPDX-License-Identifier: MIT */
#include "jsonl_heap.h"

#include <string.h>

#include "fmt_num.h"

#define PUT(w, lit) (memcpy((w), (lit), sizeof(lit) - 1), (w) + sizeof(lit) - 1)

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
	w += cg_fmt_hex(w, r->addr);
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

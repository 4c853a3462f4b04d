/* SPDX-License-Identifier: MIT */
#include "jsonl_heap.h"

#include <string.h>

#include "fmt_int.h"

#define PUT(w, lit) (memcpy((w), (lit), sizeof(lit) - 1), (w) + sizeof(lit) - 1)

/* Copies a piece of at most sizeof(piece) bytes with one fixed-size copy; advances by len. */
#define PUT_PAD(w, piece, len) (memcpy((w), (piece), sizeof(piece)), (w) + (len))

#define OP_HEAD "\",\"op_name\":\""
#define OP_TAIL "\",\"device\":\"cpu\",\"bytes\":"

bool cg_heap_op_init(struct cg_heap_op *op, const char *name)
{
	size_t n = strlen(name);
	memset(op, 0, sizeof(*op));
	if (n > CG_HEAP_OP_NAME_MAX)
		return false;
	_Static_assert(sizeof(OP_HEAD) - 1 + CG_HEAP_OP_NAME_MAX + sizeof(OP_TAIL) - 1 <=
			       sizeof(op->text),
		       "op text fits");
	char *w = PUT(op->text, OP_HEAD);
	memcpy(w, name, n);
	w = PUT(w + n, OP_TAIL);
	op->len = (uint8_t)(w - op->text);
	return true;
}

/* `],"dtype":"u8","category":"activation"}` and friends, padded likewise. */
static const struct tail {
	char s[48];
	uint8_t n;
} tails[CGTRACE_CAT_COUNT] = {
#define TAIL_TEXT(c) "],\"dtype\":\"u8\",\"category\":\"" c "\"}\n"
#define TAIL(c) {TAIL_TEXT(c), sizeof(TAIL_TEXT(c)) - 1}
	[CGTRACE_CAT_PARAMETER] = TAIL("parameter"),
	[CGTRACE_CAT_ACTIVATION] = TAIL("activation"),
	[CGTRACE_CAT_GRADIENT] = TAIL("gradient"),
	[CGTRACE_CAT_OPTIMIZER] = TAIL("optimizer"),
	[CGTRACE_CAT_OTHER] = TAIL("other"),
#undef TAIL
#undef TAIL_TEXT
};

/*
 * Every length is known before anything is written, so each piece's
 * place is a sum of constants and lengths, and the digit loops of the
 * four numbers do not wait on one another.
 */
void cg_jsonl_format_heap(struct cg_buf *b, const struct cg_heap_rec *r)
{
	char *w = b->cap - b->len >= CG_HEAP_LINE_MAX ? b->p + b->len
						      : cg_buf_reserve(b, CG_HEAP_LINE_MAX);
	if (!w)
		return;
	char *start = w;
	unsigned ts_len = cg_dec_len(r->timestamp_ns);
	unsigned id_len = cg_hex_len(r->addr);
	unsigned span_len = cg_dec_len(r->span);
	unsigned bytes_len = cg_dec_len(r->bytes);
	w = PUT(w, "{\"kind\":\"memory\",\"timestamp_ns\":");
	cg_put_digits(w + ts_len, r->timestamp_ns);
	w = PUT(w + ts_len, ",\"tensor_id\":\"0x");
	cg_put_hex(w, r->addr, id_len);
	w = PUT(w + id_len, "\",\"span_id\":\"s");
	cg_put_digits(w + span_len, r->span);
	w = PUT_PAD(w + span_len, r->op->text, r->op->len);
	cg_put_digits(w + bytes_len, r->bytes);
	w += bytes_len;
	w = r->action == CGTRACE_ALLOC ? PUT(w, ",\"action\":\"alloc\",\"shape\":[")
				       : PUT(w, ",\"action\":\"free\",\"shape\":[");
	/*
	 * The digits again, made again: reading back the bytes just stored
	 * piecewise would stall on store forwarding.
	 */
	cg_put_digits(w + bytes_len, r->bytes);
	w += bytes_len;
	const struct tail *t = &tails[r->category < CGTRACE_CAT_COUNT ? r->category : CGTRACE_CAT_OTHER];
	w = PUT_PAD(w, t->s, t->n);
	b->len += (size_t)(w - start);
}

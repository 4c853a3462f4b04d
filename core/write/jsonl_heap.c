/* SPDX-License-Identifier: MIT */
#include "jsonl_heap.h"

#include <string.h>

#include "fmt_int.h"
#include "jsonl_format.h"

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

/*
 * `],"dtype":"u8","category":"activation"` and friends, padded likewise;
 * the line's end (`}` and the newline) follows, after the stack id if any.
 */
static const struct tail {
	char s[48];
	uint8_t n;
} tails[CGTRACE_CAT_COUNT] = {
#define TAIL_TEXT(c) "],\"dtype\":\"u8\",\"category\":\"" c "\""
#define TAIL(c) {TAIL_TEXT(c), sizeof(TAIL_TEXT(c)) - 1}
	[CGTRACE_CAT_PARAMETER] = TAIL("parameter"),
	[CGTRACE_CAT_ACTIVATION] = TAIL("activation"),
	[CGTRACE_CAT_GRADIENT] = TAIL("gradient"),
	[CGTRACE_CAT_OPTIMIZER] = TAIL("optimizer"),
	[CGTRACE_CAT_OTHER] = TAIL("other"),
#undef TAIL
#undef TAIL_TEXT
};

/* A record with frames or modules (rare): the one formatter writes it. */
static void heap_rec(const struct cg_heap_rec *h, struct cg_rec *r, char *id)
{
	memcpy(id, "0x", 2);
	unsigned id_len = cg_hex_len(h->addr);
	cg_put_hex(id + 2, h->addr, id_len);
	char *span = id + 2 + id_len;
	span[0] = 's';
	unsigned span_len = cg_dec_len(h->span);
	cg_put_digits(span + 1 + span_len, h->span);
	/* The op's name sits in its text between the two fixed pieces. */
	const char *name = h->op->text + sizeof(OP_HEAD) - 1;
	size_t name_len = h->op->len - (sizeof(OP_HEAD) - 1) - (sizeof(OP_TAIL) - 1);
	*r = (struct cg_rec){.kind = CGTRACE_KIND_MEMORY};
	r->u.memory = (struct cg_rec_memory){
		.timestamp_ns = h->timestamp_ns,
		.tensor_id = {id, 2 + id_len},
		.span_id = {span, 1 + span_len},
		.op_name = {name, (uint32_t)name_len},
		.device = CG_SV_LIT("cpu"),
		.bytes = h->bytes,
		.action = h->action,
		.shape = &h->bytes,
		.ndim = 1,
		.dtype = CG_SV_LIT("u8"),
		.category = h->category < CGTRACE_CAT_COUNT ? h->category : CGTRACE_CAT_OTHER,
		.stack = h->stack,
		.stack_frames = h->frames,
		.n_stack_frames = h->frames ? h->n_frames : 0,
		.cgprobe_stack_parent = h->stack_parent,
		.has_stack_parent = h->has_stack_parent,
		.modules = h->modules,
		.n_modules = h->modules ? h->n_modules : 0,
		.py_codes = h->py_codes,
		.n_py_codes = h->py_codes ? h->n_py_codes : 0,
	};
}

static bool heap_slow(const struct cg_heap_rec *r)
{
	return (r->frames && r->n_frames) || r->has_stack_parent || (r->modules && r->n_modules) ||
	       (r->py_codes && r->n_py_codes);
}

size_t cg_heap_line_max(const struct cg_heap_rec *r)
{
	if (!heap_slow(r))
		return CG_HEAP_LINE_MAX;
	char id[64];
	struct cg_rec rec;
	heap_rec(r, &rec, id);
	return cg_jsonl_line_max(&rec);
}

/*
 * Every length is known before anything is written, so each piece's
 * place is a sum of constants and lengths, and the digit loops of the
 * four numbers do not wait on one another.
 */
void cg_jsonl_format_heap(struct cg_buf *b, const struct cg_heap_rec *r)
{
	if (__builtin_expect(heap_slow(r), 0)) {
		char id[64];
		struct cg_rec rec;
		heap_rec(r, &rec, id);
		cg_jsonl_format(b, &rec);
		return;
	}
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
	if (r->stack) {
		unsigned stack_len = cg_dec_len(r->stack);
		w = PUT(w, ",\"cgprobe_stack\":");
		cg_put_digits(w + stack_len, r->stack);
		w += stack_len;
	}
	w = PUT(w, "}\n");
	b->len += (size_t)(w - start);
}

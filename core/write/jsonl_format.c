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

static char *put_u64s(char *w, const uint64_t *v, uint32_t n)
{
	*w++ = '[';
	for (uint32_t i = 0; i < n; i++) {
		if (i)
			*w++ = ',';
		w = put_u64(w, v[i]);
	}
	*w++ = ']';
	return w;
}

static char *put_svs(char *w, const struct cg_sv *v, uint32_t n)
{
	*w++ = '[';
	for (uint32_t i = 0; i < n; i++) {
		if (i)
			*w++ = ',';
		w = put_sv(w, v[i]);
	}
	*w++ = ']';
	return w;
}

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

static char *fmt_meta(char *w, const struct cg_rec_meta *m, const struct cg_tagv **order)
{
	w = PUT_LIT(w, "{\"kind\":\"meta\",\"schema\":");
	w = put_sv(w, m->schema);
	w = PUT_LIT(w, ",\"run_id\":");
	w = put_sv(w, m->run_id);
	w = PUT_LIT(w, ",\"correlation_id\":");
	w = put_sv(w, m->correlation_id);
	w = PUT_LIT(w, ",\"entrypoint\":");
	w = put_sv(w, m->entrypoint);
	w = PUT_LIT(w, ",\"phase\":");
	w = put_name(w, cg_phase_names, CG_PHASE_COUNT, m->phase);
	w = PUT_LIT(w, ",\"timestamp\":");
	w = put_sv(w, m->timestamp);
	w = PUT_LIT(w, ",\"capture_step\":");
	w = put_u64(w, m->capture_step);
	w = PUT_LIT(w, ",\"warmup_steps\":");
	w = put_u64(w, m->warmup_steps);
	w = PUT_LIT(w, ",\"device\":");
	w = put_sv(w, m->device);
	w = PUT_LIT(w, ",\"measured_region_device_synchronized\":");
	w = put_bool(w, m->measured_region_device_synchronized);
	w = PUT_LIT(w, ",\"timing_mode\":");
	w = put_name(w, cg_timing_names, CG_TIMING_COUNT, m->timing_mode);
	w = PUT_LIT(w, ",\"tags\":");
	w = put_tags(w, m->tags, m->n_tags, order);
	if (m->candle_version.p) {
		w = PUT_LIT(w, ",\"candle_version\":");
		w = put_sv(w, m->candle_version);
	}
	return w;
}

static char *fmt_span_start(char *w, const struct cg_rec_span_start *s)
{
	w = PUT_LIT(w, "{\"kind\":\"span_start\",\"id\":");
	w = put_sv(w, s->id);
	if (s->parent_id.p) {
		w = PUT_LIT(w, ",\"parent_id\":");
		w = put_sv(w, s->parent_id);
	}
	w = PUT_LIT(w, ",\"name\":");
	w = put_sv(w, s->name);
	w = PUT_LIT(w, ",\"start_ns\":");
	w = put_u64(w, s->start_ns);
	w = PUT_LIT(w, ",\"span_kind\":");
	w = put_name(w, cg_span_kind_names, CG_SPAN_KIND_COUNT, s->span_kind);
	w = PUT_LIT(w, ",\"measured\":");
	w = put_bool(w, s->measured);
	if (cg_name_at(cg_step_names, CG_STEP_COUNT, s->step)) {
		w = PUT_LIT(w, ",\"step\":");
		w = put_name(w, cg_step_names, CG_STEP_COUNT, s->step);
	}
	return w;
}

static char *fmt_span_end(char *w, const struct cg_rec_span_end *s)
{
	w = PUT_LIT(w, "{\"kind\":\"span_end\",\"id\":");
	w = put_sv(w, s->id);
	w = PUT_LIT(w, ",\"duration_ns\":");
	return put_u64(w, s->duration_ns);
}

static char *fmt_op(char *w, const struct cg_rec_op *o)
{
	w = PUT_LIT(w, "{\"kind\":\"op\",\"span_id\":");
	w = put_sv(w, o->span_id);
	w = PUT_LIT(w, ",\"op_name\":");
	w = put_sv(w, o->op_name);
	w = PUT_LIT(w, ",\"inputs\":");
	w = put_svs(w, o->inputs, o->n_inputs);
	if (o->output.p) {
		w = PUT_LIT(w, ",\"output\":");
		w = put_sv(w, o->output);
	}
	w = PUT_LIT(w, ",\"shape\":");
	w = put_u64s(w, o->shape, o->ndim);
	w = PUT_LIT(w, ",\"dtype\":");
	w = put_sv(w, o->dtype);
	w = PUT_LIT(w, ",\"device\":");
	w = put_sv(w, o->device);
	w = PUT_LIT(w, ",\"duration_ns\":");
	w = put_u64(w, o->duration_ns);
	w = PUT_LIT(w, ",\"timestamp_ns\":");
	w = put_u64(w, o->timestamp_ns);
	if (o->has_storage_bytes) {
		w = PUT_LIT(w, ",\"storage_bytes\":");
		w = put_u64(w, o->storage_bytes);
	}
	w = PUT_LIT(w, ",\"input_storage_bytes\":");
	return put_u64(w, o->input_storage_bytes);
}

static char *fmt_tensor(char *w, const struct cg_rec_tensor *t)
{
	w = PUT_LIT(w, "{\"kind\":\"tensor\",\"span_id\":");
	w = put_sv(w, t->span_id);
	w = PUT_LIT(w, ",\"tensor_id\":");
	w = put_sv(w, t->tensor_id);
	w = PUT_LIT(w, ",\"shape\":");
	w = put_u64s(w, t->shape, t->ndim);
	w = PUT_LIT(w, ",\"dtype\":");
	w = put_sv(w, t->dtype);
	w = PUT_LIT(w, ",\"device\":");
	w = put_sv(w, t->device);
	w = PUT_LIT(w, ",\"requires_grad\":");
	w = put_bool(w, t->requires_grad);
	if (t->has_storage_bytes) {
		w = PUT_LIT(w, ",\"storage_bytes\":");
		w = put_u64(w, t->storage_bytes);
	}
	w = PUT_LIT(w, ",\"category\":");
	return put_name(w, cg_category_names, CGTRACE_CAT_COUNT, t->category);
}

static char *fmt_memory(char *w, const struct cg_rec_memory *m)
{
	w = PUT_LIT(w, "{\"kind\":\"memory\",\"timestamp_ns\":");
	w = put_u64(w, m->timestamp_ns);
	w = PUT_LIT(w, ",\"tensor_id\":");
	w = put_sv(w, m->tensor_id);
	w = PUT_LIT(w, ",\"span_id\":");
	w = put_sv(w, m->span_id);
	if (m->op_name.p) {
		w = PUT_LIT(w, ",\"op_name\":");
		w = put_sv(w, m->op_name);
	}
	w = PUT_LIT(w, ",\"device\":");
	w = put_sv(w, m->device);
	w = PUT_LIT(w, ",\"bytes\":");
	w = put_u64(w, m->bytes);
	w = PUT_LIT(w, ",\"action\":");
	w = put_name(w, cg_action_names, CG_ACTION_COUNT, m->action);
	w = PUT_LIT(w, ",\"shape\":");
	w = put_u64s(w, m->shape, m->ndim);
	w = PUT_LIT(w, ",\"dtype\":");
	w = put_sv(w, m->dtype);
	w = PUT_LIT(w, ",\"category\":");
	w = put_name(w, cg_category_names, CGTRACE_CAT_COUNT, m->category);
	/* Extension field: written only when set, so plain traces stay plain trace/6. */
	if (m->managed)
		w = PUT_LIT(w, ",\"managed\":true");
	return w;
}

static char *fmt_device_memory(char *w, const struct cg_rec_device_memory *d)
{
	w = PUT_LIT(w, "{\"kind\":\"device_memory\",\"timestamp_ns\":");
	w = put_u64(w, d->timestamp_ns);
	w = PUT_LIT(w, ",\"device\":");
	w = put_sv(w, d->device);
	w = PUT_LIT(w, ",\"used_bytes\":");
	w = put_u64(w, d->used_bytes);
	w = PUT_LIT(w, ",\"free_bytes\":");
	w = put_u64(w, d->free_bytes);
	if (d->has_reserved) {
		w = PUT_LIT(w, ",\"reserved_bytes\":");
		w = put_u64(w, d->reserved_bytes);
	}
	if (d->has_oom_request) {
		w = PUT_LIT(w, ",\"oom_request_bytes\":");
		w = put_u64(w, d->oom_request_bytes);
	}
	return w;
}

static char *fmt_gradient(char *w, const struct cg_rec_gradient *g)
{
	w = PUT_LIT(w, "{\"kind\":\"gradient\",\"event_id\":");
	w = put_sv(w, g->event_id);
	w = PUT_LIT(w, ",\"root\":");
	w = put_sv(w, g->root);
	w = PUT_LIT(w, ",\"key\":");
	w = put_sv(w, g->key);
	w = PUT_LIT(w, ",\"state\":");
	w = put_name(w, cg_grad_state_names, CG_GRAD_STATE_COUNT, g->state);
	/* JSON has no NaN or infinity: such a norm is left out. */
	if (g->has_norm && isfinite(g->norm)) {
		w = PUT_LIT(w, ",\"norm\":");
		w += cg_fmt_f64(w, g->norm);
	}
	return w;
}

static char *fmt_edge(char *w, const struct cg_rec_edge *e)
{
	w = PUT_LIT(w, "{\"kind\":\"edge\",\"from_span\":");
	w = put_sv(w, e->from_span);
	w = PUT_LIT(w, ",\"to_span\":");
	w = put_sv(w, e->to_span);
	w = PUT_LIT(w, ",\"duration_ns\":");
	return put_u64(w, e->duration_ns);
}

static char *fmt_device_info(char *w, const struct cg_rec_device_info *d)
{
	w = PUT_LIT(w, "{\"kind\":\"cgprobe_device\",\"device\":");
	w = put_sv(w, d->device);
	w = PUT_LIT(w, ",\"uuid\":");
	w = put_sv(w, d->uuid);
	if (d->name.p) {
		w = PUT_LIT(w, ",\"name\":");
		w = put_sv(w, d->name);
	}
	if (d->has_total) {
		w = PUT_LIT(w, ",\"total_bytes\":");
		w = put_u64(w, d->total_bytes);
	}
	return w;
}

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

static size_t tags_max(const struct cg_tagv *tags, uint32_t n)
{
	size_t total = 2;
	for (uint32_t i = 0; i < n; i++)
		total += sv_max(tags[i].key) + sv_max(tags[i].value) + 2;
	return total;
}

/*
 * Upper bound of the line's length: FIXED_MAX covers the keys, punctuation,
 * enum spellings and scalar numbers of every kind (the longest, meta, needs
 * under 400 bytes); the variable parts are bounded field by field. Lengths
 * are uint32_t views, so the sums cannot overflow a 64-bit size_t.
 */
static size_t line_max(const struct cg_rec *r)
{
	size_t n = FIXED_MAX;

	switch (r->kind) {
	case CGTRACE_KIND_META: {
		const struct cg_rec_meta *m = &r->u.meta;
		n += sv_max(m->schema) + sv_max(m->run_id) + sv_max(m->correlation_id) +
		     sv_max(m->entrypoint) + sv_max(m->timestamp) + sv_max(m->device) +
		     sv_max(m->candle_version) + tags_max(m->tags, m->n_tags);
		break;
	}
	case CGTRACE_KIND_SPAN_START: {
		const struct cg_rec_span_start *s = &r->u.span_start;
		n += sv_max(s->id) + sv_max(s->parent_id) + sv_max(s->name);
		break;
	}
	case CGTRACE_KIND_SPAN_END:
		n += sv_max(r->u.span_end.id);
		break;
	case CGTRACE_KIND_OP: {
		const struct cg_rec_op *o = &r->u.op;
		n += sv_max(o->span_id) + sv_max(o->op_name) + svs_max(o->inputs, o->n_inputs) +
		     sv_max(o->output) + u64s_max(o->ndim) + sv_max(o->dtype) + sv_max(o->device);
		break;
	}
	case CGTRACE_KIND_TENSOR: {
		const struct cg_rec_tensor *t = &r->u.tensor;
		n += sv_max(t->span_id) + sv_max(t->tensor_id) + u64s_max(t->ndim) +
		     sv_max(t->dtype) + sv_max(t->device);
		break;
	}
	case CGTRACE_KIND_MEMORY: {
		const struct cg_rec_memory *m = &r->u.memory;
		n += sv_max(m->tensor_id) + sv_max(m->span_id) + sv_max(m->op_name) +
		     sv_max(m->device) + u64s_max(m->ndim) + sv_max(m->dtype);
		break;
	}
	case CGTRACE_KIND_DEVICE_MEMORY:
		n += sv_max(r->u.device_memory.device);
		break;
	case CGTRACE_KIND_GRADIENT: {
		const struct cg_rec_gradient *g = &r->u.gradient;
		n += sv_max(g->event_id) + sv_max(g->root) + sv_max(g->key);
		break;
	}
	case CGTRACE_KIND_EDGE:
		n += sv_max(r->u.edge.from_span) + sv_max(r->u.edge.to_span);
		break;
	case CGTRACE_KIND_DEVICE_INFO: {
		const struct cg_rec_device_info *d = &r->u.device_info;
		n += sv_max(d->device) + sv_max(d->uuid) + sv_max(d->name);
		break;
	}
	case CGTRACE_KIND_COUNT:
		break;
	}
	return n;
}

/* ------------------------------------------------------------------ */

static char *fmt_body(char *w, const struct cg_rec *r, const struct cg_tagv **order)
{
	switch (r->kind) {
	case CGTRACE_KIND_META:
		return fmt_meta(w, &r->u.meta, order);
	case CGTRACE_KIND_SPAN_START:
		return fmt_span_start(w, &r->u.span_start);
	case CGTRACE_KIND_SPAN_END:
		return fmt_span_end(w, &r->u.span_end);
	case CGTRACE_KIND_OP:
		return fmt_op(w, &r->u.op);
	case CGTRACE_KIND_TENSOR:
		return fmt_tensor(w, &r->u.tensor);
	case CGTRACE_KIND_MEMORY:
		return fmt_memory(w, &r->u.memory);
	case CGTRACE_KIND_DEVICE_MEMORY:
		return fmt_device_memory(w, &r->u.device_memory);
	case CGTRACE_KIND_GRADIENT:
		return fmt_gradient(w, &r->u.gradient);
	case CGTRACE_KIND_EDGE:
		return fmt_edge(w, &r->u.edge);
	case CGTRACE_KIND_DEVICE_INFO:
		return fmt_device_info(w, &r->u.device_info);
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
	char *w = cg_buf_reserve(b, line_max(r));
	if (w) {
		w = fmt_body(w, r, order);
		w = PUT_LIT(w, "}\n");
		b->len = (size_t)(w - b->p);
	}
	if (order != stack_order)
		free(order);
}

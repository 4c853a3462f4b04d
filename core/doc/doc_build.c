/* SPDX-License-Identifier: MIT */
/*
 * Building a document one record at a time: strings interned, shapes and
 * memory classes hash-consed, so the reader can name the offending line.
 */
#include "doc_build.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cgtrace.h"
#include "doc.h"
#include "doc_pycodes.h"
#include "doc_rules.h"
#include "doc_stacks.h"
#include "doc_view.h"
#include "hash.h"
#include "u64map.h"

/* Recently seen memory classes by their raw fields: most records repeat one. */
#define CLASS_CACHE 16
#define CACHE_STR 48

struct class_cache_entry {
	uint8_t lens[4]; /* span, op (255 = absent), dtype, device */
	uint8_t action, category, managed, preexisting, shape_kind;
	uint32_t cls;
	char str[4][CACHE_STR];
};

struct cg_build {
	struct class_cache_entry cache[CLASS_CACHE];
	unsigned n_cache, next_cache;
	struct cg_map span_by_id;  /* string id -> span index */
	struct cg_map class_by_key;/* hash of class -> class index (chained by probing) */
	struct cg_map shape_by_hash;
	struct cg_map device_by_str;
	struct cg_map devinfo_by_device; /* device number -> devinfo index */
	/* By decoder class * 4 + (free) + 2 * (pre-existing): document class + 1, 0: not seen. */
	struct cg_vec packed_cls; /* uint32_t */
};

struct cg_build *cg_build_new(void)
{
	return calloc(1, sizeof(struct cg_build));
}

void cg_build_free(struct cg_build *b)
{
	if (!b)
		return;
	cg_map_free(&b->span_by_id);
	cg_map_free(&b->class_by_key);
	cg_map_free(&b->shape_by_hash);
	cg_map_free(&b->device_by_str);
	cg_map_free(&b->devinfo_by_device);
	cg_vec_free(&b->packed_cls, sizeof(uint32_t));
	free(b);
}

static uint32_t intern(struct cgtrace_doc *d, struct cg_sv s)
{
	return cg_strpool_intern(&d->pool, s);
}

static int device_index(struct cgtrace_doc *d, struct cg_sv s, uint16_t *out)
{
	uint32_t id = intern(d, s);
	if (d->pool.err)
		return d->pool.err;
	uint32_t pos = UINT32_MAX, val;
	if (cg_map_next(&d->build->device_by_str, id, &pos, &val)) {
		*out = (uint16_t)val;
		return 0;
	}
	/* Device numbers are 16-bit in memory classes; a documented limit. */
	if (d->devices.len >= UINT16_MAX)
		return -E2BIG;
	uint32_t *slot = CG_VEC_PUSH(&d->devices, uint32_t);
	if (!slot)
		return -ENOMEM;
	*slot = id;
	*out = (uint16_t)(d->devices.len - 1);
	return cg_map_put(&d->build->device_by_str, id, *out);
}

static int shape_id(struct cgtrace_doc *d, const uint64_t *dims, uint32_t ndim,
		    const uint64_t *bytes, uint32_t *out)
{
	if (ndim == 0) {
		*out = CG_SHAPE_EMPTY;
		return 0;
	}
	if (bytes && ndim == 1 && dims[0] == *bytes) {
		*out = CG_SHAPE_BYTES;
		return 0;
	}
	uint64_t h = ndim;
	for (uint32_t i = 0; i < ndim; i++)
		h = cg_hash_mix64(h ^ dims[i]) + i;
	uint32_t pos = UINT32_MAX, val;
	const uint64_t *base = d->shapes.p;
	while (cg_map_next(&d->build->shape_by_hash, h, &pos, &val)) {
		if (base[val] == ndim && memcmp(base + val + 1, dims, ndim * sizeof(*dims)) == 0) {
			*out = val;
			return 0;
		}
	}
	size_t at = d->shapes.len;
	if (at + ndim + 1 > UINT32_MAX)
		return -E2BIG;
	int r = cg_vec_grow(&d->shapes, sizeof(uint64_t), at + ndim + 1);
	if (r < 0)
		return r;
	uint64_t *w = (uint64_t *)d->shapes.p + at;
	w[0] = ndim;
	memcpy(w + 1, dims, ndim * sizeof(*dims));
	d->shapes.len = at + ndim + 1;
	*out = (uint32_t)at;
	return cg_map_put(&d->build->shape_by_hash, h, (uint32_t)at);
}

static int class_id(struct cgtrace_doc *d, const struct cg_mem_class *c, uint32_t *out)
{
	uint64_t h = cg_hash_mix64(((uint64_t)c->span_id << 32) ^ c->op_name);
	h = cg_hash_mix64(h ^ ((uint64_t)c->dtype << 24) ^ ((uint64_t)c->device << 8) ^
		  ((uint64_t)c->shape_kind << 6) ^ ((uint64_t)c->action << 4) ^
		  ((uint64_t)c->category << 1) ^ c->managed ^ ((uint64_t)c->preexisting << 40));
	uint32_t pos = UINT32_MAX, val;
	while (cg_map_next(&d->build->class_by_key, h, &pos, &val)) {
		const struct cg_mem_class *e = cg_doc_class(d, val);
		if (e->span_id == c->span_id && e->op_name == c->op_name && e->dtype == c->dtype &&
		    e->device == c->device && e->action == c->action &&
		    e->category == c->category && e->managed == c->managed &&
		    e->preexisting == c->preexisting && e->shape_kind == c->shape_kind) {
			*out = val;
			return 0;
		}
	}
	struct cg_mem_class *slot = CG_VEC_PUSH(&d->classes, struct cg_mem_class);
	if (!slot || d->classes.len > UINT32_MAX)
		return -ENOMEM;
	*slot = *c;
	*out = (uint32_t)(d->classes.len - 1);
	return cg_map_put(&d->build->class_by_key, h, *out);
}

static uint8_t mem_shape_kind(const struct cg_rec_memory *m)
{
	if (m->ndim == 0)
		return CG_SHAPE_EMPTY;
	return m->ndim == 1 && m->shape[0] == m->bytes ? CG_SHAPE_BYTES : CG_SHAPE_OTHER;
}

static bool cache_match(const struct class_cache_entry *e, const struct cg_rec_memory *m,
			uint8_t shape_kind)
{
	const struct cg_sv f[4] = {m->span_id, m->op_name, m->dtype, m->device};
	if (e->action != m->action || e->category != m->category || e->managed != m->managed ||
	    e->preexisting != m->cgprobe_preexisting || e->shape_kind != shape_kind)
		return false;
	for (int i = 0; i < 4; i++) {
		uint8_t n = f[i].p ? (uint8_t)f[i].n : 255;
		if (e->lens[i] != n)
			return false;
		/* Short strings: a byte loop beats a call to memcmp. */
		for (uint32_t k = 0; f[i].p && k < f[i].n; k++)
			if (e->str[i][k] != f[i].p[k])
				return false;
	}
	return true;
}

static void cache_put(struct cg_build *b, const struct cg_rec_memory *m, uint8_t shape_kind,
		      uint32_t cls)
{
	const struct cg_sv f[4] = {m->span_id, m->op_name, m->dtype, m->device};
	for (int i = 0; i < 4; i++)
		if (f[i].n >= CACHE_STR)
			return;
	struct class_cache_entry *e = &b->cache[b->next_cache];
	b->next_cache = (b->next_cache + 1) % CLASS_CACHE;
	if (b->n_cache < CLASS_CACHE)
		b->n_cache++;
	for (int i = 0; i < 4; i++) {
		e->lens[i] = f[i].p ? (uint8_t)f[i].n : 255;
		memcpy(e->str[i], f[i].p ? f[i].p : "", f[i].n);
	}
	e->action = m->action;
	e->category = m->category;
	e->managed = m->managed;
	e->preexisting = m->cgprobe_preexisting;
	e->shape_kind = shape_kind;
	e->cls = cls;
}

static int mem_class(struct cgtrace_doc *d, const struct cg_rec_memory *m, uint8_t shape_kind,
		     uint32_t *out)
{
	struct cg_build *b = d->build;
	for (unsigned i = 0; i < b->n_cache; i++) {
		if (cache_match(&b->cache[i], m, shape_kind)) {
			*out = b->cache[i].cls;
			return 0;
		}
	}
	struct cg_mem_class c = {
		.span_id = intern(d, m->span_id),
		.op_name = intern(d, m->op_name),
		.dtype = intern(d, m->dtype),
		.action = m->action,
		.category = m->category,
		.managed = m->managed,
		.preexisting = m->cgprobe_preexisting,
		.shape_kind = shape_kind,
	};
	int r = device_index(d, m->device, &c.device);
	if (r == 0)
		r = d->pool.err;
	if (r == 0)
		r = class_id(d, &c, out);
	if (r == 0)
		cache_put(b, m, shape_kind, *out);
	return r;
}

/* Non-trivial shapes get a side array, created the first time one shows up. */
static int mem_shape(struct cgtrace_doc *d, const struct cg_rec_memory *m)
{
	uint32_t id;
	int r = shape_id(d, m->shape, m->ndim, NULL, &id);
	if (r < 0)
		return r;
	size_t at = d->memory.len - 1;
	size_t old = d->mem_shapes.len;
	r = cg_vec_grow(&d->mem_shapes, sizeof(uint32_t), at + 1);
	if (r < 0)
		return r;
	uint32_t *v = d->mem_shapes.p;
	memset(v + old, 0, (at - old) * sizeof(*v));
	v[at] = id;
	d->mem_shapes.len = at + 1;
	return 0;
}

/* A device's identity as a record carries it: the fields, or an old cgprobe_device record. */
struct identity {
	struct cg_sv uuid, name;
	bool has_total;
	uint64_t total_bytes;
};

static bool same_identity(const struct cgtrace_doc *d, const struct cg_devinfo *e,
			  const struct identity *id)
{
	return cg_sv_eq(cg_strpool_sv(&d->pool, e->uuid), id->uuid) &&
	       cg_sv_eq(cg_strpool_sv(&d->pool, e->name), id->name) &&
	       e->has_total == id->has_total &&
	       (!e->has_total || e->total_bytes == id->total_bytes);
}

/*
 * One identity per device, the first seen: a device's later records do not
 * repeat it, and one that differs (two physical GPUs behind one cuda:N in
 * one trace cannot be) is only counted, for cgtrace validate to warn about.
 */
static int add_identity(struct cgtrace_doc *d, uint16_t dev, const struct identity *id)
{
	uint32_t pos = UINT32_MAX, val;
	if (cg_map_next(&d->build->devinfo_by_device, dev, &pos, &val)) {
		if (!same_identity(d, CG_VEC_AT(&d->devinfo, struct cg_devinfo, val), id))
			d->devinfo_conflicts++;
		return 0;
	}
	struct cg_devinfo o = {
		.device = dev,
		.uuid = intern(d, id->uuid),
		.name = intern(d, id->name),
		.has_total = id->has_total,
		.total_bytes = id->total_bytes,
	};
	if (d->pool.err)
		return d->pool.err;
	struct cg_devinfo *slot = CG_VEC_PUSH(&d->devinfo, struct cg_devinfo);
	if (!slot)
		return -ENOMEM;
	*slot = o;
	return cg_map_put(&d->build->devinfo_by_device, dev, (uint32_t)(d->devinfo.len - 1));
}

/* The identity fields of a memory or device_memory record; without a UUID there is none. */
#define IDENTITY_OF(x)                                                                             \
	((struct identity){(x)->cgprobe_device_uuid, (x)->cgprobe_device_name,                     \
			   (x)->has_device_total, (x)->cgprobe_device_total_bytes})

static int add_device_info(struct cgtrace_doc *d, const struct cg_rec_device_info *x)
{
	uint16_t dev;
	int r = device_index(d, x->device, &dev);
	if (r < 0)
		return r;
	return add_identity(d, dev,
			    &(struct identity){x->uuid, x->name, x->has_total, x->total_bytes});
}

/* A streamed document hands the record on instead of keeping it (doc_sink.h). */
static int stream_memory(struct cgtrace_doc *d, const struct cg_rec_memory *m, uint8_t shape_kind,
			 char *err, size_t errlen)
{
	uint32_t cls, shape = shape_kind, stack;
	int r = cg_doc_stacks_in(m) ? cg_doc_stacks_add(d, m, UINT64_MAX, &stack, err, errlen) : 0;
	if (r < 0)
		return r;
	r = mem_class(d, m, shape_kind, &cls);
	if (r == 0 && shape_kind == CG_SHAPE_OTHER)
		r = shape_id(d, m->shape, m->ndim, NULL, &shape);
	if (r == 0 && m->cgprobe_device_uuid.p)
		r = add_identity(d, cg_doc_class(d, cls)->device, &IDENTITY_OF(m));
	if (r < 0)
		return r;
	const struct cg_sink_mem x = {
		.ts = m->timestamp_ns,
		.bytes = m->bytes,
		.index = d->memory_seen++,
		.stack = m->stack,
		.id = m->tensor_id,
		.cls = cls,
		.shape = shape,
		.action = m->action,
	};
	return d->sink.ops->memory(d->sink.state, &x);
}

/* The document class of a decoder class and action, made once. */
static int packed_class(struct cgtrace_doc *d, const struct cg_rec_memory *m,
			const struct cg_doc_packed *pk, uint32_t *out)
{
	struct cg_vec *v = &d->build->packed_cls;
	/* Alloc, free, pre-existing alloc: each a class of the document. */
	size_t at = (size_t)pk->dec_cls * 4 + (pk->action == CGTRACE_FREE) + 2 * (size_t)pk->pre;
	if (at < v->len && ((uint32_t *)v->p)[at]) {
		*out = ((uint32_t *)v->p)[at] - 1;
		return 0;
	}
	int r = mem_class(d, m, mem_shape_kind(m), out);
	if (r < 0)
		return r;
	if (at >= v->len) {
		size_t old = v->len, want = at + 64;
		if (cg_vec_grow(v, sizeof(uint32_t), want) < 0)
			return -ENOMEM;
		memset((uint32_t *)v->p + old, 0, (want - old) * sizeof(uint32_t));
		v->len = want;
	}
	((uint32_t *)v->p)[at] = *out + 1;
	return 0;
}

int cg_doc_add_packed(struct cgtrace_doc *d, const struct cg_rec_memory *m,
		      const struct cg_doc_packed *pk)
{
	struct cg_sink_mem x = {
		.ts = pk->ts,
		.bytes = pk->bytes,
		.stack = pk->stack,
		.addr = pk->addr,
		.shape = CG_SHAPE_BYTES,
		.action = pk->action,
	};
	int r = packed_class(d, m, pk, &x.cls);
	if (r < 0)
		return r;
	if (pk->vmm)
		x.id = m->tensor_id;
	x.index = d->memory_seen++;
	return d->sink.ops->memory(d->sink.state, &x);
}

void cg_doc_in_order(struct cgtrace_doc *d)
{
	if (d->sink.ops)
		d->sink.ops->in_order(d->sink.state);
}

static int add_memory(struct cgtrace_doc *d, const struct cg_rec_memory *m, char *err,
		      size_t errlen)
{
	uint8_t shape_kind = mem_shape_kind(m);
	if (d->sink.ops)
		return stream_memory(d, m, shape_kind, err, errlen);
	uint32_t stack = 0;
	if (cg_doc_stacks_in(m)) {
		int r = cg_doc_stacks_add(d, m, d->memory.len, &stack, err, errlen);
		if (r < 0)
			return r;
	}
	struct cg_mem rec = {
		.timestamp_ns = m->timestamp_ns,
		.bytes = m->bytes,
		.tensor_id = intern(d, m->tensor_id),
	};
	if (d->pool.err)
		return d->pool.err;
	int r = mem_class(d, m, shape_kind, &rec.cls);
	if (r < 0)
		return r;
	struct cg_mem *slot = CG_VEC_PUSH(&d->memory, struct cg_mem);
	if (!slot)
		return -ENOMEM;
	*slot = rec;
	if (stack && (r = cg_doc_stacks_set_mem(d, d->memory.len - 1, stack)) < 0)
		return r;
	if (m->cgprobe_device_uuid.p) {
		r = add_identity(d, cg_doc_class(d, rec.cls)->device, &IDENTITY_OF(m));
		if (r < 0)
			return r;
	}
	return shape_kind == CG_SHAPE_OTHER ? mem_shape(d, m) : 0;
}

static int add_str_list(struct cgtrace_doc *d, const struct cg_sv *v, uint32_t n, uint32_t *out)
{
	if (n == 0) {
		*out = 0;
		return 0;
	}
	size_t at = d->str_lists.len;
	int r = cg_vec_grow(&d->str_lists, sizeof(uint32_t), at + n + 1);
	if (r < 0)
		return r;
	uint32_t *w = (uint32_t *)d->str_lists.p + at;
	w[0] = n;
	for (uint32_t i = 0; i < n; i++)
		w[i + 1] = intern(d, v[i]);
	d->str_lists.len = at + n + 1;
	*out = (uint32_t)at;
	return d->pool.err;
}

/* Tags hold pool ids until cg_doc_finish turns them into pointers. */
static int add_meta(struct cgtrace_doc *d, const struct cg_rec_meta *m)
{
	struct cg_meta *o = &d->meta;
	o->schema = intern(d, m->schema);
	o->run_id = intern(d, m->run_id);
	o->correlation_id = intern(d, m->correlation_id);
	o->entrypoint = intern(d, m->entrypoint);
	o->timestamp = intern(d, m->timestamp);
	o->device = intern(d, m->device);
	o->candle_version = intern(d, m->candle_version);
	o->phase = m->phase;
	o->timing_mode = m->timing_mode;
	o->mrds = m->measured_region_device_synchronized;
	o->capture_step = m->capture_step;
	o->warmup_steps = m->warmup_steps;
	if (m->n_tags) {
		o->tags = calloc(m->n_tags, sizeof(*o->tags));
		if (!o->tags)
			return -ENOMEM;
	}
	for (uint32_t i = 0; i < m->n_tags; i++) {
		uint32_t k = intern(d, m->tags[i].key), v = intern(d, m->tags[i].value);
		o->tags[i].key = (const char *)(uintptr_t)k;
		o->tags[i].value = (const char *)(uintptr_t)v;
	}
	o->n_tags = m->n_tags;
	cg_doc_py_meta(d, m);
	return d->pool.err;
}

/* A parameter mark's ranges kept as [start, end) pairs; its index + 1, or -ENOMEM. */
static long add_mark(struct cgtrace_doc *d, const struct cg_rec_span_start *s)
{
	size_t first = d->mark_ranges.len;
	if (d->marks.len >= UINT32_MAX - 1 || first + s->n_parameters > UINT32_MAX ||
	    cg_vec_grow(&d->mark_ranges, sizeof(uint64_t), first + s->n_parameters) < 0)
		return -ENOMEM;
	struct cg_doc_mark *m = CG_VEC_PUSH(&d->marks, struct cg_doc_mark);
	if (!m)
		return -ENOMEM;
	*m = (struct cg_doc_mark){(uint32_t)first, s->n_parameters / 2};
	uint64_t *r = (uint64_t *)d->mark_ranges.p + first;
	for (uint32_t i = 0; i < s->n_parameters; i += 2) {
		r[i] = s->parameters[i];
		r[i + 1] = s->parameters[i] + s->parameters[i + 1];
	}
	d->mark_ranges.len = first + s->n_parameters;
	return (long)d->marks.len;
}

static int add_span_start(struct cgtrace_doc *d, const struct cg_rec_span_start *s, char *err,
			  size_t errlen)
{
	uint32_t id = intern(d, s->id);
	if (d->pool.err)
		return d->pool.err;
	uint32_t pos = UINT32_MAX, val;
	if (cg_map_next(&d->build->span_by_id, id, &pos, &val))
		return cg_rule_span_start(s, err, errlen);
	int r = cg_rule_span_training(s, err, errlen);
	long mark = r == 0 && s->n_parameters ? add_mark(d, s) : 0;
	if (r < 0 || mark < 0)
		return r < 0 ? r : (int)mark;
	struct cg_span *sp = CG_VEC_PUSH(&d->spans, struct cg_span);
	if (!sp)
		return -ENOMEM;
	*sp = (struct cg_span){
		.id = id,
		.parent_id = intern(d, s->parent_id),
		.name = intern(d, s->name),
		.kind = s->span_kind,
		.step = s->step,
		.measured = s->measured,
		.has_thread = s->has_thread,
		.thread = s->cgprobe_thread,
		.thread_name = intern(d, s->cgprobe_thread_name),
		.start_ns = s->start_ns,
		.update = s->has_update ? s->cgprobe_update : 0,
		.phase = intern(d, s->cgprobe_phase),
		.mark = (uint32_t)mark,
	};
	if (s->has_rank || s->has_world_size) {
		struct cg_doc_rank *rk = CG_VEC_PUSH(&d->ranks, struct cg_doc_rank);
		if (!rk)
			return -ENOMEM;
		*rk = (struct cg_doc_rank){
			.span = (uint32_t)(d->spans.len - 1),
			.has_rank = s->has_rank,
			.has_world = s->has_world_size,
			.rank = s->cgprobe_rank,
			.world = s->cgprobe_world_size,
		};
	}
	r = cg_map_put(&d->build->span_by_id, id, (uint32_t)(d->spans.len - 1));
	if (r == 0 && d->sink.ops && d->sink.ops->span)
		r = d->sink.ops->span(d->sink.state, sp, false);
	return r ? r : d->pool.err;
}

static int add_span_end(struct cgtrace_doc *d, const struct cg_rec_span_end *e, char *err,
			size_t errlen)
{
	uint32_t id = intern(d, e->id);
	if (d->pool.err)
		return d->pool.err;
	uint32_t pos = UINT32_MAX, val;
	bool known = cg_map_next(&d->build->span_by_id, id, &pos, &val);
	struct cg_span *sp = known ? CG_VEC_AT(&d->spans, struct cg_span, val) : NULL;
	int r = cg_rule_span_end(e, sp, err, errlen);
	if (r < 0)
		return r;
	sp->closed = true;
	sp->duration_ns = e->duration_ns;
	if (d->sink.ops && d->sink.ops->span)
		return d->sink.ops->span(d->sink.state, sp, true);
	return 0;
}

static int add_op(struct cgtrace_doc *d, const struct cg_rec_op *o)
{
	struct cg_op op = {
		.span_id = intern(d, o->span_id),
		.op_name = intern(d, o->op_name),
		.output = intern(d, o->output),
		.dtype = intern(d, o->dtype),
		.duration_ns = o->duration_ns,
		.timestamp_ns = o->timestamp_ns,
		.storage_bytes = o->has_storage_bytes
					 ? o->storage_bytes
					 : cgtrace_storage_bytes(o->shape, o->ndim, o->dtype.p, o->dtype.n),
		.input_storage_bytes = o->input_storage_bytes,
	};
	uint16_t dev;
	int r = device_index(d, o->device, &dev);
	if (r == 0)
		r = shape_id(d, o->shape, o->ndim, NULL, &op.shape);
	if (r == 0)
		r = add_str_list(d, o->inputs, o->n_inputs, &op.inputs);
	if (r < 0)
		return r;
	op.device = dev;
	struct cg_op *slot = CG_VEC_PUSH(&d->ops, struct cg_op);
	if (!slot)
		return -ENOMEM;
	*slot = op;
	return d->pool.err;
}

static int add_tensor(struct cgtrace_doc *d, const struct cg_rec_tensor *t)
{
	struct cg_tensor tr = {
		.span_id = intern(d, t->span_id),
		.tensor_id = intern(d, t->tensor_id),
		.dtype = intern(d, t->dtype),
		.requires_grad = t->requires_grad,
		.category = t->category,
		.storage_bytes = t->has_storage_bytes
					 ? t->storage_bytes
					 : cgtrace_storage_bytes(t->shape, t->ndim, t->dtype.p, t->dtype.n),
	};
	uint16_t dev;
	int r = device_index(d, t->device, &dev);
	if (r == 0)
		r = shape_id(d, t->shape, t->ndim, NULL, &tr.shape);
	if (r < 0)
		return r;
	tr.device = dev;
	struct cg_tensor *slot = CG_VEC_PUSH(&d->tensors, struct cg_tensor);
	if (!slot)
		return -ENOMEM;
	*slot = tr;
	return d->pool.err;
}

/* A plain kind's record into its document struct, field by field (doc.h). */
#define BUILD(k, type, ...) BUILD_##type(__VA_ARGS__)
#define BUILD_STR(m, pres) o.m = intern(d, x->m);
#define BUILD_DEV(m, pres) \
	if (r == 0)        \
		r = device_index(d, x->m, &o.m);
#define BUILD_U64(m, pres) o.m = x->m;
#define BUILD_U64_OPT(m, pres, has) \
	o.m = x->m;                 \
	o.has = x->has;
#define BUILD_BOOL(m, pres) o.m = x->m;
#define BUILD_FLAG(m, pres) o.m = x->m;
#define BUILD_ENUM(m, pres, names, def) o.m = x->m;
#define BUILD_F64_OPT(m, pres, has) BUILD_U64_OPT(m, pres, has)

#define ADD_PLAIN(k, kind, type, vec, f)                                                           \
	static int add_##k(struct cgtrace_doc *d, const struct cg_rec_##k *x)                      \
	{                                                                                          \
		struct type o = {0};                                                               \
		int r = 0;                                                                         \
		CG_FIELDS_##f(BUILD, k)                                                            \
		if (r < 0)                                                                         \
			return r;                                                                  \
		struct type *slot = CG_VEC_PUSH(&d->vec, struct type);                             \
		if (!slot)                                                                         \
			return -ENOMEM;                                                            \
		*slot = o;                                                                         \
		return d->pool.err;                                                                \
	}
CG_DOC_PLAIN_KINDS(ADD_PLAIN)

/* The checkpoint itself is a plain kind; its identity fields go to the device table. */
static int add_checkpoint(struct cgtrace_doc *d, const struct cg_rec_device_memory *x)
{
	int r = add_device_memory(d, x);
	if (r < 0)
		return r;
	const struct cg_devmem *c = CG_VEC_AT(&d->devmem, struct cg_devmem, d->devmem.len - 1);
	uint16_t dev = c->device;
	/* A streamed document hands a checkpoint on, and keeps those of an OOM. */
	if (d->sink.ops) {
		d->devmem_seen++;
		r = d->sink.ops->checkpoint(d->sink.state, dev, x);
		if (r < 0)
			return r;
		if (!x->has_oom_request)
			d->devmem.len--;
	}
	return x->cgprobe_device_uuid.p ? add_identity(d, dev, &IDENTITY_OF(x)) : 0;
}

int cg_doc_span_step(const struct cgtrace_doc *d, uint32_t span_id)
{
	uint32_t pos = UINT32_MAX, val;
	if (!d->build) {
		/* Finished: the spans are sorted, the table gone. */
		long s = cg_doc_find_span(d, span_id);
		return s < 0 ? -1 : CG_VEC_AT(&d->spans, struct cg_span, s)->step;
	}
	if (span_id == CG_STR_NONE || !cg_map_next(&d->build->span_by_id, span_id, &pos, &val))
		return -1;
	return CG_VEC_AT(&d->spans, struct cg_span, val)->step;
}

static size_t record_count(const struct cgtrace_doc *d)
{
	return d->spans.len + d->ops.len + d->tensors.len + d->memory.len + d->devmem.len +
	       d->grads.len + d->edges.len + d->devinfo.len +
	       d->memory_seen + d->devmem_seen;
}

int cg_doc_add(struct cgtrace_doc *d, const struct cg_rec *r, char *err, size_t errlen)
{
	int ret;

	if (r->kind == CGTRACE_KIND_META) {
		ret = cg_rule_meta(d->has_meta, record_count(d), &r->u.meta, err, errlen);
		if (ret < 0)
			return ret;
		d->has_meta = true;
		ret = add_meta(d, &r->u.meta);
	} else {
		switch (r->kind) {
		case CGTRACE_KIND_SPAN_START:
			ret = add_span_start(d, &r->u.span_start, err, errlen);
			break;
		case CGTRACE_KIND_SPAN_END:
			ret = add_span_end(d, &r->u.span_end, err, errlen);
			break;
		case CGTRACE_KIND_OP:
			ret = add_op(d, &r->u.op);
			break;
		case CGTRACE_KIND_TENSOR:
			ret = add_tensor(d, &r->u.tensor);
			break;
		case CGTRACE_KIND_MEMORY:
			ret = add_memory(d, &r->u.memory, err, errlen);
			break;
		case CGTRACE_KIND_DEVICE_MEMORY:
			ret = add_checkpoint(d, &r->u.device_memory);
			break;
		case CGTRACE_KIND_GRADIENT:
			ret = add_gradient(d, &r->u.gradient);
			break;
		case CGTRACE_KIND_EDGE:
			ret = add_edge(d, &r->u.edge);
			break;
		case CGTRACE_KIND_DEVICE_INFO:
			ret = add_device_info(d, &r->u.device_info);
			break;
		default:
			ret = cg_rule_kind(err, errlen);
			break;
		}
	}
	return ret == -EBADMSG ? ret : cg_rule_errno(ret, err, errlen);
}

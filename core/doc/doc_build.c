/* SPDX-License-Identifier: MIT */
/*
 * Document reconstruction: the seed's TraceDocument::from_events rules,
 * applied one record at a time so the reader can name the offending line.
 */
#include "doc.h"
#include "export.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bigmem.h"
#include "cgtrace.h"

/* A small open-addressing map from a 64-bit key to a 32-bit value. */
struct cg_map {
	uint64_t *keys; /* key + 1, 0 = empty */
	uint32_t *vals;
	uint32_t mask;
	uint32_t count;
};

/* Recently seen memory classes by their raw fields: most records repeat one. */
#define CLASS_CACHE 16
#define CACHE_STR 48

struct class_cache_entry {
	uint8_t lens[4]; /* span, op (255 = absent), dtype, device */
	uint8_t action, category, managed, shape_kind;
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
};

static uint64_t mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	x ^= x >> 33;
	return x;
}

static int map_grow(struct cg_map *m)
{
	uint32_t n = m->mask ? (m->mask + 1) * 2 : 64;
	uint64_t *keys = calloc(n, sizeof(*keys));
	uint32_t *vals = malloc((size_t)n * sizeof(*vals));
	if (!keys || !vals) {
		free(keys);
		free(vals);
		return -ENOMEM;
	}
	for (uint32_t i = 0; m->mask && i <= m->mask; i++) {
		if (!m->keys[i])
			continue;
		uint32_t j = (uint32_t)mix64(m->keys[i] - 1) & (n - 1);
		while (keys[j])
			j = (j + 1) & (n - 1);
		keys[j] = m->keys[i];
		vals[j] = m->vals[i];
	}
	free(m->keys);
	free(m->vals);
	m->keys = keys;
	m->vals = vals;
	m->mask = n - 1;
	return 0;
}

static void map_free(struct cg_map *m)
{
	free(m->keys);
	free(m->vals);
	memset(m, 0, sizeof(*m));
}

/*
 * Iterates the values stored under key: *pos starts at UINT32_MAX. Several
 * values may share one key (hash-consing tables store hashes as keys).
 */
static bool map_next(const struct cg_map *m, uint64_t key, uint32_t *pos, uint32_t *val)
{
	if (!m->mask)
		return false;
	uint32_t i = *pos == UINT32_MAX ? (uint32_t)mix64(key) & m->mask : (*pos + 1) & m->mask;
	for (;; i = (i + 1) & m->mask) {
		if (!m->keys[i])
			return false;
		if (m->keys[i] == key + 1) {
			*pos = i;
			*val = m->vals[i];
			return true;
		}
	}
}

static int map_put(struct cg_map *m, uint64_t key, uint32_t val)
{
	if (!m->mask || (m->count + 1) * 4 >= (m->mask + 1) * 3) {
		int r = map_grow(m);
		if (r < 0)
			return r;
	}
	uint32_t i = (uint32_t)mix64(key) & m->mask;
	while (m->keys[i])
		i = (i + 1) & m->mask;
	m->keys[i] = key + 1;
	m->vals[i] = val;
	m->count++;
	return 0;
}

int cg_vec_grow(struct cg_vec *v, size_t elem, size_t want)
{
	if (want <= v->cap)
		return 0;
	size_t cap = v->cap ? v->cap : 16;
	while (cap < want)
		cap += cap / 2 + 16;
	void *p = cg_big_realloc(v->p, v->cap * elem, cap * elem);
	if (!p)
		return -ENOMEM;
	v->p = p;
	v->cap = cap;
	return 0;
}

void cg_vec_free(struct cg_vec *v, size_t elem)
{
	cg_big_free(v->p, v->cap * elem);
	memset(v, 0, sizeof(*v));
}

struct cgtrace_doc *cg_doc_new(void)
{
	struct cgtrace_doc *d = calloc(1, sizeof(*d));
	if (!d)
		return NULL;
	d->build = calloc(1, sizeof(*d->build));
	if (!d->build) {
		free(d);
		return NULL;
	}
	cg_strpool_init(&d->pool);
	/* Shape ids 0 and 1 are reserved for [] and [bytes]. */
	if (cg_vec_grow(&d->shapes, sizeof(uint64_t), 2) == 0) {
		((uint64_t *)d->shapes.p)[0] = 0;
		((uint64_t *)d->shapes.p)[1] = 0;
		d->shapes.len = 2;
	}
	/* Offset 0 of str_lists is the empty list. */
	uint32_t *empty = CG_VEC_PUSH(&d->str_lists, uint32_t);
	if (empty)
		*empty = 0;
	return d;
}

static void build_free(struct cg_build *b)
{
	if (!b)
		return;
	map_free(&b->span_by_id);
	map_free(&b->class_by_key);
	map_free(&b->shape_by_hash);
	map_free(&b->device_by_str);
	free(b);
}

CG_EXPORT void cgtrace_doc_free(struct cgtrace_doc *d)
{
	if (!d)
		return;
	build_free(d->build);
	cg_strpool_fini(&d->pool);
	free(d->meta.tags);
	free(d->str_ptrs);
	cg_vec_free(&d->spans, sizeof(struct cg_span));
	cg_vec_free(&d->ops, sizeof(struct cg_op));
	cg_vec_free(&d->tensors, sizeof(struct cg_tensor));
	cg_vec_free(&d->memory, sizeof(struct cg_mem));
	cg_vec_free(&d->classes, sizeof(struct cg_mem_class));
	cg_vec_free(&d->mem_shapes, sizeof(uint32_t));
	cg_vec_free(&d->devmem, sizeof(struct cg_devmem));
	cg_vec_free(&d->grads, sizeof(struct cg_grad));
	cg_vec_free(&d->edges, sizeof(struct cg_edge));
	cg_vec_free(&d->devinfo, sizeof(struct cg_devinfo));
	cg_vec_free(&d->devices, sizeof(uint32_t));
	cg_vec_free(&d->shapes, sizeof(uint64_t));
	cg_vec_free(&d->str_lists, sizeof(uint32_t));
	free(d);
}

#define FAIL(...) (snprintf(err, errlen, __VA_ARGS__), -EBADMSG)

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
	if (map_next(&d->build->device_by_str, id, &pos, &val)) {
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
	return map_put(&d->build->device_by_str, id, *out);
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
		h = mix64(h ^ dims[i]) + i;
	uint32_t pos = UINT32_MAX, val;
	const uint64_t *base = d->shapes.p;
	while (map_next(&d->build->shape_by_hash, h, &pos, &val)) {
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
	return map_put(&d->build->shape_by_hash, h, (uint32_t)at);
}

const uint64_t *cg_doc_shape(const struct cgtrace_doc *d, uint32_t shape, const uint64_t *bytes,
			     size_t *ndim)
{
	if (shape == CG_SHAPE_EMPTY) {
		*ndim = 0;
		return NULL;
	}
	if (shape == CG_SHAPE_BYTES) {
		*ndim = 1;
		return bytes;
	}
	const uint64_t *base = d->shapes.p;
	*ndim = (size_t)base[shape];
	return base + shape + 1;
}

static int class_id(struct cgtrace_doc *d, const struct cg_mem_class *c, uint32_t *out)
{
	uint64_t h = mix64(((uint64_t)c->span_id << 32) ^ c->op_name);
	h = mix64(h ^ ((uint64_t)c->dtype << 24) ^ ((uint64_t)c->device << 8) ^
		  ((uint64_t)c->shape_kind << 6) ^ ((uint64_t)c->action << 4) ^
		  ((uint64_t)c->category << 1) ^ c->managed);
	uint32_t pos = UINT32_MAX, val;
	while (map_next(&d->build->class_by_key, h, &pos, &val)) {
		const struct cg_mem_class *e = cg_doc_class(d, val);
		if (e->span_id == c->span_id && e->op_name == c->op_name && e->dtype == c->dtype &&
		    e->device == c->device && e->action == c->action &&
		    e->category == c->category && e->managed == c->managed &&
		    e->shape_kind == c->shape_kind) {
			*out = val;
			return 0;
		}
	}
	struct cg_mem_class *slot = CG_VEC_PUSH(&d->classes, struct cg_mem_class);
	if (!slot || d->classes.len > UINT32_MAX)
		return -ENOMEM;
	*slot = *c;
	*out = (uint32_t)(d->classes.len - 1);
	return map_put(&d->build->class_by_key, h, *out);
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
	    e->shape_kind != shape_kind)
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

static int add_memory(struct cgtrace_doc *d, const struct cg_rec_memory *m)
{
	uint8_t shape_kind = mem_shape_kind(m);
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
	return shape_kind == CG_SHAPE_OTHER ? mem_shape(d, m) : 0;
}

uint32_t cg_doc_mem_shape(const struct cgtrace_doc *d, size_t i)
{
	const struct cg_mem *m = CG_VEC_AT(&d->memory, struct cg_mem, i);
	uint8_t kind = cg_doc_class(d, m->cls)->shape_kind;
	if (kind != CG_SHAPE_OTHER)
		return kind;
	return *CG_VEC_AT(&d->mem_shapes, uint32_t, i);
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

static int tag_cmp(const void *a, const void *b)
{
	const struct cgtrace_tag *x = a, *y = b;
	return strcmp(x->key, y->key);
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
	return d->pool.err;
}

static int add_span_start(struct cgtrace_doc *d, const struct cg_rec_span_start *s, char *err,
			  size_t errlen)
{
	uint32_t id = intern(d, s->id);
	if (d->pool.err)
		return d->pool.err;
	uint32_t pos = UINT32_MAX, val;
	if (map_next(&d->build->span_by_id, id, &pos, &val))
		return FAIL("duplicate span_start id `%.*s`", (int)s->id.n, s->id.p);
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
		.start_ns = s->start_ns,
	};
	int r = map_put(&d->build->span_by_id, id, (uint32_t)(d->spans.len - 1));
	return r ? r : d->pool.err;
}

static int add_span_end(struct cgtrace_doc *d, const struct cg_rec_span_end *e, char *err,
			size_t errlen)
{
	uint32_t id = intern(d, e->id);
	if (d->pool.err)
		return d->pool.err;
	uint32_t pos = UINT32_MAX, val;
	if (!map_next(&d->build->span_by_id, id, &pos, &val))
		return FAIL("span_end for unknown span `%.*s`", (int)e->id.n, e->id.p);
	struct cg_span *sp = CG_VEC_AT(&d->spans, struct cg_span, val);
	if (sp->closed)
		return FAIL("duplicate span_end for `%.*s`", (int)e->id.n, e->id.p);
	sp->closed = true;
	sp->duration_ns = e->duration_ns;
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

static int add_devmem(struct cgtrace_doc *d, const struct cg_rec_device_memory *m)
{
	struct cg_devmem dm = {
		.timestamp_ns = m->timestamp_ns,
		.used_bytes = m->used_bytes,
		.free_bytes = m->free_bytes,
		.reserved_bytes = m->reserved_bytes,
		.oom_request_bytes = m->oom_request_bytes,
		.has_reserved = m->has_reserved,
		.has_oom_request = m->has_oom_request,
	};
	int r = device_index(d, m->device, &dm.device);
	if (r < 0)
		return r;
	struct cg_devmem *slot = CG_VEC_PUSH(&d->devmem, struct cg_devmem);
	if (!slot)
		return -ENOMEM;
	*slot = dm;
	return 0;
}

static int add_gradient(struct cgtrace_doc *d, const struct cg_rec_gradient *g)
{
	struct cg_grad *slot = CG_VEC_PUSH(&d->grads, struct cg_grad);
	if (!slot)
		return -ENOMEM;
	*slot = (struct cg_grad){
		.event_id = intern(d, g->event_id),
		.root = intern(d, g->root),
		.key = intern(d, g->key),
		.state = g->state,
		.has_norm = g->has_norm,
		.norm = g->norm,
	};
	return d->pool.err;
}

static int add_edge(struct cgtrace_doc *d, const struct cg_rec_edge *e)
{
	struct cg_edge *slot = CG_VEC_PUSH(&d->edges, struct cg_edge);
	if (!slot)
		return -ENOMEM;
	*slot = (struct cg_edge){
		.from_span = intern(d, e->from_span),
		.to_span = intern(d, e->to_span),
		.duration_ns = e->duration_ns,
	};
	return d->pool.err;
}

static int add_devinfo(struct cgtrace_doc *d, const struct cg_rec_device_info *i)
{
	struct cg_devinfo di = {
		.uuid = intern(d, i->uuid),
		.name = intern(d, i->name),
		.has_total = i->has_total,
		.total_bytes = i->total_bytes,
	};
	int r = device_index(d, i->device, &di.device);
	if (r < 0)
		return r;
	struct cg_devinfo *slot = CG_VEC_PUSH(&d->devinfo, struct cg_devinfo);
	if (!slot)
		return -ENOMEM;
	*slot = di;
	return d->pool.err;
}

static size_t record_count(const struct cgtrace_doc *d)
{
	return d->spans.len + d->ops.len + d->tensors.len + d->memory.len + d->devmem.len +
	       d->grads.len + d->edges.len + d->devinfo.len;
}

int cg_doc_add(struct cgtrace_doc *d, const struct cg_rec *r, char *err, size_t errlen)
{
	int ret;

	if (r->kind == CGTRACE_KIND_META) {
		if (d->has_meta)
			return FAIL("duplicate meta record; only one meta record is allowed");
		if (record_count(d) > 0)
			return FAIL("meta record must be the first non-empty trace record");
		if (!cg_sv_eq(r->u.meta.schema, CG_SV_LIT(CGTRACE_SCHEMA)))
			return FAIL("unsupported trace schema \"%.*s\"; expected \"%s\"",
				    (int)(r->u.meta.schema.n > 200 ? 200 : r->u.meta.schema.n),
				    r->u.meta.schema.p, CGTRACE_SCHEMA);
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
			ret = add_memory(d, &r->u.memory);
			break;
		case CGTRACE_KIND_DEVICE_MEMORY:
			ret = add_devmem(d, &r->u.device_memory);
			break;
		case CGTRACE_KIND_GRADIENT:
			ret = add_gradient(d, &r->u.gradient);
			break;
		case CGTRACE_KIND_EDGE:
			ret = add_edge(d, &r->u.edge);
			break;
		case CGTRACE_KIND_DEVICE_INFO:
			ret = add_devinfo(d, &r->u.device_info);
			break;
		default:
			return FAIL("unknown record kind");
		}
	}
	if (ret == -EBADMSG)
		return ret;
	if (ret == -E2BIG)
		return FAIL("trace exceeds a reader limit (65535 devices, 4 GiB of distinct "
			    "strings or shapes)");
	if (ret < 0)
		return FAIL("%s", strerror(-ret));
	return 0;
}

static int span_cmp(const void *a, const void *b, void *doc)
{
	const struct cg_span *x = a, *y = b;
	const struct cgtrace_doc *d = doc;
	return cg_strpool_cmp(&d->pool, x->id, y->id);
}

int cg_doc_finish(struct cgtrace_doc *d, char *err, size_t errlen)
{
	build_free(d->build);
	d->build = NULL;
	if (!d->has_meta)
		return FAIL("trace stream is missing a meta record with run metadata");
	if (d->spans.len)
		qsort_r(d->spans.p, d->spans.len, sizeof(struct cg_span), span_cmp, d);
	for (size_t i = 0; i < d->meta.n_tags; i++) {
		struct cgtrace_tag *t = &d->meta.tags[i];
		t->key = cg_doc_str(d, (uint32_t)(uintptr_t)t->key);
		t->value = cg_doc_str(d, (uint32_t)(uintptr_t)t->value);
	}
	if (d->meta.n_tags)
		qsort(d->meta.tags, d->meta.n_tags, sizeof(*d->meta.tags), tag_cmp);
	/* The pool no longer moves: op inputs can be handed out as pointer arrays. */
	d->str_ptrs = calloc(d->str_lists.len + 1, sizeof(*d->str_ptrs));
	if (!d->str_ptrs)
		return FAIL("out of memory");
	const uint32_t *ids = d->str_lists.p;
	for (size_t i = 1; i < d->str_lists.len; i += ids[i] + 1)
		for (uint32_t j = 1; j <= ids[i]; j++)
			d->str_ptrs[i + j] = cg_doc_str(d, ids[i + j]);
	return 0;
}

long cg_doc_find_span(const struct cgtrace_doc *d, uint32_t id)
{
	if (id == CG_STR_NONE)
		return -1;
	const struct cg_span *s = d->spans.p;
	size_t lo = 0, hi = d->spans.len;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = cg_strpool_cmp(&d->pool, s[mid].id, id);
		if (c == 0)
			return (long)mid;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

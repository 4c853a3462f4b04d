/* SPDX-License-Identifier: MIT */
/*
 * The document as records (cg_doc_records, which the JSONL and compact
 * exports share), in the format's stream order: meta, spans by id (each
 * start followed by its end when closed), then ops, tensors, memory,
 * device memory, gradients and edges, each in file order (the last three
 * in the order of CG_DOC_PLAIN_KINDS). Device identities are no records of
 * their own: they ride on the first record written that names the device.
 */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "buf.h"
#include "doc.h"
#include "doc_pycodes.h"
#include "doc_records.h"
#include "doc_stacks.h"
#include "doc_view.h"
#include "export.h"
#include "hash.h"
#include "jsonl_format.h"
#include "schema.h"
#include "u64map.h"
#include "write_all.h"

struct out {
	/* Each record goes to fn; the first error it returns sticks and ends the walk. */
	int (*fn)(void *user, const struct cg_rec *r);
	void *user;
	int err;
	/* Identities not yet written: devinfo index by the hash of the device's name. */
	const struct cgtrace_doc *doc;
	struct cg_map ident_by_dev;
	bool *ident_written;
	size_t ident_pending;
};

static void identify(struct out *o, struct cg_rec *r);

static void emit(struct out *o, struct cg_rec *r)
{
	if (o->err)
		return;
	if (o->ident_pending &&
	    (r->kind == CGTRACE_KIND_MEMORY || r->kind == CGTRACE_KIND_DEVICE_MEMORY))
		identify(o, r);
	o->err = o->fn(o->user, r);
}

static struct cg_sv sv(const struct cgtrace_doc *d, uint32_t id)
{
	return cg_strpool_sv(&d->pool, id);
}

static struct cg_sv dev_sv(const struct cgtrace_doc *d, uint32_t dev)
{
	return sv(d, cg_doc_device_str(d, (uint16_t)dev));
}

static uint64_t dev_key(struct cg_sv dev)
{
	return cg_hash_bytes(dev.p, dev.n);
}

static int identities_init(struct out *o, const struct cgtrace_doc *d)
{
	o->doc = d;
	o->ident_written = calloc(d->devinfo.len ? d->devinfo.len : 1, sizeof(bool));
	if (!o->ident_written)
		return -ENOMEM;
	for (size_t i = 0; i < d->devinfo.len; i++) {
		const struct cg_devinfo *e = CG_VEC_AT(&d->devinfo, struct cg_devinfo, i);
		int r = cg_map_put(&o->ident_by_dev, dev_key(dev_sv(d, e->device)), (uint32_t)i);
		if (r < 0)
			return r;
	}
	o->ident_pending = d->devinfo.len;
	return 0;
}

#define SET_IDENTITY(x, e)                                                                         \
	((x)->cgprobe_device_uuid = sv(d, (e)->uuid),                                              \
	 (x)->cgprobe_device_name = sv(d, (e)->name), (x)->has_device_total = (e)->has_total,      \
	 (x)->cgprobe_device_total_bytes = (e)->total_bytes)

/*
 * A strict trace/6 reader rejects unknown kinds, so an identity leaves as
 * fields of the first record, in output order, that names its device,
 * whatever that order is. One no such record names goes last (emit_unridden).
 */
static void identify(struct out *o, struct cg_rec *r)
{
	const struct cgtrace_doc *d = o->doc;
	bool mem = r->kind == CGTRACE_KIND_MEMORY;
	struct cg_sv dev = mem ? r->u.memory.device : r->u.device_memory.device;
	uint32_t pos = UINT32_MAX, i;
	while (cg_map_next(&o->ident_by_dev, dev_key(dev), &pos, &i)) {
		const struct cg_devinfo *e = CG_VEC_AT(&d->devinfo, struct cg_devinfo, i);
		if (!cg_sv_eq(dev_sv(d, e->device), dev))
			continue;
		if (o->ident_written[i])
			return;
		o->ident_written[i] = true;
		o->ident_pending--;
		if (mem)
			SET_IDENTITY(&r->u.memory, e);
		else
			SET_IDENTITY(&r->u.device_memory, e);
		return;
	}
}

static int emit_meta(struct out *o, const struct cgtrace_doc *d)
{
	const struct cg_meta *m = &d->meta;
	struct cg_tagv *tags = calloc(m->n_tags ? m->n_tags : 1, sizeof(*tags));
	if (!tags)
		return -ENOMEM;
	for (size_t i = 0; i < m->n_tags; i++) {
		tags[i].key = cg_sv_c(m->tags[i].key);
		tags[i].value = cg_sv_c(m->tags[i].value);
	}
	struct cg_rec r = {.kind = CGTRACE_KIND_META};
	r.u.meta = (struct cg_rec_meta){
		.schema = sv(d, m->schema),
		.run_id = sv(d, m->run_id),
		.correlation_id = sv(d, m->correlation_id),
		.entrypoint = sv(d, m->entrypoint),
		.timestamp = sv(d, m->timestamp),
		.device = sv(d, m->device),
		.candle_version = sv(d, m->candle_version),
		.phase = m->phase,
		.timing_mode = m->timing_mode,
		.measured_region_device_synchronized = m->mrds,
		.capture_step = m->capture_step,
		.warmup_steps = m->warmup_steps,
		.tags = tags,
		.n_tags = (uint32_t)m->n_tags,
	};
	emit(o, &r);
	free(tags);
	return 0;
}

/* A mark's [start, end) pairs back to the record's address and length pairs, in scratch. */
static const uint64_t *mark_pairs(struct out *o, const struct cgtrace_doc *d, uint32_t mark,
				  struct cg_vec *scratch, uint32_t *n)
{
	const struct cg_doc_mark *m = CG_VEC_AT(&d->marks, struct cg_doc_mark, mark - 1);
	const uint64_t *r = (const uint64_t *)d->mark_ranges.p + m->first;
	if (cg_vec_grow(scratch, sizeof(uint64_t), 2 * (size_t)m->n) < 0) {
		o->err = -ENOMEM;
		*n = 0;
		return NULL;
	}
	uint64_t *p = scratch->p;
	for (uint32_t i = 0; i < 2 * m->n; i += 2) {
		p[i] = r[i];
		p[i + 1] = r[i + 1] - r[i];
	}
	*n = 2 * m->n;
	return p;
}

static void emit_spans(struct out *o, const struct cgtrace_doc *d)
{
	struct cg_vec scratch = {0};
	size_t next_rank = 0; /* d->ranks is in span order */
	for (size_t i = 0; i < d->spans.len; i++) {
		const struct cg_span *s = CG_VEC_AT(&d->spans, struct cg_span, i);
		struct cg_rec r = {.kind = CGTRACE_KIND_SPAN_START};
		r.u.span_start = (struct cg_rec_span_start){
			.id = sv(d, s->id),
			.parent_id = sv(d, s->parent_id),
			.name = sv(d, s->name),
			.start_ns = s->start_ns,
			.span_kind = s->kind,
			.step = s->step,
			.measured = s->measured,
			.has_thread = s->has_thread,
			.cgprobe_thread = s->thread,
			.cgprobe_thread_name = sv(d, s->thread_name),
			.has_update = s->update != 0,
			.cgprobe_update = s->update,
			.cgprobe_phase = sv(d, s->phase),
		};
		if (next_rank < d->ranks.len &&
		    CG_VEC_AT(&d->ranks, struct cg_doc_rank, next_rank)->span == i) {
			const struct cg_doc_rank *rk =
			    CG_VEC_AT(&d->ranks, struct cg_doc_rank, next_rank++);
			r.u.span_start.has_rank = rk->has_rank;
			r.u.span_start.cgprobe_rank = rk->rank;
			r.u.span_start.has_world_size = rk->has_world;
			r.u.span_start.cgprobe_world_size = rk->world;
		}
		if (s->mark)
			r.u.span_start.parameters =
			    mark_pairs(o, d, s->mark, &scratch, &r.u.span_start.n_parameters);
		emit(o, &r);
		if (!s->closed)
			continue;
		r.kind = CGTRACE_KIND_SPAN_END;
		r.u.span_end = (struct cg_rec_span_end){.id = sv(d, s->id),
							.duration_ns = s->duration_ns};
		emit(o, &r);
	}
	cg_vec_free(&scratch, sizeof(uint64_t));
}

/* Op inputs are stored as ids: views need a scratch array. */
static int emit_ops(struct out *o, const struct cgtrace_doc *d)
{
	struct cg_vec inputs = {0};
	int ret = 0;
	for (size_t i = 0; i < d->ops.len && ret == 0; i++) {
		struct cgtrace_op v;
		cgtrace_doc_op(d, i, &v);
		ret = cg_vec_grow(&inputs, sizeof(struct cg_sv), v.n_inputs);
		for (size_t k = 0; ret == 0 && k < v.n_inputs; k++)
			((struct cg_sv *)inputs.p)[k] = cg_sv_c(v.inputs[k]);
		const struct cg_op *op = CG_VEC_AT(&d->ops, struct cg_op, i);
		struct cg_rec r = {.kind = CGTRACE_KIND_OP};
		r.u.op = (struct cg_rec_op){
			.span_id = sv(d, op->span_id),
			.op_name = sv(d, op->op_name),
			.inputs = inputs.p,
			.n_inputs = (uint32_t)v.n_inputs,
			.output = sv(d, op->output),
			.shape = v.shape,
			.ndim = (uint32_t)v.ndim,
			.dtype = sv(d, op->dtype),
			.device = dev_sv(d, op->device),
			.duration_ns = op->duration_ns,
			.timestamp_ns = op->timestamp_ns,
			.has_storage_bytes = true,
			.storage_bytes = op->storage_bytes,
			.input_storage_bytes = op->input_storage_bytes,
		};
		if (ret == 0)
			emit(o, &r);
	}
	cg_vec_free(&inputs, sizeof(struct cg_sv));
	return ret;
}

static void emit_tensors(struct out *o, const struct cgtrace_doc *d)
{
	for (size_t i = 0; i < d->tensors.len; i++) {
		const struct cg_tensor *t = CG_VEC_AT(&d->tensors, struct cg_tensor, i);
		size_t ndim;
		const uint64_t *shape = cg_doc_shape(d, t->shape, NULL, &ndim);
		struct cg_rec r = {.kind = CGTRACE_KIND_TENSOR};
		r.u.tensor = (struct cg_rec_tensor){
			.span_id = sv(d, t->span_id),
			.tensor_id = sv(d, t->tensor_id),
			.shape = shape,
			.ndim = (uint32_t)ndim,
			.dtype = sv(d, t->dtype),
			.device = dev_sv(d, t->device),
			.requires_grad = t->requires_grad,
			.has_storage_bytes = true,
			.storage_bytes = t->storage_bytes,
			.category = t->category,
		};
		emit(o, &r);
	}
}

/* The module list as record views, ridden by the records that carried them. */
static struct cg_modv *module_views(const struct cgtrace_doc *d)
{
	struct cg_modv *v = calloc(d->modules.len ? d->modules.len : 1, sizeof(*v));
	for (size_t i = 0; v && i < d->modules.len; i++) {
		const struct cgtrace_module *m = &CG_VEC_AT(&d->modules, struct cg_doc_module, i)->m;
		v[i] = (struct cg_modv){.path = cg_sv_c(m->path), .base = m->base, .start = m->start,
					.end = m->end,
					.build_id = m->build_id ? cg_sv_c(m->build_id) : CG_SV_NONE};
	}
	return v;
}

/* The code objects as record views, ridden by the records that carried them. */
static struct cg_pycodev *py_code_views(const struct cgtrace_doc *d)
{
	size_t n = cgtrace_doc_py_code_count(d);
	struct cg_pycodev *v = calloc(n ? n : 1, sizeof(*v));
	for (size_t i = 0; v && i < n; i++) {
		const struct cgtrace_py_code *c = cgtrace_doc_py_code_at(d, i);
		v[i] = (struct cg_pycodev){
		    .id = c->id,
		    .line = c->first_line,
		    .name = cg_sv_c(c->name),
		    .qualname = c->qualname ? cg_sv_c(c->qualname) : CG_SV_NONE,
		    .file = cg_sv_c(c->file),
		    .table = c->table,
		    .table_len = c->table_len,
		    .format = c->format,
		};
	}
	return v;
}

/* Where a record carries a run of the views (modules, code objects): from *next on, those of rec i. */
static size_t carried(size_t *next, size_t n, uint64_t (*rec_of)(const struct cgtrace_doc *, size_t),
		      const struct cgtrace_doc *d, size_t i)
{
	size_t k = *next;
	while (*next < n && rec_of(d, *next) == i)
		(*next)++;
	return *next - k;
}

static uint64_t module_rec(const struct cgtrace_doc *d, size_t k)
{
	return CG_VEC_AT(&d->modules, struct cg_doc_module, k)->rec;
}

/*
 * Memory record i's stack id, its definition on the record that made it
 * (the new frames, and the stack they hang from for a tree definition),
 * its modules. frames: room for the most frames one stack has.
 */
struct carried_views {
	const struct cg_modv *mods;
	const struct cg_pycodev *codes;
	size_t next_mod, next_code;
};

static void memory_stacks(const struct cgtrace_doc *d, size_t i, struct cg_rec_memory *r,
			  struct carried_views *cv, uint64_t *frames)
{
	uint32_t stack = cg_doc_mem_stack(d, i);
	if (stack) {
		const struct cg_stack_def *def = cg_doc_node_def(d, stack);
		r->stack = cg_doc_node_id(d, stack);
		if (cg_doc_def_rec(d, def) == i && stack == def->first_node + def->n) {
			cg_doc_node_frames(d, stack, frames, def->n);
			r->stack_frames = frames;
			r->n_stack_frames = def->n;
			r->has_stack_parent = def->tree;
			r->cgprobe_stack_parent = def->tree ? cg_doc_node_parent_id(d, stack) : 0;
		}
	}
	size_t k = cv->next_mod, n = carried(&cv->next_mod, d->modules.len, module_rec, d, i);
	if (n) {
		r->modules = cv->mods + k;
		r->n_modules = (uint32_t)n;
	}
	k = cv->next_code;
	n = carried(&cv->next_code, cgtrace_doc_py_code_count(d), cg_doc_py_code_rec, d, i);
	if (n) {
		r->py_codes = cv->codes + k;
		r->n_py_codes = (uint32_t)n;
	}
}

static int emit_memory(struct out *o, const struct cgtrace_doc *d)
{
	struct cg_modv *mods = module_views(d);
	struct cg_pycodev *codes = py_code_views(d);
	uint64_t *frames = malloc(CG_STACK_FRAMES_MAX * sizeof(*frames));
	if (!mods || !codes || !frames) {
		free(mods);
		free(codes);
		free(frames);
		return -ENOMEM;
	}
	struct carried_views cv = {.mods = mods, .codes = codes};
	for (size_t i = 0; i < d->memory.len; i++) {
		const struct cg_mem *m = CG_VEC_AT(&d->memory, struct cg_mem, i);
		const struct cg_mem_class *c = cg_doc_class(d, m->cls);
		size_t ndim;
		const uint64_t *shape = cg_doc_shape(d, cg_doc_mem_shape(d, i), &m->bytes, &ndim);
		struct cg_rec r = {.kind = CGTRACE_KIND_MEMORY};
		r.u.memory = (struct cg_rec_memory){
			.timestamp_ns = m->timestamp_ns,
			.tensor_id = sv(d, m->tensor_id),
			.span_id = sv(d, c->span_id),
			.op_name = sv(d, c->op_name),
			.device = dev_sv(d, c->device),
			.bytes = m->bytes,
			.action = c->action,
			.category = c->category,
			.managed = c->managed,
			.cgprobe_preexisting = c->preexisting,
			.shape = shape,
			.ndim = (uint32_t)ndim,
			.dtype = sv(d, c->dtype),
		};
		memory_stacks(d, i, &r.u.memory, &cv, frames);
		emit(o, &r);
	}
	free(mods);
	free(codes);
	free(frames);
	return 0;
}

/* A plain kind's document struct back into a record (doc.h). */
#define REC(k, type, ...) REC_##type(__VA_ARGS__)
#define REC_STR(m, pres) .m = sv(d, x->m),
#define REC_DEV(m, pres) .m = dev_sv(d, x->m),
#define REC_U64(m, pres) .m = x->m,
#define REC_U64_OPT(m, pres, has) .has = x->has, .m = x->m,
#define REC_BOOL(m, pres) .m = x->m,
#define REC_FLAG(m, pres) .m = x->m,
#define REC_ENUM(m, pres, names, def) .m = x->m,
#define REC_F64_OPT(m, pres, has) REC_U64_OPT(m, pres, has)

#define EMIT_PLAIN(k, kind_, type, vec, f)                                                         \
	static void emit_##k(struct out *o, const struct cgtrace_doc *d)                           \
	{                                                                                          \
		for (size_t i = 0; i < d->vec.len; i++) {                                          \
			const struct type *x = CG_VEC_AT(&d->vec, struct type, i);                 \
			struct cg_rec r = {.kind = kind_};                                         \
			r.u.k = (struct cg_rec_##k){CG_FIELDS_##f(REC, k)};                        \
			emit(o, &r);                                                               \
		}                                                                                  \
	}
CG_DOC_PLAIN_KINDS(EMIT_PLAIN)

/*
 * An identity whose device no memory or checkpoint record names has
 * nothing to ride on: it goes last, in the older form, so none is lost.
 */
static void emit_unridden(struct out *o, const struct cgtrace_doc *d)
{
	for (size_t i = 0; o->ident_pending && i < d->devinfo.len; i++) {
		const struct cg_devinfo *e = CG_VEC_AT(&d->devinfo, struct cg_devinfo, i);
		if (o->ident_written[i])
			continue;
		struct cg_rec r = {.kind = CGTRACE_KIND_DEVICE_INFO};
		r.u.device_info = (struct cg_rec_device_info){
			.device = dev_sv(d, e->device),
			.uuid = sv(d, e->uuid),
			.name = sv(d, e->name),
			.total_bytes = e->total_bytes,
			.has_total = e->has_total,
		};
		o->ident_written[i] = true;
		o->ident_pending--;
		emit(o, &r);
	}
}

int cg_doc_records(const struct cgtrace_doc *d, int (*fn)(void *user, const struct cg_rec *r),
		   void *user)
{
	/* A streamed document kept no memory records to export. */
	if (cg_doc_streamed(d))
		return -ENODATA;
	struct out o = {.fn = fn, .user = user};
	int ret = identities_init(&o, d);
	if (ret == 0)
		ret = emit_meta(&o, d);
	if (ret == 0) {
		emit_spans(&o, d);
		ret = emit_ops(&o, d);
	}
	if (ret == 0) {
		emit_tensors(&o, d);
		ret = emit_memory(&o, d);
	}
	if (ret == 0) {
#define CALL_EMIT(k, kind, type, vec, f) emit_##k(&o, d);
		CG_DOC_PLAIN_KINDS(CALL_EMIT)
		emit_unridden(&o, d);
		ret = o.err;
	}
	cg_map_free(&o.ident_by_dev);
	free(o.ident_written);
	return ret;
}

/* The JSONL export: the records through the formatter, written 64 KiB at a time. */
struct jsonl {
	struct cg_buf buf;
	int fd;
	unsigned flags;
};

static int jsonl_flush(struct jsonl *j)
{
	int err = cg_write_all(j->fd, j->buf.p, j->buf.len);
	j->buf.len = 0;
	return err;
}

static int jsonl_rec(void *user, const struct cg_rec *r)
{
	struct jsonl *j = user;
	struct cg_rec strict;
	if (j->flags & CGTRACE_EXPORT_STRICT) {
		if (cg_schema_kind_ext(r->kind))
			return 0;
		strict = *r;
		cg_schema_strip_ext(&strict);
		r = &strict;
	}
	cg_jsonl_format(&j->buf, r);
	if (j->buf.err)
		return j->buf.err;
	return j->buf.len >= (1u << 16) ? jsonl_flush(j) : 0;
}

CG_EXPORT int cgtrace_doc_export_jsonl(const struct cgtrace_doc *d, int fd)
{
	return cgtrace_doc_export_jsonl_flags(d, fd, 0);
}

CG_EXPORT int cgtrace_doc_export_jsonl_flags(const struct cgtrace_doc *d, int fd, unsigned flags)
{
	struct jsonl j = {.fd = fd, .flags = flags};
	int ret = cg_doc_records(d, jsonl_rec, &j);
	if (ret == 0)
		ret = jsonl_flush(&j);
	cg_buf_fini(&j.buf);
	return ret;
}

/* SPDX-License-Identifier: MIT */
/* Read access to a document through the public view structs. */
#include "doc_view.h"

#include "doc.h"
#include "doc_stacks.h"
#include "export.h"

CG_EXPORT size_t cgtrace_doc_count(const struct cgtrace_doc *d, enum cgtrace_kind kind)
{
	switch (kind) {
	case CGTRACE_KIND_META:
		return d->has_meta;
	case CGTRACE_KIND_SPAN_START:
		return d->spans.len;
	case CGTRACE_KIND_SPAN_END: {
		size_t n = 0;
		for (size_t i = 0; i < d->spans.len; i++)
			n += CG_VEC_AT(&d->spans, struct cg_span, i)->closed;
		return n;
	}
	case CGTRACE_KIND_OP:
		return d->ops.len;
	case CGTRACE_KIND_TENSOR:
		return d->tensors.len;
	case CGTRACE_KIND_MEMORY:
		return d->memory.len;
#define CASE_COUNT(k, kind, type, vec, f) \
	case kind:                     \
		return d->vec.len;
		CG_DOC_PLAIN_KINDS(CASE_COUNT)
		CG_DOC_DEVICE_TABLE(CASE_COUNT)
	default:
		return 0;
	}
}

CG_EXPORT uint64_t cgtrace_doc_records(const struct cgtrace_doc *d, enum cgtrace_kind kind)
{
	/* A streamed document counted what it did not keep. */
	if (cg_doc_streamed(d) && kind == CGTRACE_KIND_MEMORY)
		return d->memory_seen;
	if (cg_doc_streamed(d) && kind == CGTRACE_KIND_DEVICE_MEMORY)
		return d->devmem_seen;
	return cgtrace_doc_count(d, kind);
}

CG_EXPORT bool cgtrace_doc_truncated(const struct cgtrace_doc *d)
{
	return d->truncated;
}

CG_EXPORT bool cgtrace_doc_cut_in_block(const struct cgtrace_doc *d, uint64_t *records)
{
	if (records)
		*records = d->cut_in_block ? d->cut_records : 0;
	return d->cut_in_block;
}

static const char *dev_str(const struct cgtrace_doc *d, uint16_t dev)
{
	return cg_doc_str(d, cg_doc_device_str(d, dev));
}

CG_EXPORT void cgtrace_doc_meta(const struct cgtrace_doc *d, struct cgtrace_meta *o)
{
	const struct cg_meta *m = &d->meta;
	*o = (struct cgtrace_meta){
		.schema = cg_doc_str(d, m->schema),
		.run_id = cg_doc_str(d, m->run_id),
		.correlation_id = cg_doc_str(d, m->correlation_id),
		.entrypoint = cg_doc_str(d, m->entrypoint),
		.phase = (enum cgtrace_phase)m->phase,
		.timestamp = cg_doc_str(d, m->timestamp),
		.capture_step = m->capture_step,
		.warmup_steps = m->warmup_steps,
		.device = cg_doc_str(d, m->device),
		.measured_region_device_synchronized = m->mrds,
		.timing_mode = (enum cgtrace_timing)m->timing_mode,
		.tags = m->tags,
		.n_tags = m->n_tags,
		.candle_version = cg_doc_str(d, m->candle_version),
	};
}

CG_EXPORT void cgtrace_doc_span(const struct cgtrace_doc *d, size_t i, struct cgtrace_span *o)
{
	const struct cg_span *s = CG_VEC_AT(&d->spans, struct cg_span, i);
	*o = (struct cgtrace_span){
		.id = cg_doc_str(d, s->id),
		.parent_id = cg_doc_str(d, s->parent_id),
		.name = cg_doc_str(d, s->name),
		.kind = (enum cgtrace_span_kind)s->kind,
		.measured = s->measured,
		.start_ns = s->start_ns,
		.closed = s->closed,
		.duration_ns = s->duration_ns,
		.step = (enum cgtrace_step)s->step,
		.has_thread = s->has_thread,
		.thread = s->thread,
		.thread_name = cg_doc_str(d, s->thread_name),
	};
}

CG_EXPORT void cgtrace_doc_span_training(const struct cgtrace_doc *d, size_t i, uint64_t *update,
					 const char **phase)
{
	const struct cg_span *s = CG_VEC_AT(&d->spans, struct cg_span, i);
	if (update)
		*update = s->update;
	if (phase)
		*phase = cg_doc_str(d, s->phase);
}

CG_EXPORT size_t cgtrace_doc_span_parameters(const struct cgtrace_doc *d, size_t i,
					     const uint64_t **ranges)
{
	const struct cg_span *s = CG_VEC_AT(&d->spans, struct cg_span, i);
	const struct cg_doc_mark *m =
	    s->mark ? CG_VEC_AT(&d->marks, struct cg_doc_mark, s->mark - 1) : NULL;
	*ranges = m ? (const uint64_t *)d->mark_ranges.p + m->first : NULL;
	return m ? m->n : 0;
}

CG_EXPORT void cgtrace_doc_op(const struct cgtrace_doc *d, size_t i, struct cgtrace_op *o)
{
	const struct cg_op *op = CG_VEC_AT(&d->ops, struct cg_op, i);
	const uint32_t *lists = d->str_lists.p;
	*o = (struct cgtrace_op){
		.span_id = cg_doc_str(d, op->span_id),
		.op_name = cg_doc_str(d, op->op_name),
		.inputs = d->str_ptrs + op->inputs + 1,
		.n_inputs = op->inputs ? lists[op->inputs] : 0,
		.output = cg_doc_str(d, op->output),
		.dtype = cg_doc_str(d, op->dtype),
		.device = dev_str(d, (uint16_t)op->device),
		.duration_ns = op->duration_ns,
		.timestamp_ns = op->timestamp_ns,
		.storage_bytes = op->storage_bytes,
		.input_storage_bytes = op->input_storage_bytes,
	};
	o->shape = cg_doc_shape(d, op->shape, NULL, &o->ndim);
}

CG_EXPORT void cgtrace_doc_tensor(const struct cgtrace_doc *d, size_t i, struct cgtrace_tensor *o)
{
	const struct cg_tensor *t = CG_VEC_AT(&d->tensors, struct cg_tensor, i);
	*o = (struct cgtrace_tensor){
		.span_id = cg_doc_str(d, t->span_id),
		.tensor_id = cg_doc_str(d, t->tensor_id),
		.dtype = cg_doc_str(d, t->dtype),
		.device = dev_str(d, (uint16_t)t->device),
		.requires_grad = t->requires_grad,
		.storage_bytes = t->storage_bytes,
		.category = (enum cgtrace_category)t->category,
	};
	o->shape = cg_doc_shape(d, t->shape, NULL, &o->ndim);
}

void cg_doc_mem_view(const struct cgtrace_doc *d, size_t i, struct cgtrace_memory *o)
{
	const struct cg_mem *m = CG_VEC_AT(&d->memory, struct cg_mem, i);
	const struct cg_mem_class *c = cg_doc_class(d, m->cls);
	*o = (struct cgtrace_memory){
		.timestamp_ns = m->timestamp_ns,
		.tensor_id = cg_doc_str(d, m->tensor_id),
		.span_id = cg_doc_str(d, c->span_id),
		.op_name = cg_doc_str(d, c->op_name),
		.device = dev_str(d, c->device),
		.bytes = m->bytes,
		.action = (enum cgtrace_action)c->action,
		.dtype = cg_doc_str(d, c->dtype),
		.category = (enum cgtrace_category)c->category,
		.managed = c->managed,
		.preexisting = c->preexisting,
	};
	o->shape = cg_doc_shape(d, cg_doc_mem_shape(d, i), &m->bytes, &o->ndim);
	uint32_t stack = cg_doc_mem_stack(d, i);
	if (stack)
		o->stack_id = cg_doc_node_id(d, stack);
}

CG_EXPORT void cgtrace_doc_memory(const struct cgtrace_doc *d, size_t i, struct cgtrace_memory *o)
{
	cg_doc_mem_view(d, i, o);
}

/* A plain kind's public view (doc.h): the public struct's members carry the field names. */
#define VIEW(k, type, ...) VIEW_##type(__VA_ARGS__)
#define VIEW_STR(m, pres) .m = cg_doc_str(d, x->m),
#define VIEW_DEV(m, pres) .m = dev_str(d, x->m),
#define VIEW_U64(m, pres) .m = x->m,
#define VIEW_U64_OPT(m, pres, has) .has = x->has, .m = x->m,
#define VIEW_BOOL(m, pres) .m = x->m,
#define VIEW_FLAG(m, pres) .m = x->m,
#define VIEW_ENUM(m, pres, names, def) .m = x->m,
#define VIEW_F64_OPT(m, pres, has) VIEW_U64_OPT(m, pres, has)

#define VIEW_PLAIN(k, kind, type, vec, f)                                                          \
	CG_EXPORT void cgtrace_doc_##k(const struct cgtrace_doc *d, size_t i,                      \
				       struct cgtrace_##k *o)                                      \
	{                                                                                          \
		const struct type *x = CG_VEC_AT(&d->vec, struct type, i);                         \
		*o = (struct cgtrace_##k){CG_FIELDS_##f(VIEW, k)};                                 \
	}
CG_DOC_PLAIN_KINDS(VIEW_PLAIN)
CG_DOC_DEVICE_TABLE(VIEW_PLAIN)

CG_EXPORT uint64_t cgtrace_doc_device_info_conflicts(const struct cgtrace_doc *d)
{
	return d->devinfo_conflicts;
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

uint32_t cg_doc_mem_shape(const struct cgtrace_doc *d, size_t i)
{
	const struct cg_mem *m = CG_VEC_AT(&d->memory, struct cg_mem, i);
	uint8_t kind = cg_doc_class(d, m->cls)->shape_kind;
	if (kind != CG_SHAPE_OTHER)
		return kind;
	return *CG_VEC_AT(&d->mem_shapes, uint32_t, i);
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

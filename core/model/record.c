/* SPDX-License-Identifier: MIT */
/*
 * Value equality of records, for differential tests (two parsers, or a
 * format/parse round trip). A field behind a has-flag is compared only
 * when present, so garbage in an absent slot never makes records differ.
 */
#include "record.h"

#include <string.h>

static bool u64s_eq(const uint64_t *a, uint32_t na, const uint64_t *b, uint32_t nb)
{
	return na == nb && (na == 0 || memcmp(a, b, na * sizeof(*a)) == 0);
}

static bool svs_eq(const struct cg_sv *a, uint32_t na, const struct cg_sv *b, uint32_t nb)
{
	if (na != nb)
		return false;
	for (uint32_t i = 0; i < na; i++)
		if (!cg_sv_eq(a[i], b[i]))
			return false;
	return true;
}

static bool opt_u64_eq(bool ha, uint64_t a, bool hb, uint64_t b)
{
	return ha == hb && (!ha || a == b);
}

static bool meta_eq(const struct cg_rec_meta *a, const struct cg_rec_meta *b)
{
	if (!cg_sv_eq(a->schema, b->schema) || !cg_sv_eq(a->run_id, b->run_id) ||
	    !cg_sv_eq(a->correlation_id, b->correlation_id) ||
	    !cg_sv_eq(a->entrypoint, b->entrypoint) || !cg_sv_eq(a->timestamp, b->timestamp) ||
	    !cg_sv_eq(a->device, b->device) || !cg_sv_eq(a->candle_version, b->candle_version) ||
	    a->phase != b->phase || a->timing_mode != b->timing_mode ||
	    a->measured_region_device_synchronized != b->measured_region_device_synchronized ||
	    a->capture_step != b->capture_step || a->warmup_steps != b->warmup_steps ||
	    a->n_tags != b->n_tags)
		return false;
	for (uint32_t i = 0; i < a->n_tags; i++)
		if (!cg_sv_eq(a->tags[i].key, b->tags[i].key) ||
		    !cg_sv_eq(a->tags[i].value, b->tags[i].value))
			return false;
	return true;
}

static bool span_start_eq(const struct cg_rec_span_start *a, const struct cg_rec_span_start *b)
{
	return cg_sv_eq(a->id, b->id) && cg_sv_eq(a->parent_id, b->parent_id) &&
	       cg_sv_eq(a->name, b->name) && a->start_ns == b->start_ns &&
	       a->span_kind == b->span_kind && a->step == b->step && a->measured == b->measured;
}

static bool span_end_eq(const struct cg_rec_span_end *a, const struct cg_rec_span_end *b)
{
	return cg_sv_eq(a->id, b->id) && a->duration_ns == b->duration_ns;
}

static bool op_eq(const struct cg_rec_op *a, const struct cg_rec_op *b)
{
	return cg_sv_eq(a->span_id, b->span_id) && cg_sv_eq(a->op_name, b->op_name) &&
	       svs_eq(a->inputs, a->n_inputs, b->inputs, b->n_inputs) &&
	       cg_sv_eq(a->output, b->output) && u64s_eq(a->shape, a->ndim, b->shape, b->ndim) &&
	       cg_sv_eq(a->dtype, b->dtype) && cg_sv_eq(a->device, b->device) &&
	       a->duration_ns == b->duration_ns && a->timestamp_ns == b->timestamp_ns &&
	       opt_u64_eq(a->has_storage_bytes, a->storage_bytes, b->has_storage_bytes,
			  b->storage_bytes) &&
	       a->input_storage_bytes == b->input_storage_bytes;
}

static bool tensor_eq(const struct cg_rec_tensor *a, const struct cg_rec_tensor *b)
{
	return cg_sv_eq(a->span_id, b->span_id) && cg_sv_eq(a->tensor_id, b->tensor_id) &&
	       u64s_eq(a->shape, a->ndim, b->shape, b->ndim) && cg_sv_eq(a->dtype, b->dtype) &&
	       cg_sv_eq(a->device, b->device) && a->requires_grad == b->requires_grad &&
	       opt_u64_eq(a->has_storage_bytes, a->storage_bytes, b->has_storage_bytes,
			  b->storage_bytes) &&
	       a->category == b->category;
}

static bool memory_eq(const struct cg_rec_memory *a, const struct cg_rec_memory *b)
{
	return a->timestamp_ns == b->timestamp_ns && cg_sv_eq(a->tensor_id, b->tensor_id) &&
	       cg_sv_eq(a->span_id, b->span_id) && cg_sv_eq(a->op_name, b->op_name) &&
	       cg_sv_eq(a->device, b->device) && a->bytes == b->bytes && a->action == b->action &&
	       a->category == b->category && a->managed == b->managed &&
	       u64s_eq(a->shape, a->ndim, b->shape, b->ndim) && cg_sv_eq(a->dtype, b->dtype);
}

static bool device_memory_eq(const struct cg_rec_device_memory *a,
			     const struct cg_rec_device_memory *b)
{
	return a->timestamp_ns == b->timestamp_ns && cg_sv_eq(a->device, b->device) &&
	       a->used_bytes == b->used_bytes && a->free_bytes == b->free_bytes &&
	       opt_u64_eq(a->has_reserved, a->reserved_bytes, b->has_reserved,
			  b->reserved_bytes) &&
	       opt_u64_eq(a->has_oom_request, a->oom_request_bytes, b->has_oom_request,
			  b->oom_request_bytes);
}

static bool gradient_eq(const struct cg_rec_gradient *a, const struct cg_rec_gradient *b)
{
	if (!cg_sv_eq(a->event_id, b->event_id) || !cg_sv_eq(a->root, b->root) ||
	    !cg_sv_eq(a->key, b->key) || a->state != b->state || a->has_norm != b->has_norm)
		return false;
	/* Bitwise, so -0.0 differs from 0.0 and a NaN equals the same NaN. */
	return !a->has_norm || memcmp(&a->norm, &b->norm, sizeof(a->norm)) == 0;
}

static bool edge_eq(const struct cg_rec_edge *a, const struct cg_rec_edge *b)
{
	return cg_sv_eq(a->from_span, b->from_span) && cg_sv_eq(a->to_span, b->to_span) &&
	       a->duration_ns == b->duration_ns;
}

static bool device_info_eq(const struct cg_rec_device_info *a,
			   const struct cg_rec_device_info *b)
{
	return cg_sv_eq(a->device, b->device) && cg_sv_eq(a->uuid, b->uuid) &&
	       cg_sv_eq(a->name, b->name) &&
	       opt_u64_eq(a->has_total, a->total_bytes, b->has_total, b->total_bytes);
}

bool cg_rec_equal(const struct cg_rec *a, const struct cg_rec *b)
{
	if (a->kind != b->kind)
		return false;
	switch (a->kind) {
	case CGTRACE_KIND_META:
		return meta_eq(&a->u.meta, &b->u.meta);
	case CGTRACE_KIND_SPAN_START:
		return span_start_eq(&a->u.span_start, &b->u.span_start);
	case CGTRACE_KIND_SPAN_END:
		return span_end_eq(&a->u.span_end, &b->u.span_end);
	case CGTRACE_KIND_OP:
		return op_eq(&a->u.op, &b->u.op);
	case CGTRACE_KIND_TENSOR:
		return tensor_eq(&a->u.tensor, &b->u.tensor);
	case CGTRACE_KIND_MEMORY:
		return memory_eq(&a->u.memory, &b->u.memory);
	case CGTRACE_KIND_DEVICE_MEMORY:
		return device_memory_eq(&a->u.device_memory, &b->u.device_memory);
	case CGTRACE_KIND_GRADIENT:
		return gradient_eq(&a->u.gradient, &b->u.gradient);
	case CGTRACE_KIND_EDGE:
		return edge_eq(&a->u.edge, &b->u.edge);
	case CGTRACE_KIND_DEVICE_INFO:
		return device_info_eq(&a->u.device_info, &b->u.device_info);
	case CGTRACE_KIND_COUNT:
		break;
	}
	return false;
}

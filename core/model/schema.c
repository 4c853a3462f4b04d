/* SPDX-License-Identifier: MIT */
#include "schema.h"

#include <string.h>

#include "names.h"

#define OFF(f) ((uint16_t)offsetof(struct cg_rec, u.f))
#define NAME(s) .name = s, .name_len = sizeof(s) - 1
#define STR(s, f, pres) {NAME(s), .type = CG_F_STR, .presence = pres, .off = OFF(f)}
#define U64(s, f, pres) {NAME(s), .type = CG_F_U64, .presence = pres, .off = OFF(f)}
#define U64_OPT(s, f, has) \
	{NAME(s), .type = CG_F_U64, .presence = CG_OPTIONAL, .off = OFF(f), .off2 = OFF(has)}
#define BOOL(s, f, pres) {NAME(s), .type = CG_F_BOOL, .presence = pres, .off = OFF(f)}
#define ENUM(s, f, pres, tab, def) \
	{NAME(s), .type = CG_F_ENUM, .presence = pres, .off = OFF(f), .enum_names = tab, \
	 .n_enum = sizeof(tab) / sizeof(tab[0]), .enum_default = def}
#define STRS(s, f, n, pres) \
	{NAME(s), .type = CG_F_STRS, .presence = pres, .off = OFF(f), .off2 = OFF(n)}
#define U64S(s, f, n, pres) \
	{NAME(s), .type = CG_F_U64S, .presence = pres, .off = OFF(f), .off2 = OFF(n)}

static const struct cg_field meta_fields[] = {
	STR("schema", meta.schema, CG_REQUIRED),
	STR("run_id", meta.run_id, CG_REQUIRED),
	STR("correlation_id", meta.correlation_id, CG_REQUIRED),
	STR("entrypoint", meta.entrypoint, CG_REQUIRED),
	ENUM("phase", meta.phase, CG_REQUIRED, cg_phase_names, 0),
	STR("timestamp", meta.timestamp, CG_REQUIRED),
	U64("capture_step", meta.capture_step, CG_REQUIRED),
	U64("warmup_steps", meta.warmup_steps, CG_REQUIRED),
	STR("device", meta.device, CG_REQUIRED),
	/* The spec lists it as the one optional run field: null reads as false. */
	BOOL("measured_region_device_synchronized", meta.measured_region_device_synchronized,
	     CG_OPTIONAL),
	ENUM("timing_mode", meta.timing_mode, CG_REQUIRED, cg_timing_names, 0),
	{NAME("tags"), .type = CG_F_TAGS, .presence = CG_REQUIRED, .off = OFF(meta.tags),
	 .off2 = OFF(meta.n_tags)},
	STR("candle_version", meta.candle_version, CG_OPTIONAL),
};

static const struct cg_field span_start_fields[] = {
	STR("id", span_start.id, CG_REQUIRED),
	STR("parent_id", span_start.parent_id, CG_OPTIONAL),
	STR("name", span_start.name, CG_REQUIRED),
	U64("start_ns", span_start.start_ns, CG_REQUIRED),
	ENUM("span_kind", span_start.span_kind, CG_REQUIRED, cg_span_kind_names, 0),
	BOOL("measured", span_start.measured, CG_DEFAULT),
	ENUM("step", span_start.step, CG_OPTIONAL, cg_step_names, CGTRACE_STEP_NONE),
};

static const struct cg_field span_end_fields[] = {
	STR("id", span_end.id, CG_REQUIRED),
	U64("duration_ns", span_end.duration_ns, CG_DEFAULT),
};

static const struct cg_field op_fields[] = {
	STR("span_id", op.span_id, CG_REQUIRED),
	STR("op_name", op.op_name, CG_REQUIRED),
	STRS("inputs", op.inputs, op.n_inputs, CG_DEFAULT),
	STR("output", op.output, CG_OPTIONAL),
	U64S("shape", op.shape, op.ndim, CG_REQUIRED),
	STR("dtype", op.dtype, CG_REQUIRED),
	STR("device", op.device, CG_REQUIRED),
	U64("duration_ns", op.duration_ns, CG_REQUIRED),
	U64("timestamp_ns", op.timestamp_ns, CG_DEFAULT),
	U64_OPT("storage_bytes", op.storage_bytes, op.has_storage_bytes),
	U64("input_storage_bytes", op.input_storage_bytes, CG_DEFAULT),
};

static const struct cg_field tensor_fields[] = {
	STR("span_id", tensor.span_id, CG_REQUIRED),
	STR("tensor_id", tensor.tensor_id, CG_REQUIRED),
	U64S("shape", tensor.shape, tensor.ndim, CG_REQUIRED),
	STR("dtype", tensor.dtype, CG_REQUIRED),
	STR("device", tensor.device, CG_REQUIRED),
	BOOL("requires_grad", tensor.requires_grad, CG_DEFAULT),
	U64_OPT("storage_bytes", tensor.storage_bytes, tensor.has_storage_bytes),
	ENUM("category", tensor.category, CG_REQUIRED, cg_category_names, CGTRACE_CAT_OTHER),
};

static const struct cg_field memory_fields[] = {
	U64("timestamp_ns", memory.timestamp_ns, CG_REQUIRED),
	STR("tensor_id", memory.tensor_id, CG_REQUIRED),
	STR("span_id", memory.span_id, CG_REQUIRED),
	STR("op_name", memory.op_name, CG_OPTIONAL),
	STR("device", memory.device, CG_REQUIRED),
	U64("bytes", memory.bytes, CG_REQUIRED),
	ENUM("action", memory.action, CG_REQUIRED, cg_action_names, 0),
	U64S("shape", memory.shape, memory.ndim, CG_DEFAULT),
	STR("dtype", memory.dtype, CG_REQUIRED),
	ENUM("category", memory.category, CG_DEFAULT, cg_category_names, CGTRACE_CAT_OTHER),
	/* Extension: CUDA managed (unified) memory. */
	BOOL("managed", memory.managed, CG_DEFAULT),
};

static const struct cg_field device_memory_fields[] = {
	U64("timestamp_ns", device_memory.timestamp_ns, CG_REQUIRED),
	STR("device", device_memory.device, CG_REQUIRED),
	U64("used_bytes", device_memory.used_bytes, CG_REQUIRED),
	U64("free_bytes", device_memory.free_bytes, CG_REQUIRED),
	U64_OPT("reserved_bytes", device_memory.reserved_bytes, device_memory.has_reserved),
	/* Extension: the request that failed with out-of-memory. */
	U64_OPT("oom_request_bytes", device_memory.oom_request_bytes,
		device_memory.has_oom_request),
};

static const struct cg_field gradient_fields[] = {
	STR("event_id", gradient.event_id, CG_REQUIRED),
	STR("root", gradient.root, CG_REQUIRED),
	STR("key", gradient.key, CG_REQUIRED),
	ENUM("state", gradient.state, CG_REQUIRED, cg_grad_state_names, 0),
	{NAME("norm"), .type = CG_F_F64, .presence = CG_OPTIONAL, .off = OFF(gradient.norm),
	 .off2 = OFF(gradient.has_norm)},
};

static const struct cg_field edge_fields[] = {
	STR("from_span", edge.from_span, CG_REQUIRED),
	STR("to_span", edge.to_span, CG_REQUIRED),
	U64("duration_ns", edge.duration_ns, CG_REQUIRED),
};

static const struct cg_field device_info_fields[] = {
	STR("device", device_info.device, CG_REQUIRED),
	STR("uuid", device_info.uuid, CG_REQUIRED),
	STR("name", device_info.name, CG_OPTIONAL),
	U64_OPT("total_bytes", device_info.total_bytes, device_info.has_total),
};

#define KIND(s, k, f) \
	{NAME(s), .kind = k, .fields = f, .n_fields = sizeof(f) / sizeof(f[0])}

static const struct cg_kind_desc kinds[CGTRACE_KIND_COUNT] = {
	KIND("meta", CGTRACE_KIND_META, meta_fields),
	KIND("span_start", CGTRACE_KIND_SPAN_START, span_start_fields),
	KIND("span_end", CGTRACE_KIND_SPAN_END, span_end_fields),
	KIND("op", CGTRACE_KIND_OP, op_fields),
	KIND("tensor", CGTRACE_KIND_TENSOR, tensor_fields),
	KIND("memory", CGTRACE_KIND_MEMORY, memory_fields),
	KIND("device_memory", CGTRACE_KIND_DEVICE_MEMORY, device_memory_fields),
	KIND("gradient", CGTRACE_KIND_GRADIENT, gradient_fields),
	KIND("edge", CGTRACE_KIND_EDGE, edge_fields),
	KIND("cgprobe_device", CGTRACE_KIND_DEVICE_INFO, device_info_fields),
};

const struct cg_kind_desc *cg_schema_kind(const char *s, size_t n)
{
	for (size_t i = 0; i < CGTRACE_KIND_COUNT; i++)
		if (kinds[i].name_len == n && kinds[i].name[0] == s[0] &&
		    memcmp(kinds[i].name, s, n) == 0)
			return &kinds[i];
	return NULL;
}

int cg_schema_field(const struct cg_kind_desc *desc, const char *s, size_t n)
{
	for (int i = 0; i < desc->n_fields; i++) {
		const struct cg_field *f = &desc->fields[i];
		if (f->name_len == n && memcmp(f->name, s, n) == 0)
			return i;
	}
	return -1;
}

const char *cg_schema_type_name(const struct cg_field *f)
{
	switch (f->type) {
	case CG_F_STR:
		return "a string";
	case CG_F_U64:
		return "an unsigned 64-bit integer";
	case CG_F_BOOL:
		return "a boolean";
	case CG_F_ENUM:
		return "a string";
	case CG_F_STRS:
		return "an array of strings";
	case CG_F_U64S:
		return "an array of unsigned 64-bit integers";
	case CG_F_TAGS:
		return "an object of strings";
	case CG_F_F64:
		return "a number";
	}
	return "?";
}

void cg_schema_defaults(const struct cg_kind_desc *desc, struct cg_rec *r)
{
	for (int i = 0; i < desc->n_fields; i++) {
		const struct cg_field *f = &desc->fields[i];
		if (f->type == CG_F_ENUM)
			*((uint8_t *)r + f->off) = f->enum_default;
	}
}

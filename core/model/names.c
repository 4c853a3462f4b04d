/* SPDX-License-Identifier: MIT */
#include "names.h"

#include <string.h>

#include "export.h"

const char *const cg_kind_names[CGTRACE_KIND_COUNT] = {
	[CGTRACE_KIND_META] = "meta",
	[CGTRACE_KIND_SPAN_START] = "span_start",
	[CGTRACE_KIND_SPAN_END] = "span_end",
	[CGTRACE_KIND_OP] = "op",
	[CGTRACE_KIND_TENSOR] = "tensor",
	[CGTRACE_KIND_MEMORY] = "memory",
	[CGTRACE_KIND_DEVICE_MEMORY] = "device_memory",
	[CGTRACE_KIND_GRADIENT] = "gradient",
	[CGTRACE_KIND_EDGE] = "edge",
	[CGTRACE_KIND_DEVICE_INFO] = "cgprobe_device",
};

const char *const cg_phase_names[CG_PHASE_COUNT] = {
	[CGTRACE_PHASE_TRAIN] = "train",
	[CGTRACE_PHASE_INFER] = "infer",
};

const char *const cg_timing_names[CG_TIMING_COUNT] = {
	[CGTRACE_TIMING_HOST] = "host",
	[CGTRACE_TIMING_DEVICE_SYNCHRONIZED] = "device_synchronized",
};

const char *const cg_span_kind_names[CG_SPAN_KIND_COUNT] = {
	[CGTRACE_SPAN_FUNCTION] = "function",
	[CGTRACE_SPAN_OP] = "op",
	[CGTRACE_SPAN_MODULE] = "module",
};

/* NONE has no spelling: the field is left out of the record instead. */
const char *const cg_step_names[CG_STEP_COUNT] = {
	[CGTRACE_STEP_NONE] = NULL,
	[CGTRACE_STEP_FORWARD] = "forward",
	[CGTRACE_STEP_BACKWARD] = "backward",
	[CGTRACE_STEP_OPTIMIZER] = "optimizer",
};

const char *const cg_action_names[CG_ACTION_COUNT] = {
	[CGTRACE_ALLOC] = "alloc",
	[CGTRACE_FREE] = "free",
};

const char *const cg_category_names[CGTRACE_CAT_COUNT] = {
	[CGTRACE_CAT_PARAMETER] = "parameter",
	[CGTRACE_CAT_ACTIVATION] = "activation",
	[CGTRACE_CAT_GRADIENT] = "gradient",
	[CGTRACE_CAT_OPTIMIZER] = "optimizer",
	[CGTRACE_CAT_OTHER] = "other",
};

const char *const cg_grad_state_names[CG_GRAD_STATE_COUNT] = {
	[CGTRACE_GRAD_PRESENT] = "present",
	[CGTRACE_GRAD_MISSING] = "missing",
	[CGTRACE_GRAD_ZERO] = "zero",
	[CGTRACE_GRAD_NON_FINITE] = "non_finite",
};

int cg_name_lookup(const char *const *table, size_t n, const char *s, size_t len)
{
	for (size_t i = 0; i < n; i++) {
		const char *name = table[i];
		/* The first byte tells one enum's names apart almost always: check it first. */
		if (!name || len == 0 || name[0] != s[0])
			continue;
		if (strnlen(name, len + 1) == len && memcmp(name, s, len) == 0)
			return (int)i;
	}
	return -1;
}

/* The casts to unsigned make negative out-of-range values fail the bound check too. */
CG_EXPORT const char *cgtrace_kind_name(enum cgtrace_kind k)
{
	return cg_name_at(cg_kind_names, CGTRACE_KIND_COUNT, (unsigned)k);
}

CG_EXPORT const char *cgtrace_phase_name(enum cgtrace_phase p)
{
	return cg_name_at(cg_phase_names, CG_PHASE_COUNT, (unsigned)p);
}

CG_EXPORT const char *cgtrace_timing_name(enum cgtrace_timing t)
{
	return cg_name_at(cg_timing_names, CG_TIMING_COUNT, (unsigned)t);
}

CG_EXPORT const char *cgtrace_span_kind_name(enum cgtrace_span_kind k)
{
	return cg_name_at(cg_span_kind_names, CG_SPAN_KIND_COUNT, (unsigned)k);
}

CG_EXPORT const char *cgtrace_step_name(enum cgtrace_step s)
{
	return cg_name_at(cg_step_names, CG_STEP_COUNT, (unsigned)s);
}

CG_EXPORT const char *cgtrace_action_name(enum cgtrace_action a)
{
	return cg_name_at(cg_action_names, CG_ACTION_COUNT, (unsigned)a);
}

CG_EXPORT const char *cgtrace_category_name(enum cgtrace_category c)
{
	return cg_name_at(cg_category_names, CGTRACE_CAT_COUNT, (unsigned)c);
}

CG_EXPORT const char *cgtrace_grad_state_name(enum cgtrace_grad_state s)
{
	return cg_name_at(cg_grad_state_names, CG_GRAD_STATE_COUNT, (unsigned)s);
}

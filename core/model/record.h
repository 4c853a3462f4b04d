/* SPDX-License-Identifier: MIT */
/*
 * One trace record as a set of views: what the parsers produce, what the
 * document builder consumes and what the JSONL formatter writes. Strings
 * point into the parsed line or a per-line scratch arena, so a record only
 * lives until the next line is parsed.
 */
#ifndef CG_RECORD_H
#define CG_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cgtrace.h"
#include "sv.h"

struct cg_tagv {
	struct cg_sv key;
	struct cg_sv value;
};

struct cg_rec_meta {
	struct cg_sv schema;
	struct cg_sv run_id;
	struct cg_sv correlation_id;
	struct cg_sv entrypoint;
	struct cg_sv timestamp;
	struct cg_sv device;
	struct cg_sv candle_version; /* optional */
	uint8_t phase;               /* enum cgtrace_phase */
	uint8_t timing_mode;         /* enum cgtrace_timing */
	bool measured_region_device_synchronized;
	uint64_t capture_step;
	uint64_t warmup_steps;
	const struct cg_tagv *tags; /* in record order, keys unique */
	uint32_t n_tags;
};

struct cg_rec_span_start {
	struct cg_sv id;
	struct cg_sv parent_id; /* optional */
	struct cg_sv name;
	uint64_t start_ns;
	uint8_t span_kind; /* enum cgtrace_span_kind */
	uint8_t step;      /* enum cgtrace_step, NONE when absent */
	bool measured;
};

struct cg_rec_span_end {
	struct cg_sv id;
	uint64_t duration_ns;
};

struct cg_rec_op {
	struct cg_sv span_id;
	struct cg_sv op_name;
	const struct cg_sv *inputs;
	uint32_t n_inputs;
	struct cg_sv output; /* optional */
	const uint64_t *shape;
	uint32_t ndim;
	struct cg_sv dtype;
	struct cg_sv device;
	uint64_t duration_ns;
	uint64_t timestamp_ns;
	bool has_storage_bytes;
	uint64_t storage_bytes;
	uint64_t input_storage_bytes;
};

struct cg_rec_tensor {
	struct cg_sv span_id;
	struct cg_sv tensor_id;
	const uint64_t *shape;
	uint32_t ndim;
	struct cg_sv dtype;
	struct cg_sv device;
	bool requires_grad;
	bool has_storage_bytes;
	uint64_t storage_bytes;
	uint8_t category; /* enum cgtrace_category */
};

struct cg_rec_memory {
	uint64_t timestamp_ns;
	struct cg_sv tensor_id;
	struct cg_sv span_id;
	struct cg_sv op_name; /* optional */
	struct cg_sv device;
	uint64_t bytes;
	uint8_t action;   /* enum cgtrace_action */
	uint8_t category; /* enum cgtrace_category, OTHER when absent */
	bool managed;     /* extension field, false when absent */
	const uint64_t *shape;
	uint32_t ndim;
	struct cg_sv dtype;
};

struct cg_rec_device_memory {
	uint64_t timestamp_ns;
	struct cg_sv device;
	uint64_t used_bytes;
	uint64_t free_bytes;
	bool has_reserved;
	uint64_t reserved_bytes;
	bool has_oom_request; /* extension field */
	uint64_t oom_request_bytes;
};

struct cg_rec_gradient {
	struct cg_sv event_id;
	struct cg_sv root;
	struct cg_sv key;
	uint8_t state; /* enum cgtrace_grad_state */
	bool has_norm;
	double norm;
};

struct cg_rec_edge {
	struct cg_sv from_span;
	struct cg_sv to_span;
	uint64_t duration_ns;
};

struct cg_rec_device_info {
	struct cg_sv device;
	struct cg_sv uuid;
	struct cg_sv name; /* optional */
	bool has_total;
	uint64_t total_bytes;
};

struct cg_rec {
	enum cgtrace_kind kind;
	union {
		struct cg_rec_meta meta;
		struct cg_rec_span_start span_start;
		struct cg_rec_span_end span_end;
		struct cg_rec_op op;
		struct cg_rec_tensor tensor;
		struct cg_rec_memory memory;
		struct cg_rec_device_memory device_memory;
		struct cg_rec_gradient gradient;
		struct cg_rec_edge edge;
		struct cg_rec_device_info device_info;
	} u;
};

/* True when both records hold the same values (used by differential tests). */
bool cg_rec_equal(const struct cg_rec *a, const struct cg_rec *b);

#endif

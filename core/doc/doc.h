/* SPDX-License-Identifier: MIT */
/*
 * The reconstructed trace document. Memory records dominate every large
 * trace, so they are kept at 24 bytes each: the fields that repeat (span,
 * op name, device, dtype, action, category) are interned together as one
 * "memory class", and shapes are hash-consed.
 */
#ifndef CG_DOC_H
#define CG_DOC_H

#include <stdbool.h>
#include <stdint.h>

#include "cgtrace.h"
#include "strpool.h"
#include "vec.h"

/* Shape ids: 0 is [], 1 is [bytes] of the record itself, others index doc->shapes. */
#define CG_SHAPE_EMPTY 0u
#define CG_SHAPE_BYTES 1u

struct cg_mem_class {
	uint32_t span_id;
	uint32_t op_name; /* CG_STR_NONE when absent */
	uint32_t dtype;
	uint16_t device;  /* index into doc->devices */
	uint8_t action;
	uint8_t category;
	uint8_t managed;
	uint8_t shape_kind; /* CG_SHAPE_EMPTY, CG_SHAPE_BYTES or CG_SHAPE_OTHER */
};

#define CG_SHAPE_OTHER 2u

/* 24 bytes: shapes other than [] and [bytes] sit in doc->mem_shapes. */
struct cg_mem {
	uint64_t timestamp_ns;
	uint64_t bytes;
	uint32_t tensor_id;
	uint32_t cls;
};

struct cg_span {
	uint32_t id;
	uint32_t parent_id;
	uint32_t name;
	uint8_t kind;
	uint8_t step;
	bool measured;
	bool closed;
	uint64_t start_ns;
	uint64_t duration_ns;
};

struct cg_op {
	uint32_t span_id, op_name, output, dtype, device;
	uint32_t inputs; /* offset into doc->str_lists: [n, id...] */
	uint32_t shape;
	uint64_t duration_ns, timestamp_ns, storage_bytes, input_storage_bytes;
};

struct cg_tensor {
	uint32_t span_id, tensor_id, dtype, device, shape;
	bool requires_grad;
	uint8_t category;
	uint64_t storage_bytes;
};

struct cg_devmem {
	uint64_t timestamp_ns, used_bytes, free_bytes, reserved_bytes, oom_request_bytes;
	uint16_t device;
	bool has_reserved, has_oom_request;
};

struct cg_grad {
	uint32_t event_id, root, key;
	uint8_t state;
	bool has_norm;
	double norm;
};

struct cg_edge {
	uint32_t from_span, to_span;
	uint64_t duration_ns;
};

struct cg_devinfo {
	uint32_t uuid, name;
	uint16_t device;
	bool has_total;
	uint64_t total_bytes;
};

struct cg_meta {
	uint32_t schema, run_id, correlation_id, entrypoint, timestamp, device, candle_version;
	uint8_t phase, timing_mode;
	bool mrds;
	uint64_t capture_step, warmup_steps;
	struct cgtrace_tag *tags; /* sorted by key, strings from the pool */
	size_t n_tags;
};

struct cgtrace_doc {
	struct cg_strpool pool;
	bool has_meta;
	bool truncated;
	struct cg_meta meta;
	struct cg_vec spans;    /* struct cg_span, sorted by id once built */
	struct cg_vec ops;      /* struct cg_op */
	struct cg_vec tensors;  /* struct cg_tensor */
	struct cg_vec memory;   /* struct cg_mem */
	struct cg_vec classes;  /* struct cg_mem_class */
	struct cg_vec mem_shapes; /* uint32_t shape id per memory record, made on first need */
	struct cg_vec devmem;   /* struct cg_devmem */
	struct cg_vec grads;    /* struct cg_grad */
	struct cg_vec edges;    /* struct cg_edge */
	struct cg_vec devinfo;  /* struct cg_devinfo */
	struct cg_vec devices;  /* uint32_t string ids, index = device number */
	struct cg_vec shapes;   /* uint64_t: [ndim, dims...] entries */
	struct cg_vec str_lists;/* uint32_t: [n, ids...] entries */
	const char **str_ptrs;  /* str_lists as pointers, made by cg_doc_finish */
	/* Build-time lookup tables, freed when the document is complete. */
	struct cg_build *build;
};

static inline const char *cg_doc_str(const struct cgtrace_doc *d, uint32_t id)
{
	return cg_strpool_get(&d->pool, id);
}

static inline const struct cg_mem_class *cg_doc_class(const struct cgtrace_doc *d, uint32_t c)
{
	return CG_VEC_AT(&d->classes, struct cg_mem_class, c);
}

static inline uint32_t cg_doc_device_str(const struct cgtrace_doc *d, uint16_t dev)
{
	return *CG_VEC_AT(&d->devices, uint32_t, dev);
}

/* An empty document, ready for doc_build.c; NULL when out of memory. */
struct cgtrace_doc *cg_doc_new(void);
/*
 * After the last record: checks for meta, sorts spans and tags, hands out
 * op inputs as pointers. 0, or a negative errno with the message in err.
 */
int cg_doc_finish(struct cgtrace_doc *d, char *err, size_t errlen);

#endif

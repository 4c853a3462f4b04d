/* SPDX-License-Identifier: MIT */
/*
 * The reconstructed trace document, its data and their accessors (its life
 * is doc_life.h's). Memory records dominate every large trace, so they are
 * kept at 24 bytes each: the fields that repeat (span, op name, device,
 * dtype, action, category) are interned together as one "memory class",
 * and shapes are hash-consed.
 */
#ifndef CG_DOC_H
#define CG_DOC_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "cgtrace.h"
#include "record_fields.h"
#include "arena.h"
#include "doc_sink.h"
#include "strpool.h"
#include "u64map.h"
#include "stack_depths.h"
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
	uint8_t preexisting; /* cgprobe_preexisting */
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
	bool has_thread;
	uint32_t thread_name; /* the extension fields cgprobe_thread and cgprobe_thread_name */
	uint64_t thread;
	uint64_t start_ns;
	uint64_t duration_ns;
	/* Training (docs/steps.md): cgprobe_update (0: none), cgprobe_phase's string id (0: none). */
	uint64_t update;
	uint32_t phase;
	uint32_t mark; /* cgprobe_parameters: its ranges, index + 1 in doc->marks (0: none) */
};

/*
 * A span that says the process's rank (cgprobe_rank, cgprobe_world_size;
 * docs/jobs.md): a few per trace, so kept beside the spans, not in each.
 */
struct cg_doc_rank {
	uint32_t span; /* index in doc->spans */
	bool has_rank, has_world;
	uint64_t rank, world;
};

/* A parameter mark's ranges: mark_ranges[first .. first + 2n), [start, end) pairs. */
struct cg_doc_mark {
	uint32_t first, n;
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

/*
 * Kinds the document keeps field for field, as record_fields.h describes
 * them: D(kind, CGTRACE_KIND_..., document struct, vector in cgtrace_doc,
 * the field list it keeps). Their structs, building, public views and
 * export are expanded from the field lists; a string becomes a pool id and
 * a device a device number. A device_memory record's identity fields are
 * not kept with it: they go to the device table (CG_DOC_DEVICE_TABLE).
 * Array and tag fields have no expansion here: a kind with one keeps its
 * hand-written document code (spans, ops, tensors, memory, meta).
 */
#define CG_DOC_PLAIN_KINDS(D)                                                                      \
	D(device_memory, CGTRACE_KIND_DEVICE_MEMORY, cg_devmem, devmem, device_memory_checkpoint)  \
	D(gradient, CGTRACE_KIND_GRADIENT, cg_grad, grads, gradient)                               \
	D(edge, CGTRACE_KIND_EDGE, cg_edge, edges, edge)

/*
 * The device identity table, one entry per device, the first identity seen
 * for it: from the identity fields of memory and device_memory records, or
 * from an earlier probe's cgprobe_device record. Its struct and public view
 * are expanded from the cgprobe_device field list; it is built by hand
 * (doc_build.c) and exported as fields, never as its kind (export_jsonl.c).
 */
#define CG_DOC_DEVICE_TABLE(D)                                                                     \
	D(device_info, CGTRACE_KIND_DEVICE_INFO, cg_devinfo, devinfo, device_info)

/* Members by width, as in record.h, so the structs stay small. */
#define CG_DW8(k, type, ...) CG_DW8_##type(__VA_ARGS__)
#define CG_DW8_STR(m, pres)
#define CG_DW8_DEV(m, pres)
#define CG_DW8_U64(m, pres) uint64_t m;
#define CG_DW8_U64_OPT(m, pres, has) uint64_t m;
#define CG_DW8_BOOL(m, pres)
#define CG_DW8_FLAG(m, pres)
#define CG_DW8_ENUM(m, pres, names, def)
#define CG_DW8_F64_OPT(m, pres, has) double m;

#define CG_DW4(k, type, ...) CG_DW4_##type(__VA_ARGS__)
#define CG_DW4_STR(m, pres) uint32_t m; /* CG_STR_NONE when absent */
#define CG_DW4_DEV(m, pres)
#define CG_DW4_U64(m, pres)
#define CG_DW4_U64_OPT(m, pres, has)
#define CG_DW4_BOOL(m, pres)
#define CG_DW4_FLAG(m, pres)
#define CG_DW4_ENUM(m, pres, names, def)
#define CG_DW4_F64_OPT(m, pres, has)

#define CG_DW2(k, type, ...) CG_DW2_##type(__VA_ARGS__)
#define CG_DW2_STR(m, pres)
#define CG_DW2_DEV(m, pres) uint16_t m; /* index into doc->devices */
#define CG_DW2_U64(m, pres)
#define CG_DW2_U64_OPT(m, pres, has)
#define CG_DW2_BOOL(m, pres)
#define CG_DW2_FLAG(m, pres)
#define CG_DW2_ENUM(m, pres, names, def)
#define CG_DW2_F64_OPT(m, pres, has)

#define CG_DW1(k, type, ...) CG_DW1_##type(__VA_ARGS__)
#define CG_DW1_STR(m, pres)
#define CG_DW1_DEV(m, pres)
#define CG_DW1_U64(m, pres)
#define CG_DW1_U64_OPT(m, pres, has) bool has;
#define CG_DW1_BOOL(m, pres) bool m;
#define CG_DW1_FLAG(m, pres) bool m;
#define CG_DW1_ENUM(m, pres, names, def) uint8_t m;
#define CG_DW1_F64_OPT(m, pres, has) bool has;

#define CG_DOC_STRUCT(k, kind, type, vec, f)                                                       \
	struct type {                                                                              \
		CG_FIELDS_##f(CG_DW8, k) CG_FIELDS_##f(CG_DW4, k) CG_FIELDS_##f(CG_DW2, k)         \
			CG_FIELDS_##f(CG_DW1, k)                                                   \
	};
CG_DOC_PLAIN_KINDS(CG_DOC_STRUCT)
CG_DOC_DEVICE_TABLE(CG_DOC_STRUCT)
#undef CG_DOC_STRUCT

/*
 * The stack table is a tree, a node per frame on its parent stack
 * (docs/stacks.md). A flat definition of n frames makes n nodes of which
 * only the last has an id; a tree definition makes n nodes with the ids
 * first_id ... first_id + n - 1, outermost first. stack_nodes holds a
 * uint32_t per node: its frame's index in stack_addrs (a framework's
 * millions of nodes share some 10^5 addresses). A node's parent is the
 * node before it, but for a definition's outermost node (CG_NODE_FIRST),
 * whose parent (node index + 1; 0: none) is the word before it: 4 bytes a
 * node and 4 a definition, rather than 8 a node.
 */
#define CG_NODE_FIRST (1u << 31)

/*
 * One definition: the time of the record that made it (the record's
 * index, a full document's, beside in stack_def_recs) and what it said; its nodes are first_node ... first_node + n - 1, so a node's
 * definition is found by binary search (definitions are in node order).
 */
struct cg_stack_def {
	uint64_t ns;
	uint64_t first_id;    /* the id of the outermost new node (a flat one's only id) */
	uint32_t first_node;
	uint32_t n : 11;      /* CG_STACK_FRAMES_MAX at most */
	uint32_t tree : 1;
	uint32_t base : 11;   /* a tree's: its parent's frames, so a node's depth needs no walk */
};
_Static_assert(CG_STACK_FRAMES_MAX < 2048, "n and base are 11 bits");

/* A module of the list, and the memory record (its index) that carried it. */
struct cg_doc_module {
	struct cgtrace_module m; /* first: the public view points here */
	uint64_t rec;
};

/* An extension field (field >= 0: its index in the kind's schema) or kind (-1) the trace uses. */
struct cg_doc_ext {
	uint8_t kind;
	int8_t field;
	uint64_t first, records;
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
	bool cut_in_block;      /* truncated: a compact trace cut inside a block */
	uint64_t cut_records;   /* then the records decoded before the cut */
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
	struct cg_vec devinfo;  /* struct cg_devinfo, one per device, the first identity seen */
	struct cg_vec marks;       /* struct cg_doc_mark, in record order */
	struct cg_vec mark_ranges; /* uint64_t: each mark's [start, end) pairs */
	struct cg_vec ranks;       /* struct cg_doc_rank, in record order */
	uint64_t devinfo_conflicts; /* later identities of a device that differ from its first */
	/*
	 * Stacks and modules (doc_stacks.c), full and streamed documents
	 * alike: the distinct ones as a tree, module strings and the public
	 * views made on demand in stack_mem. A document read with
	 * CGTRACE_READ_NO_STACKS keeps, by id, only each stack's depth, which
	 * the rules need.
	 */
	bool stacks_light;
	/*
	 * CGTRACE_READ_SKIP_STACKS: stack blocks skipped unread; their ids,
	 * and those of every other definition, are kept as ranges (stack_ids.c).
	 */
	bool stacks_skip;
	struct cg_vec stack_skipped; /* struct cg_id_range, in order, adjacent ones merged */
	struct cg_vec stack_nodes; /* uint32_t: a node, or a definition's parent (CG_NODE_FIRST) */
	struct cg_vec stack_addrs; /* uint64_t: the distinct return addresses of nodes */
	struct cg_map stack_addr_map; /* address -> index in stack_addrs */
	struct cg_vec stack_defs;  /* struct cg_stack_def, in record order */
	struct cg_vec stack_def_recs; /* uint64_t by definition: its record (kept records only) */
	struct cg_vec stack_def_ids;  /* uint32_t by definition: the ids before it, made when asked */
	uint64_t n_stack_ids;
	struct cg_map stack_by_id; /* sparse stack ids -> node index (light: depth) */
	struct cg_vec stack_dense; /* unordered: uint32_t by stack id below 2^24: the same + 1 */
	struct cg_vec stack_coarse; /* ordered: uint32_t per 64 ids (stack_ids.c) */
	uint64_t stack_last_id;     /* ordered: the last id defined; light: the largest */
	struct cg_stack_depths stack_seq; /* light, while ids come 1, 2, 3, ...: their depths */
	bool stack_seq_off;               /* light: an id came out of that order; stack_dense has them */
	bool stack_unordered;       /* a definition came out of id order (stack_ids.h) */
	struct cg_vec stack_views; /* struct cgtrace_stack *, made by the public lookups */
	struct cg_map stack_view_map; /* node index -> index in stack_views */
	atomic_flag stack_lock;    /* held while a public view is made */
	struct cg_vec modules;     /* struct cg_doc_module, in record order */
	struct cg_vec py_codes;    /* doc_pycodes.c's, in record order */
	struct cg_map py_code_map; /* code id -> index in py_codes */
	bool py_frames;            /* frames with bit 63 are Python frames (doc_pycodes.h) */
	struct cg_arena stack_mem;
	struct cg_vec mem_stacks;  /* uint32_t per memory record: node index + 1 (0: none), made on first need */
	/* CGTRACE_READ_EXTENSIONS: the extensions used (doc_ext.c). */
	bool track_ext;
	bool ext_numbered;        /* first counts records (a compact trace), not lines */
	struct cg_vec exts;       /* struct cg_doc_ext, by first use */
	struct cg_vec devices;  /* uint32_t string ids, index = device number */
	struct cg_vec shapes;   /* uint64_t: [ndim, dims...] entries */
	struct cg_vec str_lists;/* uint32_t: [n, ids...] entries */
	const char **str_ptrs;  /* str_lists as pointers, made by cg_doc_finish */
	/* Build-time lookup tables, freed when the document is complete. */
	struct cg_build *build;
	/*
	 * A streamed document (CGTRACE_READ_STREAM_MEMORY): memory records and
	 * checkpoints are handed on to the sink (doc_sink.h) instead of kept in
	 * `memory`, `devmem` keeps only the checkpoints of an OOM, and the
	 * records are only counted. No ops: a full document.
	 */
	struct cg_doc_sink sink;
	uint64_t memory_seen, devmem_seen;
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

static inline bool cg_doc_streamed(const struct cgtrace_doc *d)
{
	return d->sink.ops != NULL;
}

#endif

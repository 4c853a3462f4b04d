/* SPDX-License-Identifier: MIT */
/*
 * Every record kind described once. The record structs, the schema tables
 * both parsers read, record equality and the JSONL formatter (field order
 * and line bound) are all expanded from these lists, so a field is added
 * in one place and the readers and the writer cannot drift apart.
 *
 * CG_RECORD_KINDS(K) calls K(member, "json kind", CGTRACE_KIND_...) once per
 * kind; member names both the union member of struct cg_rec and the field
 * list CG_FIELDS_member(X, k). A field list calls X(k, TYPE, member,
 * presence, ...) once per field in the format's order, which is the order
 * writers emit and the fast parser expects; k is handed through so that a
 * consumer can name the kind's struct. The JSON key is the member's name.
 *
 *   STR      string view; CG_OPTIONAL ones are left out when absent
 *   DEV      a device name: a string to the format, numbered in the
 *            document's device table (16 bits) rather than interned alone
 *   U64      unsigned 64-bit, always written
 *   U64_OPT  u64 behind a has-flag (extra: the flag), written when set
 *   BOOL     boolean, always written
 *   FLAG     extension boolean, false when absent and written only when
 *            true, so traces without the extension stay plain trace/6
 *   ENUM     one byte spelled by a names table (extra: table, default
 *            when absent); an optional one is left out when it has no
 *            spelling
 *   STRS     array of strings (extra: the count member)
 *   U64S     array of u64, e.g. a shape (extra: the count member)
 *   F64_OPT  double behind a has-flag (extra: the flag), written when set
 *            and finite, JSON having no NaN or infinity
 *   TAGS     object of strings (extra: the count member)
 *   ID       extension id, u64 of at least 1, 0 when absent and written
 *            only when set (a stack id)
 *   HEXS     extension array of u64 spelled as hex strings ("0x1f"),
 *            written only when not empty (extra: the count member)
 *   MODS     extension array of module objects, struct cg_modv, written
 *            only when not empty (extra: the count member)
 *   PYCODES  extension array of Python code objects, struct cg_pycodev,
 *            written only when not empty (extra: the count member)
 *
 * The JSON key of an ID, HEXS, MODS or PYCODES field is `cgprobe_` and the member's
 * name (docs/stacks.md).
 *
 * Presence is CG_REQUIRED, CG_OPTIONAL (absent or null: flag cleared or
 * view NULL) or CG_DEFAULT (absent: zero or the enum default; null is an
 * error), as struct cg_field in schema.h keeps it.
 *
 * Not described here, because they are rules rather than fields: an op's
 * or tensor's storage_bytes is derived from shape x dtype when absent (the
 * document builder), and the probe's heap line (jsonl_heap.c) is a
 * hand-tuned copy of the memory line, held byte-equal by its test.
 */
#ifndef CG_RECORD_FIELDS_H
#define CG_RECORD_FIELDS_H

#define CG_RECORD_KINDS(K)                                                                         \
	K(meta, "meta", CGTRACE_KIND_META)                                                         \
	K(span_start, "span_start", CGTRACE_KIND_SPAN_START)                                       \
	K(span_end, "span_end", CGTRACE_KIND_SPAN_END)                                             \
	K(op, "op", CGTRACE_KIND_OP)                                                               \
	K(tensor, "tensor", CGTRACE_KIND_TENSOR)                                                   \
	K(memory, "memory", CGTRACE_KIND_MEMORY)                                                   \
	K(device_memory, "device_memory", CGTRACE_KIND_DEVICE_MEMORY)                              \
	K(gradient, "gradient", CGTRACE_KIND_GRADIENT)                                             \
	K(edge, "edge", CGTRACE_KIND_EDGE)                                                         \
	/*                                                                                         \
	 * Extension kind of earlier probes, read but never written: the identity                  \
	 * now rides on the device's first record (CG_FIELDS_device_identity).                     \
	 */                                                                                        \
	K(device_info, "cgprobe_device", CGTRACE_KIND_DEVICE_INFO)

/*
 * The spec lists measured_region_device_synchronized as the one optional
 * run field: null reads as false.
 */
#define CG_FIELDS_meta(X, k)                                                                       \
	X(k, STR, schema, CG_REQUIRED)                                                             \
	X(k, STR, run_id, CG_REQUIRED)                                                             \
	X(k, STR, correlation_id, CG_REQUIRED)                                                     \
	X(k, STR, entrypoint, CG_REQUIRED)                                                         \
	X(k, ENUM, phase, CG_REQUIRED, cg_phase_names, 0)                                          \
	X(k, STR, timestamp, CG_REQUIRED)                                                          \
	X(k, U64, capture_step, CG_REQUIRED)                                                       \
	X(k, U64, warmup_steps, CG_REQUIRED)                                                       \
	X(k, STR, device, CG_REQUIRED)                                                             \
	X(k, BOOL, measured_region_device_synchronized, CG_OPTIONAL)                               \
	X(k, ENUM, timing_mode, CG_REQUIRED, cg_timing_names, 0)                                   \
	X(k, TAGS, tags, CG_REQUIRED, n_tags)                                                      \
	X(k, STR, candle_version, CG_OPTIONAL)

#define CG_FIELDS_span_start(X, k)                                                                 \
	X(k, STR, id, CG_REQUIRED)                                                                 \
	X(k, STR, parent_id, CG_OPTIONAL)                                                          \
	X(k, STR, name, CG_REQUIRED)                                                               \
	X(k, U64, start_ns, CG_REQUIRED)                                                           \
	X(k, ENUM, span_kind, CG_REQUIRED, cg_span_kind_names, 0)                                  \
	X(k, BOOL, measured, CG_DEFAULT)                                                           \
	X(k, ENUM, step, CG_OPTIONAL, cg_step_names, CGTRACE_STEP_NONE)                           \
	CG_FIELDS_span_thread(X, k)                                                                \
	CG_FIELDS_span_training(X, k)                                                              \
	CG_FIELDS_span_process(X, k)

/*
 * Extension fields: the thread that opened the span (its OS thread id) and,
 * on the first span_start of a thread that has a name, the name
 * (docs/probe.md). Spans of one thread nest; spans of others need not.
 */
#define CG_FIELDS_span_thread(X, k)                                                                \
	X(k, U64_OPT, cgprobe_thread, CG_OPTIONAL, has_thread)                                     \
	X(k, STR, cgprobe_thread_name, CG_OPTIONAL)

/*
 * Extension fields of training (docs/steps.md): the update a span stands
 * for (its number, 1, 2, ...), a phase other than trace/6's three steps,
 * and the ranges of model parameters marked at the span's start, as pairs
 * of address and length (a span of its own, ended at once).
 */
#define CG_FIELDS_span_training(X, k)                                                              \
	X(k, U64_OPT, cgprobe_update, CG_OPTIONAL, has_update)                                     \
	X(k, STR, cgprobe_phase, CG_OPTIONAL)                                                      \
	X(k, HEXS, parameters, CG_OPTIONAL, n_parameters)

/*
 * Extension fields of a job (docs/jobs.md): the process's rank and the
 * job's world size, where they became known only after the process
 * started (init_process_group), on a span of their own.
 */
#define CG_FIELDS_span_process(X, k)                                                               \
	X(k, U64_OPT, cgprobe_rank, CG_OPTIONAL, has_rank)                                         \
	X(k, U64_OPT, cgprobe_world_size, CG_OPTIONAL, has_world_size)

#define CG_FIELDS_span_end(X, k)                                                                   \
	X(k, STR, id, CG_REQUIRED)                                                                 \
	X(k, U64, duration_ns, CG_DEFAULT)

#define CG_FIELDS_op(X, k)                                                                         \
	X(k, STR, span_id, CG_REQUIRED)                                                            \
	X(k, STR, op_name, CG_REQUIRED)                                                            \
	X(k, STRS, inputs, CG_DEFAULT, n_inputs)                                                   \
	X(k, STR, output, CG_OPTIONAL)                                                             \
	X(k, U64S, shape, CG_REQUIRED, ndim)                                                       \
	X(k, STR, dtype, CG_REQUIRED)                                                              \
	X(k, DEV, device, CG_REQUIRED)                                                             \
	X(k, U64, duration_ns, CG_REQUIRED)                                                        \
	X(k, U64, timestamp_ns, CG_DEFAULT)                                                        \
	X(k, U64_OPT, storage_bytes, CG_OPTIONAL, has_storage_bytes)                               \
	X(k, U64, input_storage_bytes, CG_DEFAULT)

#define CG_FIELDS_tensor(X, k)                                                                     \
	X(k, STR, span_id, CG_REQUIRED)                                                            \
	X(k, STR, tensor_id, CG_REQUIRED)                                                          \
	X(k, U64S, shape, CG_REQUIRED, ndim)                                                       \
	X(k, STR, dtype, CG_REQUIRED)                                                              \
	X(k, DEV, device, CG_REQUIRED)                                                             \
	X(k, BOOL, requires_grad, CG_DEFAULT)                                                      \
	X(k, U64_OPT, storage_bytes, CG_OPTIONAL, has_storage_bytes)                               \
	X(k, ENUM, category, CG_REQUIRED, cg_category_names, CGTRACE_CAT_OTHER)

/*
 * Extension fields: the identity of the record's device (cuda:N is only a
 * per-process number; the UUID joins traces by physical GPU). A trace/6
 * reader rejects unknown kinds but ignores unknown fields, so the identity
 * rides on the first memory or device_memory record naming the device,
 * written only when set, never repeated.
 */
#define CG_FIELDS_device_identity(X, k)                                                            \
	X(k, STR, cgprobe_device_uuid, CG_OPTIONAL)                                                \
	X(k, STR, cgprobe_device_name, CG_OPTIONAL)                                                \
	X(k, U64_OPT, cgprobe_device_total_bytes, CG_OPTIONAL, has_device_total)

/*
 * Extension fields: the allocation's call stack, its frames on the first
 * record naming it (with the stack they hang from, for a tree definition),
 * the modules loaded (docs/stacks.md) and the Python code objects that
 * Python frames name (docs/python-frames.md).
 */
#define CG_FIELDS_stacks(X, k)                                                                     \
	X(k, ID, stack, CG_OPTIONAL)                                                               \
	X(k, HEXS, stack_frames, CG_OPTIONAL, n_stack_frames)                                      \
	X(k, U64_OPT, cgprobe_stack_parent, CG_OPTIONAL, has_stack_parent)                         \
	X(k, MODS, modules, CG_OPTIONAL, n_modules)                                                \
	X(k, PYCODES, py_codes, CG_OPTIONAL, n_py_codes)

/*
 * managed is an extension: CUDA managed (unified) memory. So is
 * cgprobe_preexisting: an alloc record for a block that was live before the
 * recording began (a capture window's start, a forked child's inherited heap).
 */
#define CG_FIELDS_memory(X, k)                                                                     \
	X(k, U64, timestamp_ns, CG_REQUIRED)                                                       \
	X(k, STR, tensor_id, CG_REQUIRED)                                                          \
	X(k, STR, span_id, CG_REQUIRED)                                                            \
	X(k, STR, op_name, CG_OPTIONAL)                                                            \
	X(k, DEV, device, CG_REQUIRED)                                                             \
	X(k, U64, bytes, CG_REQUIRED)                                                              \
	X(k, ENUM, action, CG_REQUIRED, cg_action_names, 0)                                        \
	X(k, U64S, shape, CG_DEFAULT, ndim)                                                        \
	X(k, STR, dtype, CG_REQUIRED)                                                              \
	X(k, ENUM, category, CG_DEFAULT, cg_category_names, CGTRACE_CAT_OTHER)                     \
	X(k, FLAG, managed, CG_DEFAULT)                                                            \
	X(k, FLAG, cgprobe_preexisting, CG_DEFAULT)                                                \
	CG_FIELDS_device_identity(X, k)                                                            \
	CG_FIELDS_stacks(X, k)

/*
 * oom_request_bytes is an extension: the request that failed with out-of-memory.
 * cgprobe_allocated_bytes too: a caching allocator's bytes in live tensors,
 * where reserved_bytes is what it holds from the device.
 * The document keeps the checkpoint's own fields; the identity goes to its
 * device table (doc.h).
 */
#define CG_FIELDS_device_memory(X, k)                                                              \
	CG_FIELDS_device_memory_checkpoint(X, k) CG_FIELDS_device_identity(X, k)

#define CG_FIELDS_device_memory_checkpoint(X, k)                                                   \
	X(k, U64, timestamp_ns, CG_REQUIRED)                                                       \
	X(k, DEV, device, CG_REQUIRED)                                                             \
	X(k, U64, used_bytes, CG_REQUIRED)                                                         \
	X(k, U64, free_bytes, CG_REQUIRED)                                                         \
	X(k, U64_OPT, reserved_bytes, CG_OPTIONAL, has_reserved)                                   \
	X(k, U64_OPT, oom_request_bytes, CG_OPTIONAL, has_oom_request)                             \
	X(k, U64_OPT, cgprobe_allocated_bytes, CG_OPTIONAL, has_allocated)

#define CG_FIELDS_gradient(X, k)                                                                   \
	X(k, STR, event_id, CG_REQUIRED)                                                           \
	X(k, STR, root, CG_REQUIRED)                                                               \
	X(k, STR, key, CG_REQUIRED)                                                                \
	X(k, ENUM, state, CG_REQUIRED, cg_grad_state_names, 0)                                     \
	X(k, F64_OPT, norm, CG_OPTIONAL, has_norm)

#define CG_FIELDS_edge(X, k)                                                                       \
	X(k, STR, from_span, CG_REQUIRED)                                                          \
	X(k, STR, to_span, CG_REQUIRED)                                                            \
	X(k, U64, duration_ns, CG_REQUIRED)

#define CG_FIELDS_device_info(X, k)                                                                \
	X(k, DEV, device, CG_REQUIRED)                                                             \
	X(k, STR, uuid, CG_REQUIRED)                                                               \
	X(k, STR, name, CG_OPTIONAL)                                                               \
	X(k, U64_OPT, total_bytes, CG_OPTIONAL, has_total)

#endif

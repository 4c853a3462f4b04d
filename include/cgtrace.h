/* SPDX-License-Identifier: MIT */
/*
 * cgtrace: read, analyse and write `candle-graph/trace/6` JSONL traces.
 *
 * Every function that can fail returns 0 on success and a negative errno
 * value on failure. Strings handed out by a document stay valid until the
 * document is freed.
 */
#ifndef CGTRACE_H
#define CGTRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CGTRACE_SCHEMA "candle-graph/trace/6"
#define CGTRACE_VERSION "0.3.0"

/* Record kinds in stream order of the spec; the last ones are cgprobe extensions. */
enum cgtrace_kind {
	CGTRACE_KIND_META,
	CGTRACE_KIND_SPAN_START,
	CGTRACE_KIND_SPAN_END,
	CGTRACE_KIND_OP,
	CGTRACE_KIND_TENSOR,
	CGTRACE_KIND_MEMORY,
	CGTRACE_KIND_DEVICE_MEMORY,
	CGTRACE_KIND_GRADIENT,
	CGTRACE_KIND_EDGE,
	/*
	 * Extension: the device identity table, from the cgprobe_device_* fields
	 * (or an older probe's `cgprobe_device` kind), see docs/trace-format.md.
	 */
	CGTRACE_KIND_DEVICE_INFO,
	CGTRACE_KIND_COUNT
};

enum cgtrace_phase { CGTRACE_PHASE_TRAIN, CGTRACE_PHASE_INFER };
enum cgtrace_timing { CGTRACE_TIMING_HOST, CGTRACE_TIMING_DEVICE_SYNCHRONIZED };
enum cgtrace_span_kind { CGTRACE_SPAN_FUNCTION, CGTRACE_SPAN_OP, CGTRACE_SPAN_MODULE };
enum cgtrace_step {
	CGTRACE_STEP_NONE,
	CGTRACE_STEP_FORWARD,
	CGTRACE_STEP_BACKWARD,
	CGTRACE_STEP_OPTIMIZER
};
enum cgtrace_action { CGTRACE_ALLOC, CGTRACE_FREE };
enum cgtrace_category {
	CGTRACE_CAT_PARAMETER,
	CGTRACE_CAT_ACTIVATION,
	CGTRACE_CAT_GRADIENT,
	CGTRACE_CAT_OPTIMIZER,
	CGTRACE_CAT_OTHER,
	CGTRACE_CAT_COUNT,
	/* Writer only: take the category from the innermost open step span. */
	CGTRACE_CAT_AUTO = 0xff
};
enum cgtrace_grad_state {
	CGTRACE_GRAD_PRESENT,
	CGTRACE_GRAD_MISSING,
	CGTRACE_GRAD_ZERO,
	CGTRACE_GRAD_NON_FINITE
};

/* Names as they appear in the format, or NULL for an out-of-range value. */
const char *cgtrace_kind_name(enum cgtrace_kind k);
const char *cgtrace_phase_name(enum cgtrace_phase p);
const char *cgtrace_timing_name(enum cgtrace_timing t);
const char *cgtrace_span_kind_name(enum cgtrace_span_kind k);
const char *cgtrace_step_name(enum cgtrace_step s);
const char *cgtrace_action_name(enum cgtrace_action a);
const char *cgtrace_category_name(enum cgtrace_category c);
const char *cgtrace_grad_state_name(enum cgtrace_grad_state s);

/* Size of one element of a dtype (0 when unknown) and the derived storage size. */
uint64_t cgtrace_dtype_size(const char *dtype, size_t len);
uint64_t cgtrace_storage_bytes(const uint64_t *shape, size_t ndim, const char *dtype,
			       size_t dtype_len);

/* ------------------------------------------------------------------ */
/* Reading                                                            */
/* ------------------------------------------------------------------ */

struct cgtrace_doc;

struct cgtrace_read_options {
	/*
	 * Called with each warning line ("PATH:LINE: message", or "PATH: trace
	 * truncated after N records" for a compact trace). NULL: the
	 * library prints nothing; the warning is left in err (see below).
	 */
	void (*warn)(void *user, const char *line);
	void *user;
};

/*
 * Reads a trace in any of its encodings, told apart by their first bytes,
 * never by the name: JSONL, zstd-compressed JSONL or the compact encoding
 * (docs/compact-format.md); "-" reads standard input. On failure returns
 * -ENOENT & co. for I/O errors or -EBADMSG for a trace that breaks the
 * format, with "PATH:LINE: message" in err ("PATH: record N: message" for
 * a compact trace, N counting its records from 1). On success err holds
 * the warning lines when there were any and opts has no warn callback (a
 * cut-off last line or a compact trace cut inside a block, a streamed
 * read's fallback), one per line, else "".
 */
int cgtrace_doc_read(const char *path, const struct cgtrace_read_options *opts,
		     struct cgtrace_doc **out, char *err, size_t errlen);
/* Same from memory; name is used in messages. */
int cgtrace_doc_read_mem(const char *name, const void *data, size_t len,
			 const struct cgtrace_read_options *opts, struct cgtrace_doc **out,
			 char *err, size_t errlen);

/*
 * Read flag: stream the memory records. The document keeps every record but
 * the memory records, which it applies to the memory analysis as they are
 * read, and the device_memory checkpoints, of which it keeps each device's
 * capacity and the checkpoints of an OOM (has_oom_request). Its memory is
 * bounded by the allocations live at once and the distinct strings, not by
 * the record count. cgtrace_memory_analyze, cgtrace_doc_summary and
 * cgtrace_doc_summary_report give the same answers as on a full document;
 * what needs the records themselves (cgtrace_doc_memory, whose count is 0,
 * cgtrace_memory_timeline, cgtrace_doc_export_jsonl) holds nothing or
 * returns -ENODATA. Memory records wait in a window (128 K records) so that
 * the interleaved blocks of a writer's threads apply in analysis order; a
 * trace whose memory records go back in time further (another producer's)
 * is read again in full, with the warning "PATH: memory records
 * out of timestamp order; analysed in memory": a regular file from where it
 * began, standard input or a pipe from the spool it was copied to as it was
 * read (an unlinked file in $TMPDIR, else /tmp); memory is bounded by the
 * record count then.
 */
#define CGTRACE_READ_STREAM_MEMORY (1u << 0)
/*
 * Read flag: note the extension fields and kinds the trace uses, the ones
 * a strict trace/6 reader does not know (docs/trace-format.md,
 * Extensions): cgtrace_doc_extension_count and cgtrace_doc_extension.
 */
#define CGTRACE_READ_EXTENSIONS (1u << 1)

/* cgtrace_doc_read and cgtrace_doc_read_mem with CGTRACE_READ_* flags (0: the same). */
int cgtrace_doc_read_flags(const char *path, const struct cgtrace_read_options *opts,
			   unsigned flags, struct cgtrace_doc **out, char *err, size_t errlen);
int cgtrace_doc_read_mem_flags(const char *name, const void *data, size_t len,
			       const struct cgtrace_read_options *opts, unsigned flags,
			       struct cgtrace_doc **out, char *err, size_t errlen);
void cgtrace_doc_free(struct cgtrace_doc *doc);

/* Number of records of a kind held by the document (spans for SPAN_START). */
size_t cgtrace_doc_count(const struct cgtrace_doc *doc, enum cgtrace_kind kind);
/*
 * Number of records of a kind the trace held, kept or not: as
 * cgtrace_doc_count, but a streamed document's memory and device_memory
 * records count too.
 */
uint64_t cgtrace_doc_records(const struct cgtrace_doc *doc, enum cgtrace_kind kind);
/* True for a document read with CGTRACE_READ_STREAM_MEMORY (and not read again in full). */
bool cgtrace_doc_streamed(const struct cgtrace_doc *doc);
/* True when the last line was cut short and ignored (a compact trace: cut inside a block). */
bool cgtrace_doc_truncated(const struct cgtrace_doc *doc);
/*
 * True when the document is a compact trace cut inside a block, with the
 * records decoded before the cut in *records (NULL: not wanted); false
 * otherwise (a JSONL trace's cut-off last line included).
 */
bool cgtrace_doc_cut_in_block(const struct cgtrace_doc *doc, uint64_t *records);

struct cgtrace_tag {
	const char *key;
	const char *value;
};

struct cgtrace_meta {
	const char *schema;
	const char *run_id;
	const char *correlation_id;
	const char *entrypoint;
	enum cgtrace_phase phase;
	const char *timestamp;
	uint64_t capture_step;
	uint64_t warmup_steps;
	const char *device;
	bool measured_region_device_synchronized;
	enum cgtrace_timing timing_mode;
	const struct cgtrace_tag *tags; /* sorted by key */
	size_t n_tags;
	const char *candle_version; /* NULL when absent */
};

struct cgtrace_span {
	const char *id;
	const char *parent_id; /* NULL for a root */
	const char *name;
	enum cgtrace_span_kind kind;
	bool measured;
	uint64_t start_ns;
	bool closed;
	uint64_t duration_ns;
	enum cgtrace_step step;
	/* Extension fields cgprobe_thread (the opening thread) and cgprobe_thread_name. */
	bool has_thread;
	uint64_t thread;
	const char *thread_name; /* NULL when absent */
};

struct cgtrace_op {
	const char *span_id;
	const char *op_name;
	const char *const *inputs;
	size_t n_inputs;
	const char *output; /* NULL when absent */
	const uint64_t *shape;
	size_t ndim;
	const char *dtype;
	const char *device;
	uint64_t duration_ns;
	uint64_t timestamp_ns;
	uint64_t storage_bytes; /* derived when the record had none */
	uint64_t input_storage_bytes;
};

struct cgtrace_tensor {
	const char *span_id;
	const char *tensor_id;
	const uint64_t *shape;
	size_t ndim;
	const char *dtype;
	const char *device;
	bool requires_grad;
	uint64_t storage_bytes;
	enum cgtrace_category category;
};

struct cgtrace_memory {
	uint64_t timestamp_ns;
	const char *tensor_id;
	const char *span_id;
	const char *op_name; /* NULL when absent */
	const char *device;
	uint64_t bytes;
	enum cgtrace_action action;
	const uint64_t *shape;
	size_t ndim;
	const char *dtype;
	enum cgtrace_category category;
	bool managed; /* extension field `managed` */
	/* Extension field `cgprobe_preexisting`: an alloc of a block live before recording began. */
	bool preexisting;
	/*
	 * Extension field `cgprobe_stack` (docs/stacks.md): the id of the
	 * allocation's call stack, 0 for none. A free has none: its
	 * allocation's stack is the one.
	 */
	uint64_t stack_id;
};

/*
 * Call stacks and modules (docs/stacks.md), in full and streamed
 * documents alike: one entry per distinct stack, one per module recorded.
 * frames: innermost first, return addresses (resolve frame - 1).
 * defined_ns, recorded_ns: the timestamp of the memory record that
 * defined the stack, or carried the module. Pointers are valid as long as
 * the document.
 */
struct cgtrace_stack {
	uint64_t id;
	const uint64_t *frames;
	size_t n_frames;
	uint64_t defined_ns;
};

struct cgtrace_module {
	const char *path;
	uint64_t base;  /* the load bias: address in memory = address in the file + base */
	uint64_t start; /* [start, end): the module's PT_LOAD address range */
	uint64_t end;
	const char *build_id; /* lowercase hex of the GNU build id; NULL: none */
	uint64_t recorded_ns;
};

struct cgtrace_device_memory {
	uint64_t timestamp_ns;
	const char *device;
	uint64_t used_bytes;
	uint64_t free_bytes;
	bool has_reserved;
	uint64_t reserved_bytes;
	bool has_oom_request; /* extension field `oom_request_bytes` */
	uint64_t oom_request_bytes;
	bool has_allocated; /* extension field `cgprobe_allocated_bytes` */
	uint64_t cgprobe_allocated_bytes;
};

struct cgtrace_gradient {
	const char *event_id;
	const char *root;
	const char *key;
	enum cgtrace_grad_state state;
	bool has_norm;
	double norm;
};

struct cgtrace_edge {
	const char *from_span;
	const char *to_span;
	uint64_t duration_ns;
};

struct cgtrace_device_info {
	const char *device;
	const char *uuid;
	const char *name; /* NULL when absent */
	bool has_total;
	uint64_t total_bytes;
};

void cgtrace_doc_meta(const struct cgtrace_doc *doc, struct cgtrace_meta *out);
/* Spans sorted bytewise by id. */
void cgtrace_doc_span(const struct cgtrace_doc *doc, size_t i, struct cgtrace_span *out);
void cgtrace_doc_op(const struct cgtrace_doc *doc, size_t i, struct cgtrace_op *out);
void cgtrace_doc_tensor(const struct cgtrace_doc *doc, size_t i, struct cgtrace_tensor *out);
void cgtrace_doc_memory(const struct cgtrace_doc *doc, size_t i, struct cgtrace_memory *out);
void cgtrace_doc_device_memory(const struct cgtrace_doc *doc, size_t i,
			       struct cgtrace_device_memory *out);
void cgtrace_doc_gradient(const struct cgtrace_doc *doc, size_t i, struct cgtrace_gradient *out);
void cgtrace_doc_edge(const struct cgtrace_doc *doc, size_t i, struct cgtrace_edge *out);
/*
 * Device identities, one per device: the first a trace gives (identity
 * fields on the device's first memory or device_memory record, or an older
 * probe's cgprobe_device record), in the order they first appear.
 */
void cgtrace_doc_device_info(const struct cgtrace_doc *doc, size_t i,
			     struct cgtrace_device_info *out);
/* Later identities of a device that differ from its first, which the table keeps. */
uint64_t cgtrace_doc_device_info_conflicts(const struct cgtrace_doc *doc);

/*
 * An extension a trace read with CGTRACE_READ_EXTENSIONS uses: a field
 * (its JSON key) on records of kind, or (field NULL) the kind itself; the
 * line of its first record (first_is_record: the record number, in a
 * compact trace) and how many records carry it. In order of first use.
 */
struct cgtrace_extension {
	enum cgtrace_kind kind;
	const char *kind_name;
	const char *field;
	uint64_t first;
	bool first_is_record;
	uint64_t records;
};
size_t cgtrace_doc_extension_count(const struct cgtrace_doc *doc);
void cgtrace_doc_extension(const struct cgtrace_doc *doc, size_t i, struct cgtrace_extension *out);

/* Stacks: how many, by id (NULL when never defined), the i-th in definition order. */
size_t cgtrace_doc_stack_count(const struct cgtrace_doc *doc);
const struct cgtrace_stack *cgtrace_doc_stack(const struct cgtrace_doc *doc, uint64_t id);
const struct cgtrace_stack *cgtrace_doc_stack_at(const struct cgtrace_doc *doc, size_t i);
/* Modules in the order recorded (a module mapped again appears again). */
size_t cgtrace_doc_module_count(const struct cgtrace_doc *doc);
const struct cgtrace_module *cgtrace_doc_module(const struct cgtrace_doc *doc, size_t i);

/* ------------------------------------------------------------------ */
/* Reading record by record                                           */
/* ------------------------------------------------------------------ */

/*
 * A streaming reader: one record at a time in file order, in memory bounded
 * by the longest line, the strings of the current record and the spans seen
 * (kept for the span rules), never by the record count. A compact trace
 * adds one block, its string and class tables and its live allocations.
 *
 * Checked per record, with the document reader's messages: JSON strictness,
 * the schema (kinds, fields, types, enumerations), a cut-off last line (the
 * same warning, and the end of the trace), meta first and only once with the
 * supported schema, span ids (a duplicate span_start, a span_end of an
 * unknown or already closed span) and, at the end, that a meta record was
 * seen. Only the document build checks its own limits (65535 devices, 4 GiB
 * of distinct strings or shapes), which a stream does not have.
 */
struct cgtrace_reader;

/* A span_end record; its span_start came earlier in the stream. */
struct cgtrace_span_end {
	const char *id;
	uint64_t duration_ns;
};

/*
 * One record: its kind, its 1-based line (in a compact trace, which has no
 * lines, its 1-based record number), and a view of its fields valid
 * until the next call on the reader. The views are the document's (the
 * union member matching kind is set): meta tags sorted by key, a span_start
 * as a cgtrace_span that is not closed, an op's or tensor's storage_bytes
 * derived when the record had none. Absent optional strings are NULL.
 */
struct cgtrace_record {
	enum cgtrace_kind kind;
	uint64_t line;
	union {
		const struct cgtrace_meta *meta;
		const struct cgtrace_span *span_start;
		const struct cgtrace_span_end *span_end;
		const struct cgtrace_op *op;
		const struct cgtrace_tensor *tensor;
		const struct cgtrace_memory *memory;
		const struct cgtrace_device_memory *device_memory;
		const struct cgtrace_gradient *gradient;
		const struct cgtrace_edge *edge;
		const struct cgtrace_device_info *device_info;
	} u;
};

/*
 * Opens a JSONL, zstd-compressed JSONL or compact trace ("-" reads
 * standard input, which stays open), told apart by content. -ENOENT & co. when it cannot be opened
 * (*out is then NULL), -ENOMEM. opts->warn receives the warning line.
 */
int cgtrace_reader_open(struct cgtrace_reader **out, const char *path,
			const struct cgtrace_read_options *opts);
/* Same over memory, which must outlive the reader; name is used in messages. */
int cgtrace_reader_open_mem(struct cgtrace_reader **out, const char *name, const void *data,
			    size_t len, const struct cgtrace_read_options *opts);
/*
 * 1 with the next record in *rec, 0 at the end, or a negative errno
 * (-EBADMSG for a broken trace) with the message in cgtrace_reader_message;
 * an error or the end is sticky.
 */
int cgtrace_reader_next(struct cgtrace_reader *r, struct cgtrace_record *rec);
/*
 * After an error, "PATH:LINE: message" ("PATH: record N: message" in a
 * compact trace; "PATH: message" for an I/O error or a rule of the whole
 * stream); at the end, the warning line when the trace was cut short and
 * opts had no warn callback; else "".
 */
const char *cgtrace_reader_message(const struct cgtrace_reader *r);
/* True once a cut-off last line (a compact trace: a cut block) was met and ignored. */
bool cgtrace_reader_truncated(const struct cgtrace_reader *r);
void cgtrace_reader_close(struct cgtrace_reader *r);
/*
 * True when the record the last cgtrace_reader_next gave (a memory or
 * device_memory record) carries its device's identity as cgprobe_device_*
 * fields, with them in *out (valid until the next call). An older trace's
 * identities come as CGTRACE_KIND_DEVICE_INFO records instead.
 */
bool cgtrace_reader_device_identity(const struct cgtrace_reader *r,
				    struct cgtrace_device_info *out);

/*
 * Writes the reader's remaining records to fd in file order, each through
 * the project's JSONL formatter (so a trace cgprobe wrote comes out byte for
 * byte, any other in the format's field order and spelling; unknown fields
 * are dropped). A read error returns as cgtrace_reader_next's, with its
 * message; a write error returns -errno and leaves the message "".
 */
int cgtrace_reader_export_jsonl(struct cgtrace_reader *r, int fd);
/*
 * Export flag: strict trace/6, without any extension field or kind (those
 * of docs/trace-format.md, Extensions, stacks and modules included): the
 * fields are left out and the records of an extension kind are dropped.
 */
#define CGTRACE_EXPORT_STRICT (1u << 0)
/* cgtrace_reader_export_jsonl and cgtrace_doc_export_jsonl with CGTRACE_EXPORT_* flags. */
int cgtrace_reader_export_jsonl_flags(struct cgtrace_reader *r, int fd, unsigned flags);
int cgtrace_doc_export_jsonl_flags(const struct cgtrace_doc *doc, int fd, unsigned flags);

/*
 * The compact binary encoding of trace/6 (docs/compact-format.md): the
 * records the JSONL exports write, in the same order, memory, span and
 * device checkpoints packed into a few bytes each, the rest as their JSONL
 * text, in blocks compressed with zstd at zstd_level (0: stored).
 * Decoding it and exporting as JSONL gives the JSONL export's bytes.
 * Errors as cgtrace_reader_export_jsonl's.
 */
int cgtrace_reader_export_compact(struct cgtrace_reader *r, int fd, int zstd_level);
/* As above, in canonical order (cgtrace_doc_export_jsonl's). */
int cgtrace_doc_export_compact(const struct cgtrace_doc *doc, int fd, int zstd_level);

/* The fields the compact stats break the bytes down by (cgtrace_compact_field_name). */
#define CGTRACE_COMPACT_FIELDS 10

struct cgtrace_compact_options {
	int zstd_level;
	size_t block_raw; /* raw bytes a block ends at; 0: the probe's 4 MiB */
	/* Fill ablated_bytes: one more encoding per field, so about ten times the work. */
	bool stats;
};

struct cgtrace_compact_stats {
	uint64_t records, blocks;
	uint64_t raw_bytes;    /* items before zstd */
	uint64_t stored_bytes; /* the output: file and block headers included */
	uint64_t field_raw_bytes[CGTRACE_COMPACT_FIELDS];
	/* The output's size with the field's values all written as 0 (options.stats). */
	uint64_t ablated_bytes[CGTRACE_COMPACT_FIELDS];
};

/* "opcode", "timestamp", ...; NULL past the last. */
const char *cgtrace_compact_field_name(unsigned field);
/* The exports above with options; stats, when not NULL, is filled on success. */
int cgtrace_reader_export_compact_opts(struct cgtrace_reader *r, int fd,
				       const struct cgtrace_compact_options *opts,
				       struct cgtrace_compact_stats *stats);
int cgtrace_doc_export_compact_opts(const struct cgtrace_doc *doc, int fd,
				    const struct cgtrace_compact_options *opts,
				    struct cgtrace_compact_stats *stats);

/* ------------------------------------------------------------------ */
/* Analyses                                                           */
/* ------------------------------------------------------------------ */

struct cgtrace_summary {
	uint64_t op_count;
	uint64_t total_ns;
	uint64_t span_count;
	uint64_t root_span_count;
	uint64_t max_depth;
	uint64_t alloc_count;
	uint64_t free_count;
	uint64_t peak_bytes;
};

/* The format's summary of a trace; linear in the number of spans and records. */
int cgtrace_doc_summary(const struct cgtrace_doc *doc, struct cgtrace_summary *out);

struct cgtrace_device_peak {
	const char *device;
	uint64_t capacity_bytes; /* 0 when unknown */
	uint64_t peak_bytes;
	uint64_t peak_timestamp_ns;
	uint64_t alloc_count;
	uint64_t free_count;
	uint64_t final_bytes; /* live bytes after the last record */
};

struct cgtrace_live_alloc {
	const char *tensor_id;
	const char *span_id;
	const char *op_name; /* NULL when absent */
	uint64_t bytes;
	const uint64_t *shape;
	size_t ndim;
	const char *dtype;
	const char *device;
	enum cgtrace_category category;
	uint64_t timestamp_ns;
	uint64_t stack_id; /* the allocation's call stack; 0: none recorded */
};

struct cgtrace_memory_report {
	uint64_t alloc_count;
	uint64_t free_count;
	uint64_t total_alloc_bytes;
	uint64_t peak_bytes;
	uint64_t peak_timestamp_ns;
	const char *peak_device; /* "" when there are no memory records */
	uint64_t peak_by_category[CGTRACE_CAT_COUNT];
	uint64_t autograd_retained_bytes;
	struct cgtrace_device_peak *by_device; /* sorted by device */
	size_t n_devices;
	struct cgtrace_live_alloc *peak_breakdown; /* largest first, then tensor_id */
	size_t n_breakdown;
	/* Anomalies a validator reports: an alloc of an id already live, a free of an unknown id. */
	uint64_t realloc_live_count;
	uint64_t unknown_free_count;
};

/* The format's memory analysis. Free the report with cgtrace_memory_report_free. */
int cgtrace_memory_analyze(const struct cgtrace_doc *doc, struct cgtrace_memory_report **out);
void cgtrace_memory_report_free(struct cgtrace_memory_report *report);

struct cgtrace_timeline_point {
	uint64_t timestamp_ns;
	const char *device;
	uint64_t live_bytes;
	bool has_free;
	uint64_t free_bytes; /* capacity - live, when the capacity is known */
	size_t record;       /* index of the memory record, see cgtrace_doc_memory */
	/* The device's live bytes by category after the record (they sum to live_bytes). */
	uint64_t by_category[CGTRACE_CAT_COUNT];
	enum cgtrace_action action;
	/* What the record added or took: a free of a known allocation takes its bytes and category. */
	uint64_t bytes;
	enum cgtrace_category category;
};

/*
 * Calls fn once per memory record in analysis order; a non-zero return
 * stops. -ENODATA for a streamed document, which keeps no records.
 */
int cgtrace_memory_timeline(const struct cgtrace_doc *doc,
			    int (*fn)(void *user, const struct cgtrace_timeline_point *p),
			    void *user);

/*
 * The timeline of the trace at path ("-": standard input) without keeping
 * its records: fn is called as cgtrace_memory_timeline calls it, once per
 * memory record in analysis order (record: its index among the memory
 * records in file order), with strings valid during the call. The trace is
 * read twice, each time as a streamed read (CGTRACE_READ_STREAM_MEMORY),
 * first for the devices' capacities, then for the points; standard input or
 * a pipe is spooled for the second read as for a streamed read's fallback.
 * A trace whose memory records go back in time past the streamed read's
 * window is read into a full document after its first read, with that read's warning. Warnings go to
 * opts->warn, else into err, once. Returns fn's non-zero return when it
 * stopped, else as cgtrace_doc_read.
 */
int cgtrace_memory_timeline_read(const char *path, const struct cgtrace_read_options *opts,
				 int (*fn)(void *user, const struct cgtrace_timeline_point *p),
				 void *user, char *err, size_t errlen);

/* ------------------------------------------------------------------ */
/* Views: bounded summaries that plots, timelines and reports draw    */
/* ------------------------------------------------------------------ */

/*
 * A view is what every picture of a trace draws, reduced so that its size
 * does not grow with the record count: live bytes per device on one grid of
 * time buckets, each bucket at the instant its device's total was highest
 * (so the highest bucket is the true peak and no peak is lost), the device
 * checkpoints one per bucket, the largest allocations one by one, memory
 * by span. It is built in one streamed read (docs/views.md), in memory
 * bounded as a streamed read's plus the view itself.
 */
struct cgtrace_view_options {
	/*
	 * Time buckets across the trace at most; 0: 2000; at most 100000. A
	 * bucket is a power of two nanoseconds, so a trace gets from half as
	 * many to as many.
	 */
	size_t buckets;
	size_t max_allocs; /* largest allocations kept one by one; 0: 500; at most 100000 */
	const struct cgtrace_read_options *read; /* warnings; NULL: into err */
};

/* One device in one time bucket [view->start_ns + i * bucket_ns, + bucket_ns). */
struct cgtrace_view_bucket {
	/*
	 * The highest live bytes of the device in the bucket, counting what
	 * was live when it began, the instant it was reached (the bucket's
	 * start when it was carried in), and the live bytes by category then,
	 * which sum to max_bytes.
	 */
	uint64_t max_ns, max_bytes;
	uint64_t max_by_category[CGTRACE_CAT_COUNT];
	uint64_t max_live_count; /* the allocations live then */
	/* After the bucket's last record (the bucket's start and the carried bytes when none). */
	uint64_t end_ns, end_bytes;
	uint64_t end_by_category[CGTRACE_CAT_COUNT];
	uint64_t records; /* the device's memory records in the bucket */
	uint64_t allocs, alloc_bytes;
	/*
	 * Of max_bytes, the bytes of view->allocs (those kept one by one) live
	 * at max_ns (before the records at max_ns for a maximum carried in,
	 * after them otherwise), and how many they are.
	 */
	uint64_t drawn_bytes, drawn_count;
};

/* A device checkpoint (device_memory record). */
struct cgtrace_view_checkpoint {
	uint64_t timestamp_ns, used_bytes, free_bytes;
	bool has_reserved;
	uint64_t reserved_bytes;
	bool oom; /* an out-of-memory failure: oom_request_bytes is set */
	uint64_t oom_request_bytes;
};

struct cgtrace_view_device {
	const char *device;
	uint64_t capacity_bytes; /* 0: unknown */
	uint64_t peak_bytes, peak_ns; /* 0, 0 without memory records */
	uint64_t peak_by_category[CGTRACE_CAT_COUNT];
	uint64_t alloc_count, free_count, alloc_bytes, final_bytes;
	struct cgtrace_view_bucket *buckets; /* view->n_buckets, on the shared grid */
	/* Per bucket with checkpoints, the one with the highest used bytes; time order. */
	struct cgtrace_view_checkpoint *checkpoints;
	size_t n_checkpoints;
	/* Every out-of-memory checkpoint, up to 10000 (n_ooms counts them all). */
	struct cgtrace_view_checkpoint *ooms;
	size_t n_ooms_kept;
	uint64_t n_ooms;
};

/* One allocation kept one by one: the largest of the trace, the earlier first among equals. */
struct cgtrace_view_alloc {
	uint64_t alloc_ns;
	bool freed;
	uint64_t free_ns; /* 0 when not freed */
	uint64_t bytes;
	size_t device; /* index in view->devices */
	enum cgtrace_category category;
	uint64_t stack_id; /* 0: none */
	bool preexisting;  /* cgprobe_preexisting: live when a capture window began */
	const char *tensor_id, *span_id;
	const char *op_name; /* NULL when absent */
};

/* The memory records a span's allocations and frees made (the records' span_id). */
struct cgtrace_view_span_memory {
	const char *span_id;
	uint64_t alloc_count, alloc_bytes, free_count, free_bytes;
};

struct cgtrace_view {
	/* The streamed document of the first read: meta, spans, stacks, modules, devices. */
	struct cgtrace_doc *doc;
	/* cgtrace_memory_analyze of doc: peaks, the global peak's breakdown. */
	struct cgtrace_memory_report *report;
	/*
	 * The grid: n_buckets of bucket_ns each (a power of two) from start_ns
	 * (a multiple of bucket_ns, at or before the first timestamp of the
	 * memory and device_memory records), the last one holding end_ns, the
	 * last timestamp; 0, 0, 1, 1 without any record.
	 */
	uint64_t start_ns, end_ns, bucket_ns;
	size_t n_buckets;
	struct cgtrace_view_device *devices; /* sorted by device, as report->by_device */
	size_t n_devices;
	struct cgtrace_view_alloc *allocs; /* largest first, then alloc_ns */
	size_t n_allocs;
	/* By span, for the spans with memory records, sorted by span_id bytewise. */
	struct cgtrace_view_span_memory *spans;
	size_t n_spans;
	/* CGPROBE_CAPTURE=update (meta tag cgprobe_capture): the window, [0, root span's end]. */
	bool has_capture;
	uint64_t capture_begin_ns, capture_end_ns;
};

/*
 * Reads the trace at path ("-": standard input) and builds its view, in one
 * streamed read (a trace whose memory records go back in time is read in
 * full, as a streamed read falls back). Errors and warnings as
 * cgtrace_doc_read's.
 * Free it with cgtrace_view_free.
 */
int cgtrace_view_read(const char *path, const struct cgtrace_view_options *opts,
		      struct cgtrace_view **out, char *err, size_t errlen);
void cgtrace_view_free(struct cgtrace_view *view);
/* The bucket holding t (clamped to the grid). */
size_t cgtrace_view_bucket_of(const struct cgtrace_view *view, uint64_t t);

/*
 * A device's live bytes over the trace in n cells, each the highest live
 * bytes in its share of [*t0, *t1] (the first memory record of any device
 * to the last memory or device_memory record), for a sparkline; a cell
 * before the device's first record is 0. A streamed document keeps 256
 * slots per device as it reads (so n beyond about 128 adds no detail), a
 * full one replays its records. -ENOENT when the device has no memory
 * records, -EINVAL when n is 0.
 */
int cgtrace_doc_live_cells(const struct cgtrace_doc *doc, const char *device, uint64_t *out,
			   size_t n, uint64_t *t0, uint64_t *t1);

/* Re-emits the document as JSONL, records in the format's stream order; -ENODATA when streamed. */
int cgtrace_doc_export_jsonl(const struct cgtrace_doc *doc, int fd);

/*
 * The summary and the memory report it rests on, from one analysis. The
 * report has no peak breakdown (n_breakdown is 0): what a summary shows
 * needs only the peaks. Free it with cgtrace_memory_report_free.
 */
int cgtrace_doc_summary_report(const struct cgtrace_doc *doc, struct cgtrace_summary *out,
			       struct cgtrace_memory_report **report);

/* The allocations live at the peak that share an op_name. */
struct cgtrace_op_group {
	const char *op_name; /* NULL for allocations without one */
	uint64_t count;
	uint64_t bytes;      /* saturating sum */
};

/*
 * Groups report->peak_breakdown by op_name: every group, most bytes first,
 * then op_name bytewise (NULL first). *out is NULL when n is 0; free it
 * with cgtrace_op_groups_free. O(n log n) in the live allocations.
 */
int cgtrace_memory_peak_by_op(const struct cgtrace_memory_report *report,
			      struct cgtrace_op_group **out, size_t *n);
void cgtrace_op_groups_free(struct cgtrace_op_group *groups);

/*
 * The cgprobe_min_bytes tag of meta (allocations under it were not
 * recorded): 0 with *out, -ENOENT when absent, -EINVAL when it is not a
 * plain decimal number (tags are free text; readers then ignore it).
 */
int cgtrace_doc_min_bytes(const struct cgtrace_doc *doc, uint64_t *out);

/* Most bytes cgtrace_json_string writes for n input bytes. */
#define CGTRACE_JSON_STRING_MAX(n) (6 * (size_t)(n) + 2)

/*
 * Writes s[0..n) as a quoted JSON string, escaped as the trace writers
 * escape (ill-formed UTF-8 becomes U+FFFD), into out, which must hold
 * CGTRACE_JSON_STRING_MAX(n) bytes. Returns the length; no NUL is written.
 */
size_t cgtrace_json_string(char *out, const char *s, size_t n);

/* ------------------------------------------------------------------ */
/* Call stacks and offline symbols                                    */
/* ------------------------------------------------------------------ */

/*
 * One frame of a resolved return address. An address inside inlined code
 * gives several: the inlined functions innermost first (inlined set), then
 * the function they were inlined into.
 */
struct cgtrace_frame {
	uint64_t address;     /* the return address as recorded */
	const char *function; /* NULL: unknown */
	const char *file;     /* NULL: no line information */
	uint32_t line;        /* 0 with file NULL */
	const char *module;   /* the module's path; NULL: no recorded module covers it */
	uint64_t offset;      /* address - 1 - the module's base (address - 1 without one) */
	bool inlined;
};

struct cgtrace_symbols;

/*
 * Symbols for the modules a trace recorded, resolved from the files on
 * disk through libdw, with separate debug files found by build id under
 * the directories of CGTRACE_DEBUG_DIR (colon-separated) and
 * /usr/lib/debug. A module whose file is missing or whose build id differs
 * from the recorded one keeps module+offset frames, with one warning line
 * ("PATH: ...") to opts->warn. The modules are copied.
 */
int cgtrace_symbols_open(struct cgtrace_symbols **out, const struct cgtrace_module *mods,
			 size_t n, const struct cgtrace_read_options *opts);
/*
 * The frames of a return address of a stack defined at defined_ns (the
 * module entry covering address - 1 recorded last at or before it, else
 * the earliest recorded after it); *n >= 1. Each distinct address is
 * resolved once; the frames stay valid until the symbols are closed.
 */
int cgtrace_symbols_resolve(struct cgtrace_symbols *s, uint64_t address, uint64_t defined_ns,
			    const struct cgtrace_frame **frames, size_t *n);
/* A stack resolved: every return address's frames in order, innermost first. */
struct cgtrace_resolved_stack {
	const struct cgtrace_frame *const *frames;
	size_t n_frames;
	/*
	 * The allocation site: the first frame in the user's code
	 * (cgtrace_frame_code; docs/symbols.md, "The user's code"); without
	 * one, the first outside the allocator, else the outermost; 0 when
	 * the stack has no frames.
	 */
	size_t site;
};

/* Resolves every frame of st; out's arrays stay valid until the symbols are closed. */
int cgtrace_symbols_stack(struct cgtrace_symbols *s, const struct cgtrace_stack *st,
			  struct cgtrace_resolved_stack *out);
/* Whose code a frame is: docs/symbols.md, "The user's code", has the rules. */
enum cgtrace_code {
	CGTRACE_CODE_USER,      /* the program's own: where sites are */
	CGTRACE_CODE_RUNTIME,   /* a language runtime's own layers: the C and C++ libraries */
	CGTRACE_CODE_ALLOCATOR, /* the allocator and the probe */
};
enum cgtrace_code cgtrace_frame_code(const struct cgtrace_frame *f);
/* True for a frame of the allocator or the probe (cgtrace_frame_code's CGTRACE_CODE_ALLOCATOR). */
bool cgtrace_frame_is_allocator(const struct cgtrace_frame *f);
/* How many addresses libdw was asked about so far (each distinct one once). */
uint64_t cgtrace_symbols_lookups(const struct cgtrace_symbols *s);
void cgtrace_symbols_close(struct cgtrace_symbols *s);

/* What the allocations of one call stack did on one device. */
struct cgtrace_stack_stat {
	uint64_t stack_id; /* 0: allocations recorded without a stack */
	const char *device;
	uint64_t count, total_bytes;         /* allocations and their bytes */
	uint64_t peak_count, peak_bytes;     /* live at the device's peak */
	uint64_t leaked_count, leaked_bytes; /* never freed */
	/*
	 * Freed by the very next memory record after its own alloc, no other
	 * alloc or free in between, as heaptrack counts temporaries.
	 */
	uint64_t temporary_count;
};

/*
 * One entry per (stack, device) with allocations, sorted by device, then
 * stack id; *out is NULL when n is 0. A streamed document answers from
 * what it kept while it was read (memory bounded by the allocations live
 * at once and the distinct stacks), a full one by replaying its records.
 * Free with cgtrace_stack_stats_free.
 */
int cgtrace_stack_stats(const struct cgtrace_doc *doc, struct cgtrace_stack_stat **out,
			size_t *n);
void cgtrace_stack_stats_free(struct cgtrace_stack_stat *stats);

/* ------------------------------------------------------------------ */
/* Writing: a recording session                                      */
/* ------------------------------------------------------------------ */

/* A session is used by one thread at a time: callers serialize. */
struct cgtrace_session;

struct cgtrace_run {
	const char *entrypoint;
	const char *correlation_id; /* NULL: "<entrypoint>/update-<capture_step>" */
	enum cgtrace_phase phase;
	uint64_t capture_step;      /* one-based, > 0 */
	bool warmup_steps_set;      /* false: capture_step - 1 */
	uint64_t warmup_steps;
	const char *device;
	bool measured_region_device_synchronized;
	enum cgtrace_timing timing_mode;
	const struct cgtrace_tag *tags; /* written sorted by key; a repeated key keeps the last */
	size_t n_tags;
	const char *candle_version; /* NULL: omitted */
};

/*
 * Creates the trace file (O_CREAT|O_EXCL|O_CLOEXEC, missing directories are
 * created; an existing character device or FIFO is opened as it is) and
 * writes the meta record and the root span `s1` named after the entrypoint.
 */
int cgtrace_session_open(struct cgtrace_session **out, const char *path,
			 const struct cgtrace_run *run);
/* Same on an already open descriptor, which the session then owns. */
int cgtrace_session_open_fd(struct cgtrace_session **out, int fd, const struct cgtrace_run *run);

/* Nanoseconds since the session opened. */
uint64_t cgtrace_session_elapsed_ns(const struct cgtrace_session *s);

/* Opens a span under the innermost open one; *id receives its number (2, 3, ...). */
int cgtrace_session_begin_span(struct cgtrace_session *s, const char *name,
			       enum cgtrace_span_kind kind, enum cgtrace_step step, bool measured,
			       uint64_t *id);
/* Closes the innermost open span, which must be id; duration measured by the session. */
int cgtrace_session_end_span(struct cgtrace_session *s, uint64_t id);
/* The innermost open span (1 when only the root is open). */
uint64_t cgtrace_session_current_span(const struct cgtrace_session *s);

struct cgtrace_op_record {
	const char *op_name;
	const char *const *inputs;
	size_t n_inputs;
	const char *output; /* NULL: omitted */
	const uint64_t *shape;
	size_t ndim;
	const char *dtype;
	const char *device;
	uint64_t duration_ns;
	uint64_t timestamp_ns; /* 0: now */
	bool has_storage_bytes;
	uint64_t storage_bytes;
	uint64_t input_storage_bytes;
};

struct cgtrace_tensor_record {
	const char *tensor_id;
	const uint64_t *shape;
	size_t ndim;
	const char *dtype;
	const char *device;
	bool requires_grad;
	bool has_storage_bytes;
	uint64_t storage_bytes;
	enum cgtrace_category category; /* AUTO: from the innermost step */
};

struct cgtrace_memory_record {
	const char *tensor_id;
	const char *op_name; /* NULL: omitted */
	const char *device;
	uint64_t bytes;
	const uint64_t *shape;
	size_t ndim;
	const char *dtype;
	enum cgtrace_category category; /* AUTO: from the innermost step */
	bool has_timestamp;             /* false: now */
	uint64_t timestamp_ns;
};

int cgtrace_session_record_op(struct cgtrace_session *s, uint64_t span,
			      const struct cgtrace_op_record *op);
int cgtrace_session_record_tensor(struct cgtrace_session *s, uint64_t span,
				  const struct cgtrace_tensor_record *t);
int cgtrace_session_record_alloc(struct cgtrace_session *s, uint64_t span,
				 const struct cgtrace_memory_record *m);
int cgtrace_session_record_free(struct cgtrace_session *s, uint64_t span,
				const struct cgtrace_memory_record *m);
/* reserved_bytes: pass NULL to omit. timestamp_ns: NULL for now. */
int cgtrace_session_record_device_memory(struct cgtrace_session *s, const char *device,
					 uint64_t used_bytes, uint64_t free_bytes,
					 const uint64_t *reserved_bytes,
					 const uint64_t *timestamp_ns);
/* norm: NULL to omit; a non-finite norm is omitted too (JSON has no NaN). */
int cgtrace_session_record_gradient(struct cgtrace_session *s, const char *root,
				    const char *key, enum cgtrace_grad_state state,
				    const double *norm);
/* Returns the first error seen by any earlier call, else flushes. */
int cgtrace_session_flush(struct cgtrace_session *s);
/*
 * Closes the root span, flushes and frees the session. Returns the first
 * sticky error, or -EBUSY when nested spans were still open (the root span
 * is closed all the same, the nested ones stay unclosed).
 */
int cgtrace_session_finish(struct cgtrace_session *s);

#ifdef __cplusplus
}
#endif

#endif

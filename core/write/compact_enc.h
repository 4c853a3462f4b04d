/* SPDX-License-Identifier: MIT */
/*
 * The compact encoder (docs/compact-format.md): records in, blocks out.
 * Two doors: cg_cenc_rec packs any parsed record it can and sends the
 * rest as TEXT (cgtrace export); the cg_cenc_* item calls below are the
 * probe's hot path, which already knows its records fit the packed forms.
 *
 * Memory: cg_cenc_new mallocs the block, zstd (a static context, which
 * never allocates) and output buffers, and reserves the string and class
 * tables as address space (mmap, no swap reserved) sized for their caps:
 * their pages are touched as the tables fill, and their hash indexes
 * double in place, so none of the calls below calls the allocator and the
 * probe's writer thread may use them. A table never grows past its cap;
 * past it cg_cenc_string and cg_cenc_class answer CG_CENC_NONE and the
 * caller sends the record as TEXT. Why caps rather than growth: the
 * writer thread must not allocate, and with address space reserved up
 * front a cap of a million strings costs only the pages used. The
 * exceptions, for cgtrace export only: cg_cenc_rec's own JSONL scratch and
 * live table, and an item longer than the block buffer's headroom (a
 * record of over 190 KiB) growing the buffer.
 */
#ifndef CG_COMPACT_ENC_H
#define CG_COMPACT_ENC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "record.h"

#define CG_COMPACT_HEADER_LEN 16
#define CG_COMPACT_BLOCK_HEADER_LEN 16
/* Raw bytes after which a block is ended by the encoder itself. */
#define CG_COMPACT_BLOCK_RAW (4u << 20)
/* The history of memory records (allocs and frees) a ref may name, per block. */
#define CG_COMPACT_HISTORY 4096

/* The tables' caps (see above), and the answer past them. */
#define CG_CENC_STRINGS_MAX (1u << 20)
#define CG_CENC_STRING_BYTES (64u << 20)
#define CG_CENC_STRING_LEN_MAX 4096u
#define CG_CENC_CLASSES_MAX (1u << 20)
#define CG_CENC_NONE UINT32_MAX

/* Each field the stats count; a stream the opts can ablate. */
#define CG_CENC_FIELDS(X)                                                                          \
	X(opcode)    /* the opcode bytes of record items */                                        \
	X(class_ref) /* a MEMORY class id past 30 */                                               \
	X(timestamp)                                                                               \
	X(address) /* the address refs of allocs and frees */                                      \
	X(size)    /* an alloc's bytes */                                                          \
	X(text)    /* TEXT lengths and lines */                                                    \
	X(tables)  /* STRING, CLASS and MODULE items, whole */                                     \
	X(stack)   /* STACK and TREE items, whole, and allocs' stack ids (extension areas) */      \
	X(thread)  /* THREAD items, whole */                                                       \
	X(other)   /* the rest of span and device_memory items */

enum cg_cenc_field {
#define CG_CENC_FIELD_ENUM(f) CG_CENC_F_##f,
	CG_CENC_FIELDS(CG_CENC_FIELD_ENUM)
#undef CG_CENC_FIELD_ENUM
	    CG_CENC_F_COUNT
};

struct cg_cenc;

struct cg_cenc_opts {
	int zstd_level;   /* 0: stored blocks (type R), else zstd at this level */
	size_t block_raw; /* 0: CG_COMPACT_BLOCK_RAW */
	/*
	 * Called with each finished block (header and payload, one buffer),
	 * and once with the file header first. Returns 0 or -errno; an error
	 * sticks and the encoder drops what follows.
	 */
	int (*write)(void *user, const void *p, size_t n);
	void *user;
	/*
	 * cg_cenc_rec keeps a live table of its own to pack frees (the probe has
	 * its own); without it cg_cenc_rec sends every free as TEXT.
	 */
	bool track_live;
	/* The file header's flags (CG_CF_FLAG_x): what the caller promises of the records. */
	uint32_t flags;
	/*
	 * CG_CENC_F_x + 1: that field's stream is written as a constant (0), so
	 * that the compressed size with and without it tells what the field
	 * costs after zstd (cgtrace export --stats). The output is no trace.
	 */
	int ablate;
	/* No per-field counts in cg_cenc_stats (the probe's): its hot records cost less. */
	bool lean;
};

/* Allocates everything; writes the file header through opts->write. */
int cg_cenc_new(struct cg_cenc **out, const struct cg_cenc_opts *opts);
/* Ends the last block (cg_cenc_flush), frees; returns the first error. */
int cg_cenc_close(struct cg_cenc *e);
/* Ends the block being built, if it holds anything, and writes it; returns the sticky error. */
int cg_cenc_flush(struct cg_cenc *e);
/* cg_cenc_flush, the block stored (type R) as it is: bytes its writer may rewrite in place. */
int cg_cenc_flush_stored(struct cg_cenc *e);
/* The bytes of the encoder's buffers and tables resident now. */
size_t cg_cenc_resident(const struct cg_cenc *e);
/* Raw bytes in the block being built. */
size_t cg_cenc_pending(const struct cg_cenc *e);
/*
 * Raw bytes in the stack block being built (docs/stacks.md), which ends by
 * itself once an item might not fit, or the record block ends; a caller
 * that times its blocks ends it first with cg_cenc_flush_stacks.
 */
size_t cg_cenc_stacks_pending(const struct cg_cenc *e);
int cg_cenc_flush_stacks(struct cg_cenc *e);

/* Any record: packed where it fits the packed forms, else TEXT (its JSONL formatting). */
int cg_cenc_rec(struct cg_cenc *e, const struct cg_rec *r);
/* A record as JSONL text (no newline), e.g. the probe's meta line. */
int cg_cenc_text(struct cg_cenc *e, const char *line, size_t n);

/* ---- the hot path: items the caller knows fit ---- */

/*
 * Stacks and modules (docs/stacks.md). The caller interns its stacks:
 * cg_cenc_stack defines stack id (>= 1) with its n frames (1 to
 * CG_STACK_FRAMES_MAX, innermost first) as a STACK item, once per id,
 * right before the first record naming it (cg_cenc_alloc_stack), which is
 * the record a reader gives the frames. False when it wrote nothing (id
 * 0, n 0 or too many): the caller then names stack 0 instead.
 */
bool cg_cenc_stack(struct cg_cenc *e, uint64_t id, const uint64_t *frames, uint32_t n);
/*
 * cg_cenc_stack's tree definition, a TREE item: the n new frames (1 to
 * CG_STACK_FRAMES_MAX, innermost first) on stack parent (0: none),
 * defining stacks id - n + 1 ... id, pending as a STACK item is until the
 * record naming id. False when it wrote nothing: also when id < n, or a
 * parent among the stacks it defines.
 */
bool cg_cenc_tree(struct cg_cenc *e, uint64_t id, uint64_t parent, const uint64_t *frames,
		  uint32_t n);
/*
 * One loaded module as a MODULE item, which a reader puts in the
 * cgprobe_modules of the next memory record (packed or TEXT, alloc or
 * free). False when it wrote nothing (a path over CG_CENC_STRING_LEN_MAX,
 * a build id over CG_BUILD_ID_HEX_MAX or not lowercase hex, start > end).
 */
bool cg_cenc_module(struct cg_cenc *e, const struct cg_modv *m);
/* cg_cenc_alloc of an allocation whose call stack is stack (0: none, the same as cg_cenc_alloc). */
uint64_t cg_cenc_alloc_stack(struct cg_cenc *e, uint32_t cls, uint64_t ts, uint64_t addr,
			     uint64_t bytes, uint64_t stack);

/*
 * The id of string s, defining it in the stream the first time;
 * CG_CENC_NONE past the caps or for a string over CG_CENC_STRING_LEN_MAX.
 */
uint32_t cg_cenc_string(struct cg_cenc *e, const char *s, size_t n);
/*
 * The id of a memory class (span, op: UINT32_MAX for none, device: string
 * ids; category: enum cgtrace_category); CG_CENC_NONE past the cap or for
 * a string id that is CG_CENC_NONE. The hot calls take only ids these
 * calls returned: a memory record of any other class id is dropped, a
 * span_start or device_memory naming an undefined string rides as TEXT
 * with "" for it.
 */
#define CG_CLASS_MANAGED 1u
#define CG_CLASS_VMM 2u
uint32_t cg_cenc_class(struct cg_cenc *e, uint32_t span, uint32_t op, uint32_t device,
		       uint8_t category, uint8_t flags);
/* The thread of the records that follow (a THREAD item only when it changes). */
void cg_cenc_thread(struct cg_cenc *e, uint64_t tid);
/*
 * A packed alloc; returns its ordinal (packed allocs and frees are
 * numbered together, as the block's history holds both), which a later
 * cg_cenc_free of the same allocation passes back so the free can name it
 * by its place in the history; the alloc itself names an address freed a
 * moment ago the same way, found by a table of its own. A ts below the
 * block's last packed timestamp (threads' clocks may disagree by a few
 * ns) makes the record TEXT, as any other record that does not fit: the
 * hot calls never fail a record.
 */
uint64_t cg_cenc_alloc(struct cg_cenc *e, uint32_t cls, uint64_t ts, uint64_t addr, uint64_t bytes);
/* cg_cenc_alloc of a block live before recording began: `"cgprobe_preexisting":true`. */
uint64_t cg_cenc_alloc_pre(struct cg_cenc *e, uint32_t cls, uint64_t ts, uint64_t addr,
			   uint64_t bytes);
/*
 * A packed free of a live allocation of the same bytes; ord: its alloc's
 * ordinal, or UINT64_MAX (the table then finds the alloc if it can). A
 * free carries no bytes (the reader's live table has them), so an
 * out-of-order ts ends the block instead, whose fresh state takes any ts.
 */
void cg_cenc_free(struct cg_cenc *e, uint32_t cls, uint64_t ts, uint64_t addr, uint64_t ord);
/* A packed span_start of span "s<id>" under "s<parent>" (parent 0: no parent_id). */
void cg_cenc_span_start(struct cg_cenc *e, uint64_t ts, uint64_t id, uint64_t parent, uint32_t name,
			uint8_t span_kind, uint8_t step, bool measured);
void cg_cenc_span_end(struct cg_cenc *e, uint64_t id, uint64_t duration_ns);
/* A packed device_memory checkpoint; reserved/oom NULL when absent. */
void cg_cenc_device_memory(struct cg_cenc *e, uint64_t ts, uint32_t device, uint64_t used,
			   uint64_t free_bytes, const uint64_t *reserved, const uint64_t *oom);

/*
 * Raw bytes written per field since cg_cenc_new, for the benchmark's
 * breakdown; the fields add up to raw_bytes. stored_bytes: all the encoder
 * handed to opts->write, file and block headers included.
 */
struct cg_cenc_stats {
	uint64_t records, blocks, raw_bytes, stored_bytes;
#define CG_CENC_FIELD_MEMBER(f) uint64_t f;
	CG_CENC_FIELDS(CG_CENC_FIELD_MEMBER)
#undef CG_CENC_FIELD_MEMBER
};
void cg_cenc_stats(const struct cg_cenc *e, struct cg_cenc_stats *out);

#endif

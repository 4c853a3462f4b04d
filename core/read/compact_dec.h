/* SPDX-License-Identifier: MIT */
/*
 * The compact decoder (docs/compact-format.md): blocks in, one trace record
 * at a time out. Memory is one block (its stored and raw bytes), the
 * cumulative string and class tables and the live table, which holds the
 * allocations live at once; nothing is allocated per record.
 */
#ifndef CG_COMPACT_DEC_H
#define CG_COMPACT_DEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "compact_format.h"
#include "record.h"

#define CG_COMPACT_MAGIC CG_CF_MAGIC
#define CG_COMPACT_MAGIC_LEN CG_CF_MAGIC_LEN

/* Room for the longest id a packed record formats ("vmm:0x" and 16 digits, or "s" and 20). */
#define CG_CDEC_ID_MAX 24
/* The ids of one record: a tensor_id, or a span's id and its parent's. */
#define CG_CDEC_IDS (2 * CG_CDEC_ID_MAX)

/* What cg_cdec_next yields. */
enum { CG_CDEC_END = 0, CG_CDEC_REC = 1, CG_CDEC_TEXT = 2, CG_CDEC_STACKS = 3 };

/* What the last packed memory record came from: its class's number and its address. */
struct cg_cdec_mem {
	uint64_t ts, bytes, addr;
	uint64_t stack; /* cgprobe_stack, 0: none; frames and modules ride only on a full record */
	uint32_t cls; /* a CLASS item's number: same span, op, device, category and flags */
	bool vmm;     /* its tensor_id is "vmm:" and the address */
	bool free;
	bool pre;  /* cgprobe_preexisting: a class of its own towards the document */
	bool full; /* the target holds the whole record (always, unless lean) */
	/*
	 * With cg_cdec_no_frames, the STACK or TREE item the record takes: how
	 * many frames it had (0: none taken), and a TREE item's parent.
	 */
	uint32_t def_frames;
	bool def_tree;
	uint64_t def_parent;
};
struct cg_cdec;

struct cg_cdec_out {
	const struct cg_rec *rec; /* CG_CDEC_REC: views into the decoder */
	const char *line;         /* CG_CDEC_TEXT: the record's JSONL text, no newline */
	size_t len;
	const struct cg_cdec_mem *mem; /* a packed memory record's gist (see cg_cdec_lean); else NULL */
	uint64_t stacks_first, stacks_last; /* CG_CDEC_STACKS: the skipped block's ids */
};

/*
 * A decoder over fd (not closed by it), the first npre bytes of which the
 * caller has read already (a pipe cannot seek): they are pre[0..npre).
 */
int cg_cdec_open_fd(struct cg_cdec **out, int fd, const void *pre, size_t npre);
/* A decoder over memory, which must outlive it. */
int cg_cdec_open_mem(struct cg_cdec **out, const void *data, size_t len);
void cg_cdec_close(struct cg_cdec *d);

/*
 * CG_CDEC_REC or CG_CDEC_TEXT with *out valid until the next call;
 * CG_CDEC_END at the end (cg_cdec_truncated says whether the file was cut
 * inside a block); a negative errno with cg_cdec_error set: -EBADMSG for
 * input that breaks the format, else the read error. Errors are sticky.
 */
int cg_cdec_next(struct cg_cdec *d, struct cg_cdec_out *out);
/*
 * Where the next packed records go: into *rec, their formatted ids into
 * ids[0..CG_CDEC_IDS); NULL: the decoder's own (the default). A reader a
 * batch ahead of its consumer decodes straight into the batch this way.
 * A target is zeroed before its first use and written by the decoder only:
 * it keeps the fields a kind's packed records share from one to the next.
 */
void cg_cdec_target(struct cg_cdec *d, struct cg_rec *rec, char *ids, struct cg_cdec_mem *mem);
/*
 * Where the frames of the stacks the next records define go (NULL: the
 * decoder's own memory, as long as it lives): a reader a batch ahead of
 * its consumer gives each batch an arena, emptied when the batch is
 * decoded into again.
 */
struct cg_arena;
void cg_cdec_frames_to(struct cg_cdec *d, struct cg_arena *a);
/* Trace records yielded so far: the last one's number, 1-based. */
uint64_t cg_cdec_records(const struct cg_cdec *d);
/* True once the end came inside a block header or payload. */
bool cg_cdec_truncated(const struct cg_cdec *d);
/*
 * The error: "record N: message" (N, the record being decoded, is
 * cg_cdec_records() + 1) for bad input, the read error's text otherwise.
 */
const char *cg_cdec_error(const struct cg_cdec *d);
void cg_cdec_last_memory(const struct cg_cdec *d, struct cg_cdec_mem *out);
/*
 * Lean: a packed memory record's target is written only the first time its
 * class yields an alloc (or a free), and for vmm: classes; after that only
 * cg_cdec_last_memory says what it was. A streamed analysis needs the
 * whole record once per class and action, to intern the class, and saves
 * formatting the id and a dozen fields per record.
 */
void cg_cdec_lean(struct cg_cdec *d, bool lean);
/*
 * With no_frames, STACK and TREE items are read and checked but their
 * frames not kept: the records that take them have n_stack_frames with
 * stack_frames NULL. For a document that keeps no stacks.
 */
void cg_cdec_no_frames(struct cg_cdec *d, bool no_frames);
/*
 * With skip_stacks, a stack block (docs/stacks.md) is neither decompressed
 * nor decoded: cg_cdec_next yields CG_CDEC_STACKS with its range of ids
 * instead, which is no record. For a document that keeps no stacks and
 * trusts the blocks it skips.
 */
void cg_cdec_skip_stacks(struct cg_cdec *d, bool skip);
/*
 * The header's promise that memory records come in timestamp order (once
 * a record was yielded): a hint, which a reader still checks.
 */
bool cg_cdec_in_order(const struct cg_cdec *d);
/* The thread of the records being yielded (0: unknown). */
uint64_t cg_cdec_thread(const struct cg_cdec *d);

/* True when the n bytes at p are all a compact trace could begin with (n >= 1). */
bool cg_cdec_sniff(const void *p, size_t n);

#endif

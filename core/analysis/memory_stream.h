/* SPDX-License-Identifier: MIT */
/*
 * The memory analysis: memory records applied one by one, in analysis
 * order, to live bytes per device and category, peaks, counts, figures by
 * stack and the live set at the global peak and at each device's. One
 * engine for every document: a streamed one feeds it as it is read, through
 * the table of operations filled once for it (stream_sink.h) and the reorder
 * window (stream_window.h); a full one replays its records through it
 * (memory_replay.h). Memory is bounded by the allocations live at once,
 * never by the record count.
 *
 * The live set at the peak is not copied at each new peak (quadratic on a
 * growing trace): the entries live at the last peak stay marked as the
 * snapshot, and two lists since then (born and still live; snapshot members
 * gone) are applied at the next new peak, O(1) amortized per record.
 */
#ifndef CG_MEMORY_STREAM_H
#define CG_MEMORY_STREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cgtrace.h"
#include "param_ranges.h"
#include "peak_series.h"
#include "record.h"
#include "span_events.h"
#include "stack_figs.h"
#include "update_clock.h"
#include "vec.h"

struct cgtrace_doc;
struct cg_span;
struct cg_stream;

/*
 * Entry states towards a snapshot: born since the last peak and live, live
 * in the snapshot, gone from it; out: gone and not in it. An entry has one
 * state towards the global peak's snapshot, one towards its own device's,
 * and is freed once out of both.
 */
enum { CG_ENT_FREE, CG_ENT_NEW, CG_ENT_SNAP, CG_ENT_DEAD, CG_ENT_OUT };

struct cg_stream_entry {
	uint64_t key;   /* the id's value ("0x<hex>"), a hash of str, or (pooled) its string id */
	uint64_t bytes;
	uint64_t timestamp_ns;
	char *str;      /* an id not in canonical hex, owned; NULL for a parsed one */
	uint32_t str_len;
	uint32_t cls;   /* memory class of the alloc */
	uint32_t shape; /* shape id */
	uint32_t link;  /* position in born while NEW; next free entry while FREE */
	uint32_t fig;   /* the alloc's figure in figs */
	uint32_t dlink; /* position in its device's born while dstate is NEW */
	uint32_t rec;   /* a replay's: the alloc's record index */
	uint8_t state;  /* towards the global peak */
	uint8_t dstate; /* towards its device's peak */
	uint8_t cat;    /* its category now: its record's, or parameter once marked */
};

/* An entry of a peak's snapshot marked as parameters after that peak: its category then. */
struct cg_stream_recat {
	uint32_t entry;
	uint8_t cat;
};

/* A live-table slot: the entry's key's hash beside it, so that probes stay in the table. */
struct cg_stream_slot {
	uint32_t hash; /* the key's (memory_stream.c); the key itself is the entry's */
	uint32_t val;  /* entry index + 1 (0: empty), CG_SLOT_STR set when the entry has a string */
};
#define CG_SLOT_STR (1u << 31)

struct cg_stream_dev {
	uint64_t live;
	uint64_t by_cat[CGTRACE_CAT_COUNT];
	uint64_t peak, peak_ts, allocs, frees;
	uint64_t capacity; /* largest used + free of the device's checkpoints */
	bool has_capacity;
	bool listed;       /* has memory or device_memory records */
	struct cg_peak_series series; /* live bytes over time, for a sparkline */
	/* The device's own snapshot at its peak, as born and gone for the global one. */
	struct cg_vec born, gone; /* uint32_t entry indices */
	struct cg_vec recat;      /* struct cg_stream_recat, since its peak */
	struct cg_moment_raw peak_moment; /* where its peak fell in training */
};

/* A memory record waiting in the reorder window. */
struct cg_stream_rec {
	uint64_t ts, bytes, key;
	uint64_t index; /* the record's index among memory records, in file order */
	uint64_t stack; /* an alloc's stack id, 0: none */
	char *str;      /* the tensor_id when not canonical hex, owned; NULL for a parsed one */
	uint32_t str_len, cls, shape;
	uint8_t action;
};

/* Records in analysis order, oldest first: a ring. */
struct cg_stream_run {
	struct cg_stream_rec *r;
	uint32_t head, len, cap; /* cap: a power of two */
};

/*
 * Records a streamed document holds back before applying them, so that
 * traces merged from several threads, each in time order but interleaved
 * by block, apply in analysis order without a second read.
 */
#define CG_STREAM_WINDOW (1u << 17)
/* Sorted runs the window may hold at once (about one per writing thread). */
#define CG_STREAM_RUNS 16

/* What a hook (a view's, core/view; a replay's) is told of a memory record applied: what it did. */
struct cg_stream_seen {
	const struct cgtrace_doc *doc; /* the document read: its classes and strings */
	uint64_t ts, live, bytes; /* live: the device's after the record; bytes: what it added or took */
	const uint64_t *by_cat;   /* the device's live bytes by category after it, valid during the call */
	uint16_t dev;
	uint8_t action, category; /* a free of a known allocation: its category */
	/*
	 * The allocation's live-table entry: an alloc's own, a free's of the
	 * alloc it undoes (UINT32_MAX: a free of nothing live). An entry is
	 * reused only after its allocation is gone.
	 */
	uint32_t entry;
	uint32_t cls;   /* the record's memory class */
	uint64_t stack; /* an alloc's stack id, 0: none */
	/* An alloc's tensor_id: str when it is not canonical hex, else key's value (cg_stream_id). */
	uint64_t key;
	const char *str;
	uint32_t str_len;
	/* An alloc that replaced a live allocation of the same id: that one's entry, else UINT32_MAX. */
	uint32_t replaced;
	/* A free of a known allocation: the allocation's time (its stack is in stack). */
	uint64_t alloc_ts;
};

/* The tensor_id of an alloc a hook was told of, formatted into buf when it is canonical hex. */
struct cg_sv cg_stream_id(const struct cg_stream_seen *x, char buf[24]);
/* A key that was canonical hex, as it was written ("0x" and lowercase digits). */
struct cg_sv cg_stream_key_hex(uint64_t key, char buf[20]);

struct cg_stream_hooks {
	/* After each memory record applied, in analysis order; non-zero stops the read. */
	int (*record)(void *user, const struct cg_stream_seen *x);
	/* Each device_memory record, in file order, with its device number. */
	int (*checkpoint)(void *user, const struct cg_rec_device_memory *x, uint16_t dev);
	/*
	 * Each span event of an update, a phase or a parameter mark, in time
	 * among the memory records applied: s's clock has taken it (changed
	 * says how, CG_UC_* bits), a mark has moved s's bytes. The last ones
	 * come from cg_stream_finish.
	 */
	int (*span)(void *user, const struct cg_stream *s, const struct cg_span_ev *ev, int changed);
};

/*
 * What a replay's record did: the bytes and category it added or took, and
 * the record index + 1 of the alloc a free undid or an alloc replaced (0:
 * none).
 */
struct cg_stream_did {
	uint64_t bytes;
	uint32_t undid;
	uint8_t category;
};

/* A span id not yet started when its first memory record was applied. */
struct cg_stream_candidate {
	uint32_t span_id;
	uint64_t pos, activation;
};

struct cg_stream {
	/* The reorder window: sorted runs, the last record applied, the latest timestamp seen. */
	struct cg_stream_run runs[CG_STREAM_RUNS];
	uint32_t n_runs, last_run, window;
	struct cg_stream_run spare; /* the ring of the last run that emptied, for the next new one */
	size_t pending;
	uint64_t max_ts;
	bool applied_any;
	struct cg_stream_rec last; /* str points into last_id */
	struct cg_vec last_id;     /* char */
	bool out_of_order; /* a memory record went back in time past the window: read again in full */

	/* The document read (its classes and strings), or replayed. */
	const struct cgtrace_doc *doc;
	/*
	 * A full document's replay: keys are the tensor ids' string ids, no
	 * record has a string, and by_id holds the live set (entry + 1 by id).
	 */
	bool pooled;
	bool finished; /* cg_stream_finish: no record is applied after, and the id table is gone */
	uint32_t *by_id;
	/* A replay's last record: what it did (cg_stream_did). */
	struct cg_stream_did did;

	struct cg_vec devs; /* struct cg_stream_dev, by device number */
	struct cg_stream_entry *ent;
	uint32_t n_ent, cap_ent, free_ent; /* free_ent: head of the free list + 1 */
	struct cg_stream_slot *slots; /* open addressing over entries */
	uint32_t mask, used, shift;   /* shift: 64 - log2(slots) */
	struct cg_vec born, gone; /* uint32_t entry indices since the last peak */
	struct cg_stack_figs figs;
	uint32_t last_alloc; /* the entry of the last record applied when an alloc (temporaries) */

	uint64_t alloc_count, free_count, total_alloc_bytes;
	uint64_t peak_bytes, peak_ts;
	long peak_device; /* -1 before the first peak */
	/*
	 * While one device has records, its peak is the global one and its
	 * snapshot lists would repeat the global lists: they are kept only
	 * from the first record of a second device on (go_multi), and an
	 * entry's dstate mirrors its state until then (cg_stream_finish).
	 */
	bool multi_dev;
	long first_dev; /* -1 before the first record */
	uint64_t peak_by_category[CGTRACE_CAT_COUNT];
	uint64_t realloc_live, unknown_free;

	/* autograd_retained_bytes: the first record whose span is backward. */
	uint64_t pos; /* records applied */
	bool seen_backward;
	uint64_t backward_pos, backward_activation;
	struct cg_vec class_state; /* uint8_t per class: 0 unknown, 1 settled */
	struct cg_vec candidates;  /* struct cg_stream_candidate */

	/* A streamed timeline: called after each record applied (cgtrace_memory_timeline_read). */
	int (*point)(void *user, const struct cgtrace_timeline_point *p);
	void *point_user;
	int point_ret; /* the callback's non-zero return, which stopped the read */
	int *stopped;  /* where point_ret goes too, the reader's (cg_stream_cfg) */
	/* A view's read: told of each record applied and checkpoint read; a stop as point's. */
	const struct cg_stream_hooks *hooks;
	void *hooks_user;
	/* The first and last timestamp of the device_memory records (has_ts: any). */
	uint64_t ts_lo, ts_hi;
	bool has_ts;

	/*
	 * Training (docs/steps.md): span events waiting for their time, where
	 * each moment falls (the clock), the memory marked as parameters,
	 * the snapshot's entries marked since the peak, where the peak fell.
	 */
	struct cg_span_queue spans;
	struct cg_uclock clock;
	struct cg_param_ranges params;
	struct cg_vec recat; /* struct cg_stream_recat */
	struct cg_moment_raw peak_moment;
	uint64_t now; /* the last record's time */
};

/* What a streamed read asks of its analysis besides the report (doc_sink.h's cfg). */
struct cg_stream_cfg {
	/* A timeline: called after each record applied; its non-zero return stops the read. */
	int (*point)(void *user, const struct cgtrace_timeline_point *p);
	void *point_user;
	/* A view: told of each record applied and checkpoint read; a stop as point's. */
	const struct cg_stream_hooks *hooks;
	void *hooks_user;
	/*
	 * Another read's analysis of the same trace, whose capacities this one
	 * starts from (device numbers follow first appearance, so they match):
	 * a timeline knows each device's capacity from its first point.
	 */
	const struct cg_stream *preset;
	int *stopped; /* where a callback's stop goes; NULL: nowhere */
};

/* A new analysis of d's records, as cfg says (NULL: the report alone); 0 or -ENOMEM. */
int cg_stream_new(const struct cgtrace_doc *d, const struct cg_stream_cfg *cfg,
		  struct cg_stream **out);
/* The analysis alone: what the window still holds is the window's (stream_window.h). */
void cg_stream_free(struct cg_stream *s);

/*
 * One record in analysis order (past the window): an alloc's entry takes
 * its string. 0, -ECANCELED when a callback stopped it, -ENOMEM.
 */
int cg_stream_apply(struct cg_stream *s, struct cg_stream_rec *g);
/*
 * Multiply-shift: addresses differ in their middle bits, which the product
 * carries up. A slot keeps the product's high 32 bits, its home's bits
 * among them (memory_stream.c).
 */
static inline uint32_t cg_stream_key_hash(uint64_t key)
{
	return (uint32_t)((key * 0x9e3779b97f4a7c15ull) >> 32);
}

/* The slot a hash's probe starts at: its top bits. */
static inline uint32_t cg_stream_home(const struct cg_stream *s, uint32_t hash)
{
	return hash >> (s->shift - 32);
}

/*
 * The table's line for key, fetched ahead of its record's apply: a record
 * waits in the window while the one before it applies, and its lookup was
 * a cache miss a record (3% of a streamed read, 2 threads x 10 M
 * operations of bench/alloc-bench).
 */
static inline void cg_stream_prefetch(const struct cg_stream *s, uint64_t key)
{
	if (s->slots)
		__builtin_prefetch(&s->slots[cg_stream_home(s, cg_stream_key_hash(key))]);
}

/* A full document's replay: ids are string ids below ids, their live entries in an array. */
int cg_stream_pooled(struct cg_stream *s, size_t ids);
/* As cg_stream_apply, once cg_stream_pooled: g's key is its tensor id's string id. */
int cg_stream_apply_pooled(struct cg_stream *s, struct cg_stream_rec *g);
/* The devices 0 .. n - 1, made now, so that s->devs stays where it is; 0 or -ENOMEM. */
int cg_stream_devices(struct cg_stream *s, size_t n);
/* A checkpoint's capacity (used + free) for device dev; 0 or -ENOMEM. */
int cg_stream_capacity(struct cg_stream *s, uint16_t dev, uint64_t used, uint64_t free_bytes);
/* A device_memory record read, in file order: its capacity, its time, the view's hook; as apply. */
int cg_stream_checkpoint(struct cg_stream *s, uint16_t dev, const struct cg_rec_device_memory *x);
/*
 * After the last record applied, while the builder's span table still
 * stands (or the document is finished): settles the devices' snapshots and
 * autograd_retained_bytes.
 */
int cg_stream_finish(struct cg_stream *s);
/* A callback's non-zero return ret stops the read (-ECANCELED), and the reader is told it. */
int cg_stream_stop(struct cg_stream *s, int ret);
/* The first and last timestamp of the memory and device_memory records; false: none. */
bool cg_stream_time(const struct cg_stream *s, uint64_t *lo, uint64_t *hi);

static inline bool cg_stream_entry_at_peak(const struct cg_stream_entry *e)
{
	return e->state == CG_ENT_SNAP || e->state == CG_ENT_DEAD;
}

/* Live at its device's peak. */
static inline bool cg_stream_entry_at_dev_peak(const struct cg_stream_entry *e)
{
	return e->dstate == CG_ENT_SNAP || e->dstate == CG_ENT_DEAD;
}

/* Live now (after the last record: never freed). */
static inline bool cg_stream_entry_live(const struct cg_stream_entry *e)
{
	return e->state == CG_ENT_NEW || e->state == CG_ENT_SNAP;
}

#endif

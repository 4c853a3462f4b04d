/* SPDX-License-Identifier: MIT */
/*
 * A streamed document's memory: instead of keeping memory records, the
 * document applies them as they are read, in analysis order, to live bytes
 * per device and category, peaks, counts and the live set at the global
 * peak. Memory is bounded by the allocations live at once (and the distinct
 * strings and shapes the document interns), never by the record count.
 *
 * The live set at the peak is not copied at each new peak (quadratic on a
 * growing trace): the entries live at the last peak stay marked as the
 * snapshot, and two lists since then (born and still live; snapshot members
 * gone) are applied at the next new peak, O(1) amortized per record.
 */
#ifndef CG_DOC_STREAM_H
#define CG_DOC_STREAM_H

#include <stdbool.h>
#include <stdint.h>

#include "cgtrace.h"
#include "peak_series.h"
#include "record.h"
#include "u64map.h"
#include "vec.h"

struct cgtrace_doc;

/*
 * Entry states towards a snapshot: born since the last peak and live, live
 * in the snapshot, gone from it; out: gone and not in it. An entry has one
 * state towards the global peak's snapshot, one towards its own device's,
 * and is freed once out of both.
 */
enum { CG_ENT_FREE, CG_ENT_NEW, CG_ENT_SNAP, CG_ENT_DEAD, CG_ENT_OUT };

/*
 * Per (stack, device) figures, counted as records apply: allocations, their
 * bytes, temporaries. What was live at a peak and at the end is read off
 * the entries, which carry their figure's index (analysis/sites.c).
 */
struct cg_stack_fig {
	uint64_t id; /* the stack id; 0: allocations without one */
	uint64_t count, total, temporary;
	uint32_t next; /* index + 1 of the same stack's figure on another device; 0: none */
	uint16_t dev;
};

/*
 * Figures by stack id: writers number stacks 1, 2, 3 ..., so ids index an
 * array (no hash on the way); sparse ids go to a map instead, so that
 * memory stays bounded by the distinct stacks.
 */
struct cg_stack_figs {
	struct cg_vec figs;   /* struct cg_stack_fig */
	struct cg_vec direct; /* uint32_t by id: index + 1 of the id's first figure */
	struct cg_map far;    /* id - 1 -> index of the id's first figure, for ids past direct */
};

/* cg_stack_fig_at past its common case. */
int cg_stack_fig_slow(struct cg_stack_figs *f, uint64_t id, uint16_t dev, uint32_t *out);

/* The index of (id, dev)'s figure, made when new; 0 or -ENOMEM. */
static inline int cg_stack_fig_at(struct cg_stack_figs *f, uint64_t id, uint16_t dev,
				  uint32_t *out)
{
	/* Once per alloc: an id of the array whose first figure is this device's, no call. */
	if (id < f->direct.len) {
		uint32_t k = ((const uint32_t *)f->direct.p)[id];
		if (k && ((const struct cg_stack_fig *)f->figs.p)[k - 1].dev == dev) {
			*out = k - 1;
			return 0;
		}
	}
	return cg_stack_fig_slow(f, id, dev, out);
}
void cg_stack_figs_free(struct cg_stack_figs *f);

struct cg_stream_entry {
	uint64_t key;   /* the id's value ("0x<hex>"), or a hash of str */
	uint64_t bytes;
	uint64_t timestamp_ns;
	char *str;      /* an id not in canonical hex, owned; NULL for a parsed one */
	uint32_t str_len;
	uint32_t cls;   /* memory class of the alloc */
	uint32_t shape; /* shape id */
	uint32_t link;  /* position in born while NEW; next free entry while FREE */
	uint32_t fig;   /* the alloc's figure in figs */
	uint32_t dlink; /* position in its device's born while dstate is NEW */
	uint8_t state;  /* towards the global peak */
	uint8_t dstate; /* towards its device's peak */
};

/* A live-table slot: the entry's key beside it, so that probes stay in the table. */
struct cg_stream_slot {
	uint64_t key;
	uint32_t val; /* entry index + 1 (0: empty), CG_SLOT_STR set when the entry has a string */
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
/* The window new streams get (tests shrink it to 0: records held only while their timestamp is the latest). */
extern uint32_t cg_stream_window;

/* What a view's hook (core/view) is told of a memory record applied: what it did. */
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
};

/* The tensor_id of an alloc a hook was told of, formatted into buf when it is canonical hex. */
struct cg_sv cg_stream_id(const struct cg_stream_seen *x, char buf[24]);

struct cg_stream_hooks {
	/* After each memory record applied, in analysis order; non-zero stops the read. */
	int (*record)(void *user, const struct cg_stream_seen *x);
	/* Each device_memory record, in file order, with its device number. */
	int (*checkpoint)(void *user, const struct cg_rec_device_memory *x, uint16_t dev);
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
	uint64_t memory_seen, devmem_seen;

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
	/* Document class + 1 of each decoder class * 4 + (free) + 2 * (pre-existing); 0: not seen. */
	struct cg_vec packed_cls; /* uint32_t */

	/* A streamed timeline: called after each record applied (cgtrace_memory_timeline_read). */
	int (*point)(void *user, const struct cgtrace_timeline_point *p);
	void *point_user;
	int point_ret; /* the callback's non-zero return, which stopped the read */
	/* A view's read: told of each record applied and checkpoint read; a stop as point's. */
	const struct cg_stream_hooks *hooks;
	void *hooks_user;
	/* The first and last timestamp of the device_memory records (has_ts: any). */
	uint64_t ts_lo, ts_hi;
	bool has_ts;
};

int cg_stream_new(struct cg_stream **out);
void cg_stream_free(struct cg_stream *s);

/*
 * A memory record of class cls (interned by the builder) and shape id.
 * 0, -ECANCELED when it goes back in time (s->out_of_order set), -ENOMEM.
 */
int cg_stream_memory(struct cgtrace_doc *d, const struct cg_rec_memory *m, uint32_t cls,
		     uint32_t shape);
/* What the analysis needs of a packed memory record of the compact decoder. */
struct cg_stream_packed {
	uint64_t ts, bytes, addr;
	uint64_t stack;   /* the record's cgprobe_stack, 0: none (docs/stacks.md) */
	uint32_t dec_cls; /* the decoder's class number */
	uint8_t action;
	bool vmm; /* the tensor_id is "vmm:" and the address */
	bool pre; /* cgprobe_preexisting */
};

/*
 * A packed memory record (ndim 1, shape [bytes], no device identity): its
 * decoder class maps to the document's class by an array, its address is
 * the key; m, the record itself, is read only for a class not seen yet or
 * a vmm: id. As cg_stream_memory otherwise.
 */
int cg_stream_packed(struct cgtrace_doc *d, const struct cg_rec_memory *m,
		     const struct cg_stream_packed *pk);
/*
 * The trace promises memory records in timestamp order: each is applied as
 * soon as a later one comes (a promise broken still gives out_of_order).
 */
void cg_stream_in_order(struct cg_stream *s);
/*
 * Starts from another read's capacities of the same trace (device numbers
 * follow first appearance, so they match): a timeline knows each device's
 * capacity from its first point. -ENOMEM.
 */
int cg_stream_preset_capacity(struct cg_stream *s, const struct cg_stream *from);
/* The first and last timestamp of the memory and device_memory records; false: none. */
bool cg_stream_time(const struct cg_stream *s, uint64_t *lo, uint64_t *hi);
/* A device_memory checkpoint of device dev: its capacity, its time; the view's hook. */
int cg_stream_checkpoint(struct cgtrace_doc *d, uint16_t dev, const struct cg_rec_device_memory *x);
/*
 * After the last record, while the builder's span table still stands:
 * applies the last group and settles autograd_retained_bytes.
 */
int cg_stream_finish(struct cgtrace_doc *d);

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

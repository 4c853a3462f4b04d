/* SPDX-License-Identifier: MIT */
/*
 * Building a view in one pass: what the record and checkpoint hooks of a
 * streamed read (or a full document's replay) accumulate, split by job:
 * the grid of buckets (view_grid.c), the largest allocations
 * (view_allocs.c), the figures by span (view_spans.c); at the end, the
 * spans and step bands the pictures draw (view_steps.c).
 */
#ifndef CG_VIEW_BUILD_H
#define CG_VIEW_BUILD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cgtrace.h"
#include "param_ranges.h"
#include "vec.h"

struct cgtrace_doc;
struct cg_stream_seen;
struct cg_steps;

/* A device while the view is built, by the document's device number. */
struct cg_vdev {
	bool used;                             /* has a memory record or a checkpoint */
	uint64_t live, cat[CGTRACE_CAT_COUNT]; /* after the last record */
	uint64_t count;                        /* allocations live after it */
	uint64_t last_ts;                      /* its time */
	size_t cur;                            /* the bucket of the last record */
	bool started;                          /* has a memory record */
	struct cgtrace_view_bucket *bk;        /* the grid's slots */
	struct cgtrace_view_checkpoint *ck;    /* per slot: the highest used bytes */
	bool *has_ck;
	struct cg_vec ooms; /* struct cgtrace_view_checkpoint */
	uint64_t n_ooms;
};

/*
 * The grid while it is built: slots of 2^shift ns from base, twice the
 * buckets asked for; a time past the last slot merges neighbours pairwise
 * (each bucket's maximum stays the larger of the two), a time before base
 * moves the slots right, so one pass needs no time span in advance.
 */
struct cg_vgrid {
	uint64_t base;
	uint32_t shift;
	size_t slots, want; /* slots: 2 * want */
	size_t last;        /* the last slot anything fell in */
	uint64_t t_lo, t_hi;
	bool any;
};

/* One of the largest allocations, in a slot that stays put while the heap moves. */
struct cg_vslot {
	struct cgtrace_view_alloc a;
	uint32_t cls;   /* its record's memory class: span, op, pre-existing, read at the end */
	uint32_t entry; /* its allocation's entry while live and tracked; UINT32_MAX: none */
};

struct cg_vallocs {
	struct cg_vslot *slot; /* max slots */
	struct cg_param_ranges params; /* marked as parameters so far: live kept ones turn */
	uint32_t *heap;        /* slot indices; the least kept on top */
	size_t n, max;
	struct cg_vec slot_of; /* uint32_t by entry: slot + 1 (0: not kept) */
};

/* What a memory class's records allocated and freed, summed by span at the end. */
struct cg_vcls {
	uint64_t alloc_count, alloc_bytes, free_count, free_bytes;
};

struct cg_view_build {
	struct cgtrace_view *v;
	struct cg_vgrid grid;
	struct cg_vec dev; /* struct cg_vdev by device number */
	struct cg_vallocs allocs;
	struct cg_vec cls; /* struct cg_vcls by memory class */
	int err;           /* the first -errno of a hook */
	size_t breakdown;  /* the report's peak breakdown: CG_BREAKDOWN_ALL or its bound */
	struct cg_steps *steps; /* memory per training update (core/analysis/steps.h) */
};

/* A memory record applied: what it did, and what the view needs besides. */
struct cg_vrec {
	uint64_t ts, live, bytes;
	const uint64_t *by_cat; /* the device's live bytes by category after it */
	uint8_t action, category;
	uint16_t dev;
	uint32_t cls;
	uint32_t entry, replaced; /* as struct cg_stream_seen */
	uint64_t stack;
	/* An alloc's tensor_id: the string (a full document's), else the stream's, formatted on need. */
	const char *tensor_id;
	size_t tensor_id_len;
	const struct cg_stream_seen *seen;
};

int cg_vgrid_init(struct cg_view_build *b, size_t want);
int cg_vgrid_record(struct cg_view_build *b, const struct cg_vrec *r);
int cg_vgrid_checkpoint(struct cg_view_build *b, uint16_t dev,
			const struct cgtrace_view_checkpoint *ck);
/* The grid at no more than the buckets asked for, carried to its end, into v's grid fields. */
void cg_vgrid_finish(struct cg_view_build *b);
void cg_vgrid_fini(struct cg_view_build *b);

int cg_vallocs_init(struct cg_vallocs *a, size_t max);
int cg_vallocs_record(struct cg_view_build *b, const struct cg_vrec *r);
/* A parameter mark's n [start, end) pairs: the kept allocations live in them become parameter. */
int cg_vallocs_mark(struct cg_vallocs *a, const uint64_t *pairs, size_t n);
/*
 * The kept allocations to v->allocs, largest first, their span and op
 * from doc, where each is drawn (v->alloc_live), and each bucket's drawn
 * bytes and count. dev_index: the view's device of each document device
 * number. After the devices' buckets and peaks are settled.
 */
int cg_vallocs_finish(struct cg_view_build *b, const struct cgtrace_doc *doc,
		      const size_t *dev_index);
void cg_vallocs_fini(struct cg_vallocs *a);

int cg_vspans_record(struct cg_view_build *b, const struct cg_vrec *r);
/* The classes' figures summed by span_id into v->spans, strings in doc. */
int cg_vspans_finish(struct cg_view_build *b, const struct cgtrace_doc *doc);
void cg_vspans_fini(struct cg_view_build *b);

/*
 * v->trace_end_ns, v->all_spans from v->doc and v->bands, with the step
 * spans' and bands' highest live bytes; after the devices' buckets.
 */
int cg_vsteps_finish(struct cgtrace_view *v);

#endif

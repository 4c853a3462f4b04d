/* SPDX-License-Identifier: MIT */
/*
 * Building a view: what the record and checkpoint hooks of the second read
 * (or a full document's replay) accumulate, split by job: the grid of
 * buckets (view_grid.c), the largest allocations (view_allocs.c), the
 * figures by span (view_spans.c).
 */
#ifndef CG_VIEW_BUILD_H
#define CG_VIEW_BUILD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cgtrace.h"
#include "strpool.h"
#include "vec.h"

/* A device while the view is built. */
struct cg_vdev {
	uint64_t live, cat[CGTRACE_CAT_COUNT]; /* after the last record */
	uint64_t count;                        /* allocations live after it */
	size_t cur;                            /* the bucket of the last record */
	bool started;
	uint32_t *ck_of;  /* per bucket: checkpoint index + 1 in cks (made at the first) */
	struct cg_vec cks;  /* struct cgtrace_view_checkpoint */
	struct cg_vec ooms; /* struct cgtrace_view_checkpoint */
};

/* One of the largest allocations, in a slot that stays put while the heap moves. */
struct cg_vslot {
	struct cgtrace_view_alloc a;
	uint32_t entry; /* its allocation's entry while live and tracked; UINT32_MAX: none */
};

struct cg_vallocs {
	struct cg_vslot *slot; /* max slots */
	uint32_t *heap;        /* slot indices; the least kept on top */
	size_t n, max;
	struct cg_vec slot_of; /* uint32_t by entry: slot + 1 (0: not kept) */
};

struct cg_vspan {
	uint32_t name; /* in the build's pool */
	struct cgtrace_view_span_memory m;
};

struct cg_view_build {
	struct cgtrace_view *v;
	struct cg_vdev *dev;    /* by the document's device number */
	size_t *dev_index;      /* document device number -> index in v->devices */
	size_t n_dev;
	struct cg_vallocs allocs;
	struct cg_strpool pool; /* span ids */
	struct cg_vec spans;    /* struct cg_vspan, by pool id */
	int err;                /* the first -errno of a hook */
};

/* The point after a record applied, with what the view needs besides. */
struct cg_vrec {
	const struct cgtrace_timeline_point *p;
	uint16_t dev;
	uint32_t entry, replaced; /* as struct cg_stream_seen */
	uint64_t stack;
	const char *tensor_id; /* allocs only */
	size_t tensor_id_len;
	const char *span_id, *op_name; /* op_name NULL when absent */
	bool preexisting;
};

int cg_vgrid_init(struct cg_view_build *b);
void cg_vgrid_record(struct cg_view_build *b, const struct cg_vrec *r);
int cg_vgrid_checkpoint(struct cg_view_build *b, uint16_t dev,
			const struct cgtrace_view_checkpoint *ck);
/* Carries every device to the grid's end and hands the checkpoints to the view. */
int cg_vgrid_finish(struct cg_view_build *b);
void cg_vgrid_fini(struct cg_view_build *b);

int cg_vallocs_init(struct cg_vallocs *a, size_t max);
int cg_vallocs_record(struct cg_view_build *b, const struct cg_vrec *r);
/* The kept allocations to v->allocs, largest first, and each bucket's drawn_bytes. */
int cg_vallocs_finish(struct cg_view_build *b);
void cg_vallocs_fini(struct cg_vallocs *a);

int cg_vspans_record(struct cg_view_build *b, const struct cg_vrec *r);
int cg_vspans_finish(struct cg_view_build *b, const struct cgtrace_doc *doc);
void cg_vspans_fini(struct cg_view_build *b);

/* Live bytes by category made to sum to live (saturating counts may drift apart). */
void cg_view_fit(uint64_t out[CGTRACE_CAT_COUNT], const uint64_t in[CGTRACE_CAT_COUNT],
		 uint64_t live);

#endif

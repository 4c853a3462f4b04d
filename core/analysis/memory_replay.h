/* SPDX-License-Identifier: MIT */
/* Replaying memory records in analysis order: shared by the analyses. */
#ifndef CG_MEMORY_REPLAY_H
#define CG_MEMORY_REPLAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cgtrace.h"

struct cgtrace_doc;

struct cg_replay_dev {
	uint64_t live;
	uint64_t by_cat[CGTRACE_CAT_COUNT];
	uint64_t peak, peak_ts, allocs, frees;
	uint64_t capacity; /* largest used + free of the device's checkpoints */
	bool has_capacity;
	bool listed;       /* has memory or device_memory records */
};

struct cg_replay {
	const struct cgtrace_doc *doc;
	uint32_t *order;   /* NULL when file order is analysis order */
	struct cg_replay_dev *dev;
	size_t n_dev;
	uint32_t *live_of; /* tensor string id -> live alloc record index + 1 */
	size_t pos;        /* records applied so far */
	uint64_t realloc_live, unknown_free;
};

int cg_replay_init(struct cg_replay *r, const struct cgtrace_doc *d);
void cg_replay_fini(struct cg_replay *r);
/* Back to nothing live, keeping order and capacities. */
void cg_replay_reset(struct cg_replay *r);
/* Document index of the k-th record in analysis order. */
size_t cg_replay_index(const struct cg_replay *r, size_t k);
/* What a step did: the bytes and category it added or took, the alloc a free undid. */
struct cg_replay_did {
	size_t index;     /* the record's document index */
	uint64_t bytes;
	uint8_t category;
	uint32_t undid;   /* a free: its alloc's index + 1; an alloc: the live alloc it replaced + 1; 0: none */
};
/* Applies the next record; returns its device number. */
uint16_t cg_replay_step(struct cg_replay *r);
/* The same, saying what it did. */
uint16_t cg_replay_step_did(struct cg_replay *r, struct cg_replay_did *did);

#endif

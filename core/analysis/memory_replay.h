/* SPDX-License-Identifier: MIT */
/*
 * A full document's memory records replayed through the memory analysis
 * (memory_stream.h) in analysis order: afterwards the analysis holds what
 * a streamed document's holds after its read, so every figure is read off
 * it the same way.
 */
#ifndef CG_MEMORY_REPLAY_H
#define CG_MEMORY_REPLAY_H

#include <stddef.h>
#include <stdint.h>

#include "memory_stream.h"

struct cgtrace_doc;

/*
 * Every memory record of full document d through a new analysis (*out,
 * the caller's to free), capacities first from all its checkpoints, as
 * cfg says (its preset is not read); then the analysis's end. 0, a
 * callback's non-zero return that stopped it, or a -errno.
 */
int cg_replay_run(const struct cgtrace_doc *d, const struct cg_stream_cfg *cfg,
		  struct cg_stream **out);

/*
 * The document's analysis: a streamed read's own, else one replayed now
 * into *own, which the caller frees (NULL when none was made). 0 or a
 * -errno, as cg_replay_run.
 */
int cg_replay_or_stream(const struct cgtrace_doc *d, const struct cg_stream **s,
			struct cg_stream **own);

/* The same one record at a time, saying what each did (a view's replay, core/view). */
struct cg_replay {
	const struct cgtrace_doc *doc;
	uint32_t *order;           /* NULL when file order is analysis order */
	struct cg_stream *s;
	struct cg_stream_dev *dev; /* s's devices, by the document's device numbers */
	size_t n_dev;
	size_t pos;                /* records applied so far */
};

/* What a step did: the bytes and category it added or took, the alloc a free undid. */
struct cg_replay_did {
	size_t index;     /* the record's document index */
	uint64_t bytes;
	uint8_t category;
	uint32_t undid;   /* a free: its alloc's index + 1; an alloc: the live alloc it replaced + 1; 0: none */
};

/* hooks (NULL: none): a span hook, told of the span events in their time; no record hook. */
int cg_replay_init(struct cg_replay *r, const struct cgtrace_doc *d,
		   const struct cg_stream_hooks *hooks, void *user);
void cg_replay_fini(struct cg_replay *r);
/*
 * Applies the next record; returns its device number. An error (out of
 * memory) ends the replay there: every record counts as applied.
 */
uint16_t cg_replay_step_did(struct cg_replay *r, struct cg_replay_did *did);

#endif

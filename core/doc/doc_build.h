/* SPDX-License-Identifier: MIT */
/* Filling a document record by record; the reader's side of the document. */
#ifndef CG_DOC_BUILD_H
#define CG_DOC_BUILD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "record.h"

struct cgtrace_doc;
/* Lookup tables that live while a document is built. */
struct cg_build;

struct cg_build *cg_build_new(void);
void cg_build_free(struct cg_build *b);

/*
 * Adds one record. 0, or a negative errno with the message (without the
 * position) in err: -EBADMSG for a broken rule, -ENOMEM & co. otherwise.
 */
int cg_doc_add(struct cgtrace_doc *d, const struct cg_rec *r, char *err, size_t errlen);

/* What a streamed document needs of a packed memory record of the compact decoder. */
struct cg_doc_packed {
	uint64_t ts, bytes, addr;
	uint64_t stack;   /* the record's cgprobe_stack, 0: none (docs/stacks.md) */
	/* A definition without frames (a light read): their number (0: none), a tree's parent. */
	uint32_t def_frames;
	bool def_tree;
	uint64_t def_parent;
	uint32_t dec_cls; /* the decoder's class number */
	uint8_t action;
	bool vmm; /* the tensor_id is "vmm:" and the address */
	bool pre; /* cgprobe_preexisting */
};

/*
 * Adds a packed memory record (ndim 1, shape [bytes], no device identity)
 * to a streamed document: its decoder class maps to the document's class
 * by an array, its address is its id; m, the record itself, is read only
 * for a class not seen yet or a vmm: id. As cg_doc_add otherwise, without
 * the message (the stack rules are the caller's).
 */
int cg_doc_add_packed(struct cgtrace_doc *d, const struct cg_rec_memory *m,
		      const struct cg_doc_packed *pk);
/* The trace promises memory records in timestamp order: tells a streamed document's sink. */
void cg_doc_in_order(struct cgtrace_doc *d);

/*
 * The step of the span with this string id (enum cgtrace_step), while the
 * document is built or once it is finished; -1 when no span_start named it
 * (yet).
 */
int cg_doc_span_step(const struct cgtrace_doc *d, uint32_t span_id);

#endif

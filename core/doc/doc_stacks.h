/* SPDX-License-Identifier: MIT */
/* A document's stack table and module list (docs/stacks.md), built record by record. */
#ifndef CG_DOC_STACKS_H
#define CG_DOC_STACKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "record.h"

struct cgtrace_doc;

/* True when m carries a stack or module field, the only records cg_doc_stacks_add needs. */
static inline bool cg_doc_stacks_in(const struct cg_rec_memory *m)
{
	return m->stack || m->n_stack_frames || m->n_modules || m->has_stack_parent ||
	       m->n_py_codes;
}

/* s as a NUL-terminated copy in the document's stack arena (NULL stays NULL); 0 or -ENOMEM. */
int cg_doc_copy_sv(struct cgtrace_doc *d, struct cg_sv s, const char **out);
/*
 * The ids first to last of a stack block read with CGTRACE_READ_SKIP_STACKS,
 * skipped unread: defined from here on, of unknown depth; 0 or -ENOMEM.
 */
int cg_doc_stacks_skipped(struct cgtrace_doc *d, uint64_t first, uint64_t last);
/* Whether stack id was defined (by a record added before). */
bool cg_doc_stack_known(const struct cgtrace_doc *d, uint64_t id);
/*
 * Checks the stack fields of memory record m (doc_rules.h) and adds its
 * frames and modules to the tables. rec: the record's index among the
 * document's memory records (UINT64_MAX where none are kept), which
 * canonical export writes the frames and modules on. *stack: the index + 1
 * of the record's stack node, 0 for none (and in a light document). 0, -EBADMSG with the
 * message in err, or -ENOMEM.
 */
int cg_doc_stacks_add(struct cgtrace_doc *d, const struct cg_rec_memory *m, uint64_t rec,
                      uint32_t *stack, char *err, size_t errlen);
/* Records the stack of full document d's memory record rec (index + 1, not 0). */
int cg_doc_stacks_set_mem(struct cgtrace_doc *d, size_t rec, uint32_t stack);
void cg_doc_stacks_free(struct cgtrace_doc *d);
/* The stack node (index + 1) of full document d's memory record i (0: none). */
uint32_t cg_doc_mem_stack(const struct cgtrace_doc *d, size_t i);
/* The stack id of node (index + 1; 0 for 0 and a flat definition's inner nodes). */
uint64_t cg_doc_node_id(const struct cgtrace_doc *d, uint32_t node);
/* The definition that made node (index + 1, not 0). */
const struct cg_stack_def *cg_doc_node_def(const struct cgtrace_doc *d, uint32_t node);
/* The memory record (index) that made definition def; UINT64_MAX where none are kept. */
uint64_t cg_doc_def_rec(const struct cgtrace_doc *d, const struct cg_stack_def *def);
/* The id of the stack node's definition hangs from (0: none; a tree definition's parent). */
uint64_t cg_doc_node_parent_id(const struct cgtrace_doc *d, uint32_t node);
/* The frames of node (index + 1), innermost first, into out (at most max); returns its depth. */
size_t cg_doc_node_frames(const struct cgtrace_doc *d, uint32_t node, uint64_t *out, size_t max);

#endif

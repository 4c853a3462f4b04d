/* SPDX-License-Identifier: MIT */
/*
 * A document's index from stack id to its node (a light document's: to
 * its depth). Writers number stacks 1, 2, ... in definition order, so
 * while every definition's ids come after the ones before, the definitions
 * themselves are the index: a coarse table of one entry per 64 ids points
 * into them, and a binary search finds the id (a framework's 2.8 M ids in
 * 170 KB rather than 11 MB). A definition out of that order turns the
 * index into an array of 4 bytes an id (1 for depths), and a map for ids
 * past 2^24.
 */
#ifndef CG_STACK_IDS_H
#define CG_STACK_IDS_H

#include <stdbool.h>
#include <stdint.h>

struct cgtrace_doc;

struct cg_id_range {
	uint64_t first, last;
};

/* The node index of id (a light document's depth), -1: not defined. */
long cg_stack_ids_find(const struct cgtrace_doc *d, uint64_t id);
struct cg_stack_def;
/* As cg_stack_ids_find, with the definition where the index has it at hand (else NULL). */
long cg_stack_ids_find_def(const struct cgtrace_doc *d, uint64_t id, const struct cg_stack_def **def);
/* Whether id is defined. */
bool cg_stack_ids_known(const struct cgtrace_doc *d, uint64_t id);
/* True when every id from first on is surely undefined, without a lookup each. */
bool cg_stack_ids_all_new(const struct cgtrace_doc *d, uint64_t first);
/* A light document's ids first.. (n of them) and their depths, depth and on by one; 0 or -ENOMEM. */
int cg_stack_ids_put_depths(struct cgtrace_doc *d, uint64_t first, uint64_t n, uint32_t depth);
/* The ids of definition def (the last one pushed), indexed; 0 or -ENOMEM. */
int cg_stack_ids_add_def(struct cgtrace_doc *d, uint32_t def);
/* A light document's ids first to last, of a stack block skipped unread; 0 or -ENOMEM. */
int cg_stack_ids_put_skipped(struct cgtrace_doc *d, uint64_t first, uint64_t last);
void cg_stack_ids_free(struct cgtrace_doc *d);

#endif

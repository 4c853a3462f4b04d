/* SPDX-License-Identifier: MIT */
/*
 * The module entry of an address (docs/symbols.md): the entry covering it
 * recorded last at or before the stack's definition, else the earliest
 * recorded after. Entries may overlap (a library unloaded and another
 * mapped at the same addresses), so an index answers in O(log n) plus the
 * entries that hold the address, where a scan of every entry would cost
 * hundreds of comparisons per frame in a large process.
 */
#ifndef CG_MODULE_INDEX_H
#define CG_MODULE_INDEX_H

#include <stddef.h>
#include <stdint.h>

#include "cgtrace.h"

/*
 * A segment tree over the distinct ends of the entries' ranges: leaf k
 * is [bounds[k], bounds[k + 1]), node 1 the root, leaf k node width + k;
 * each entry is listed at the O(log n) nodes that cover its range
 * exactly, so the nodes from an address's leaf to the root list every
 * entry holding it, once.
 */
struct cg_module_index {
	const struct cgtrace_module *mods; /* the caller's, in recorded order */
	uint64_t *bounds;
	size_t n_leaves, width;
	uint32_t *first; /* node v lists items[first[v] .. first[v + 1]) */
	uint32_t *items; /* entry indices, ascending in each node */
};

/* The index of n entries (kept by pointer: mods must outlive it). 0, -ENOMEM or -EOVERFLOW. */
int cg_module_index_build(struct cg_module_index *ix, const struct cgtrace_module *mods, size_t n);

/* The entry index for pc of a stack defined at defined_ns; -1 when no entry holds pc. */
long cg_module_index_find(const struct cg_module_index *ix, uint64_t pc, uint64_t defined_ns);

void cg_module_index_free(struct cg_module_index *ix);

/*
 * The same rule by a scan of mods: for a caller without an index, and the
 * reference the index is tested against.
 */
long cg_module_for(const struct cgtrace_module *mods, size_t n, uint64_t pc, uint64_t defined_ns);

#endif

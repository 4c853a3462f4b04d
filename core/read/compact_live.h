/* SPDX-License-Identifier: MIT */
/*
 * The compact decoder's live table: for each (space, address) allocated
 * and not yet freed, its bytes. A space is a device and whether the
 * tensor_id has the vmm: prefix; the address is the tensor_id's hex value.
 * Sized by the allocations live at once (it grows, never by records).
 */
#ifndef CG_COMPACT_LIVE_H
#define CG_COMPACT_LIVE_H

#include <stdbool.h>
#include <stdint.h>

struct cg_clive_ent {
	uint64_t addr;
	uint64_t bytes;
	uint32_t space1; /* space + 1; 0: an empty slot */
};

struct cg_clive {
	struct cg_clive_ent *e;
	uint32_t mask;
	uint32_t count;
};

void cg_clive_fini(struct cg_clive *t);
/* Sets the entry (replacing one already there); 0 or -ENOMEM. */
int cg_clive_set(struct cg_clive *t, uint32_t space, uint64_t addr, uint64_t bytes);
/* Removes the entry, with its bytes in *bytes; false when there was none. */
bool cg_clive_take(struct cg_clive *t, uint32_t space, uint64_t addr, uint64_t *bytes);

#endif

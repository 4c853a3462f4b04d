/* SPDX-License-Identifier: MIT */
/*
 * The compact encoding's live table (docs/compact-format.md), kept alike by
 * its encoder and its decoder: for each (space, address) allocated and not
 * yet freed, its bytes, and a value of the caller's (the encoder keeps its
 * alloc's history ordinal there). A space is a device's string id times 2,
 * plus 1 when the tensor_id has the vmm: prefix; the address is the
 * tensor_id's hex value. Sized by the allocations live at once (it grows,
 * never by records).
 */
#ifndef CG_COMPACT_LIVE_H
#define CG_COMPACT_LIVE_H

#include <stdbool.h>
#include <stdint.h>

struct cg_clive_ent {
	uint64_t addr;
	uint64_t bytes;
	uint64_t aux;    /* the caller's */
	uint32_t space1; /* space + 1; 0: an empty slot */
};

struct cg_clive {
	struct cg_clive_ent *e;
	uint32_t mask;
	uint32_t count;
};

void cg_clive_fini(struct cg_clive *t);
/* Sets the entry (replacing one already there); 0 or -ENOMEM. */
int cg_clive_set(struct cg_clive *t, uint32_t space, uint64_t addr, uint64_t bytes,
		 uint64_t aux);
/* The entry of (space, addr), or NULL; valid until the table changes. */
const struct cg_clive_ent *cg_clive_get(const struct cg_clive *t, uint32_t space, uint64_t addr);
/* Removes the entry, with its bytes in *bytes; false when there was none. */
bool cg_clive_take(struct cg_clive *t, uint32_t space, uint64_t addr, uint64_t *bytes);

#endif

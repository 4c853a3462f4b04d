/* SPDX-License-Identifier: MIT */
/*
 * The compact encoding's live table (docs/compact-format.md), kept alike by
 * its encoder and its decoder: for each (space, address) allocated and not
 * yet freed, its bytes, and, when the table keeps them, a value of the
 * caller's (the encoder keeps its alloc's history ordinal there). A space
 * is a device's number times 2, plus 1 when the tensor_id has the vmm:
 * prefix; the address is the tensor_id's hex value. Sized by the
 * allocations live at once (it grows, never by records).
 */
#ifndef CG_COMPACT_LIVE_H
#define CG_COMPACT_LIVE_H

#include <stdbool.h>
#include <stdint.h>

struct cg_clive_slot;

/* One space's addresses: a trace has a few (the host, each GPU). */
struct cg_clive_space {
	uint32_t space;
	uint32_t mask, count;
	struct cg_clive_slot *slots; /* addr 0: empty; address 0 itself is kept in zero */
	uint64_t *aux;               /* beside slots, when the table keeps aux */
	bool has_zero;
	uint64_t zero_bytes, zero_aux;
};

struct cg_clive {
	bool keep_aux; /* set before the first call */
	uint32_t n_spaces, last;
	struct cg_clive_space *spaces;
};

void cg_clive_fini(struct cg_clive *t);
/* Sets the entry (replacing one already there); 0 or -ENOMEM. */
int cg_clive_set(struct cg_clive *t, uint32_t space, uint64_t addr, uint64_t bytes,
		 uint64_t aux);
/* The entry's bytes and aux (0 unless kept); false when there is none. */
bool cg_clive_get(struct cg_clive *t, uint32_t space, uint64_t addr, uint64_t *bytes,
		  uint64_t *aux);
/* Removes the entry, with its bytes in *bytes; false when there was none. */
bool cg_clive_take(struct cg_clive *t, uint32_t space, uint64_t addr, uint64_t *bytes);

#endif

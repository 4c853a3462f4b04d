/* SPDX-License-Identifier: MIT */
/*
 * Memory the program says holds model parameters (cgprobe_mark_parameters):
 * a sorted table of ranges, merged where they touch. Marking takes a lock;
 * reading takes none (a sequence count), so the allocation hook may ask.
 */
#ifndef CG_PARAMS_H
#define CG_PARAMS_H

#include <stdbool.h>
#include <stdint.h>

/* Adds [addr, addr + bytes): 0, -EINVAL for an empty or wrapping range, -ENOSPC when full. */
int cg_params_mark(uint64_t addr, uint64_t bytes);
/*
 * Whether [addr, addr + bytes) lies within a marked range, or a marked
 * range starts at addr (the allocation that holds it, which the range
 * need not fill). Lock-free; false at once while nothing is marked.
 */
bool cg_params_contains(uint64_t addr, uint64_t bytes);
/* Forgets every range (a new trace's process, tests). */
void cg_params_clear(void);

#endif

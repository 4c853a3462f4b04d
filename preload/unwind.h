/* SPDX-License-Identifier: MIT */
/*
 * The fast unwinder (docs/probe.md, "Call stacks"): x86-64 frames stepped
 * by their call-frame rules (cfi.h), each rule read once per thread and
 * kept in a table by code address. A frame whose rule it does not take
 * (see cfi.h) makes the whole stack libunwind's.
 *
 * Stepping is a chain of dependent loads (a return address, its rule, the
 * next CFA, the next return address): about 6 ns a frame whatever the
 * table. So the thread's last walk is kept too, each frame's CFA, return
 * address and rbp. When this walk reaches a frame the last one had (same
 * CFA and return address, and the same rbp where a later CFA depends on
 * it), the rest would be the same computation on the same inputs if every
 * stack word the last walk read from there on, and that the result
 * depends on, still holds what it held: those words are read again, all
 * at once (no chain), and compared; only if every one agrees is the rest
 * taken from the last walk. Otherwise the walk goes on frame by frame.
 * Each return address given is thus one just read from the stack.
 */
#ifndef CG_UNWIND_H
#define CG_UNWIND_H

#include <stddef.h>
#include <stdint.h>

#include "cfi.h"

/* Rules kept per thread: a direct-mapped table. */
#define CG_UNWIND_SLOTS 4096u

struct cg_unwind_slot {
	uint64_t pc; /* 0: empty; the address the rule was looked up at */
	struct cg_cfi_rule rule;
};

/* Frames a kept walk holds at most: deeper stacks are walked in full. */
#define CG_UNWIND_KEPT 128u

/* One frame of a walk: the state after stepping to it, and the stack words read doing so. */
struct cg_unwind_frame {
	uint64_t cfa;   /* the caller's rsp; the return address was read at cfa - 8 */
	uint64_t ra;    /* 0 ends the walk (read as 0 from the stack) */
	uint64_t bp;    /* rbp in the caller */
	int32_t bp_off; /* rbp was read at cfa + bp_off; 0: carried from the frame before */
	uint8_t cfa_bp; /* the CFA came from rbp */
	/*
	 * Whether a later frame's CFA depends on bp: in code built without
	 * frame pointers rbp is a plain register, and what it holds (a saved
	 * copy of it included) changes call to call without changing a frame.
	 */
	uint8_t bp_live;
};

struct cg_unwind_walk {
	uint32_t n; /* frames held; 0: none */
	struct cg_unwind_frame f[CG_UNWIND_KEPT];
};

struct cg_unwind_cache {
	uint32_t epoch; /* the rules' generation: a dlclose or a new trace starts a new one */
	/* Odd while a walk records: a signal handler's walk on this thread then neither uses nor
	 * records. */
	uint32_t gen;
	uint32_t
	    last; /* walk[last] is the last complete walk, walk[last ^ 1] the one being recorded */
	struct cg_unwind_walk walk[2];
	struct cg_unwind_slot slot[CG_UNWIND_SLOTS];
};

/*
 * Return addresses from the caller's frame out, at most max; -1 when a
 * frame on the way needs libunwind (the caller takes the whole stack
 * with it). epoch: the current generation; a cache of another is
 * emptied first. Allocates nothing; safe in a signal handler that
 * interrupted the same thread's unwind.
 */
int cg_unwind(void **out, int max, struct cg_unwind_cache *c, uint32_t epoch);

#endif

/* SPDX-License-Identifier: MIT */
/*
 * Call stacks of allocations, on the allocating thread (docs/probe.md,
 * "Call stacks"). A hook unwinds with libunwind, drops the probe's own
 * frames, and names the stack by the slot of the thread's cache that
 * holds it: a thread sends a stack's frames to the writer once, into its
 * slot (a CG_EV_STACK event and its frames in the ring, event.h), and
 * then only the slot, beside each event (ring.h). The writer interns
 * what a slot names (stack_intern.h), so a stack two threads sent is
 * still written once.
 */
#ifndef CG_STACK_H
#define CG_STACK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "options.h"

/* Frames per stack in effect: CGPROBE_STACK_DEPTH, 0 when off or when the unwinder failed. */
extern unsigned cg_stack_depth;

/*
 * At probe start, before any hook records, outside any hook: the
 * unwinder's set-up. Turns stacks off (cg_opt.stack_depth too, for the
 * meta tag) with one warning when it cannot be done.
 */
void cg_stack_setup(void);
/* A new trace starts: every thread sends its stacks anew. Outside hooks. */
void cg_stack_session_start(void);
/*
 * libunwind's (libunwind-common.h; stack.c includes both, so the compiler
 * checks that they agree), declared here rather than included: its header
 * names differ with UNW_LOCAL_ONLY.
 */
int unw_backtrace(void **buffer, int size);

/*
 * The probe's frames a heap hook's unwind starts with (cg_stack_take's,
 * the exported wrapper with the hook inlined in it; realloc's
 * cg_hook_realloc_end too), and one to spare. A device hook asks for
 * CG_STACK_SKIP_MAX (stack.c).
 */
#define CG_STACK_SKIP_HEAP 4u
#define CG_STACK_SKIP_MAX 8u

/*
 * In a hook (guard held): the calling thread's stack, its definition
 * pushed to the thread's ring first when this thread has not sent it
 * yet. Returns its slot (event.h), 0 for none. hold: the event naming it
 * is pushed only after a call that may itself allocate (a device hook):
 * the slot is kept from those allocations until the next hold.
 *
 * The frames asked for are the depth and the probe's frames expected
 * above it (this function's, the exported wrapper's), not a wide margin:
 * each frame past the program's depth is a step paid for nothing. The
 * stack is unwound again, with the margin, when more probe frames than
 * expected left it short.
 */
uint32_t cg_stack_take(bool hold);

static inline __attribute__((always_inline)) uint32_t cg_stack_capture(bool hold)
{
	return cg_stack_depth ? cg_stack_take(hold) : 0;
}
/* The event a hold was for is pushed: the slot is any stack's again. */
void cg_stack_unhold(void);

/*
 * After a dlclose unmapped code in [lo, hi), outside hooks: libunwind
 * keeps frame layouts by address and never forgets them, so a stack
 * through that range, where other code may be mapped now, is taken by the
 * slow unwinder from then on. Then cg_stack_unload_done, once.
 */
void cg_stack_unloaded(uintptr_t lo, uintptr_t hi);
/* Every thread sends its stacks anew, and the writer interns them anew. */
void cg_stack_unload_done(void);
/* The bytes a ring's stack cache (ring.h) maps, 0 for none. */
struct cg_stack_cache;
size_t cg_stack_cache_len(const struct cg_stack_cache *c);

#endif

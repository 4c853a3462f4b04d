/* SPDX-License-Identifier: MIT */
/*
 * The binary record a hook leaves for the writer (32 bytes, no formatting)
 * and what an event carries beyond it: names, blobs, module lists.
 */
#ifndef CG_EVENT_H
#define CG_EVENT_H

#include <stddef.h>
#include <stdint.h>

#include "probe.h"
#include "record.h"

enum cg_ev_kind {
	CG_EV_ALLOC,      /* host heap */
	CG_EV_FREE,
	/*
	 * addr: the name and what the span carries beyond it (span_blob.h, a
	 * copy the writer frees); size: the parent span; op: the span kind;
	 * category: the blob's CG_SPAN_* flags.
	 */
	CG_EV_SPAN_START,
	CG_EV_SPAN_END,   /* size: the start's ticks, 0 for a duration of 0 */
	CG_EV_DEV_ALLOC,  /* device source (probe.h): op indexes its op_names; step: the device */
	CG_EV_DEV_FREE,
	CG_EV_DEV_MEMINFO, /* addr: used bytes; size: free bytes; step: the device */
	CG_EV_DEV_OOM,     /* addr: the failed request; a MEMINFO follows */
	CG_EV_DEV_INFO,    /* addr: "uuid\0name" (a copy the writer frees); size: total bytes */
	/*
	 * A call stack's definition (stack.c): addr: its hash; size: its frame
	 * count; span: the slot it fills (below). Its frames follow
	 * in the next slots, CG_EV_FRAMES_PER_SLOT each, all pushed at once
	 * (cg_ring_push_n).
	 */
	CG_EV_STACK,
	CG_EV_FRAMES,  /* ts, addr, size: three frames of the CG_EV_STACK before it */
	CG_EV_MODULES, /* addr: a module list (modules.h), mapped memory the writer unmaps */
	CG_EV_UNLOAD,  /* a dlclose unmapped code: stacks sent after it are interned anew */
	CG_EV_GRADIENT,   /* addr: a struct cg_grad_blob (below) the writer frees; span: number */
	CG_EV_CHECKPOINT, /* addr: a struct cg_ckpt_blob the writer frees (the annotation API's) */
};

#define CG_EV_FRAMES_PER_SLOT 3
/*
 * How an event names its stack (stack.c): by the slot of its thread's
 * stack cache that holds it, 1 to CG_STACK_CACHE_SLOTS, or the spare slot
 * CG_STACK_SLOTS, which is never cached (0: no stack). A CG_EV_STACK fills
 * a slot, so in a ring's order a slot names the stack of the last
 * definition before it: the writer keeps one word a slot per ring (ring.h)
 * and the ids can never run out, however long a program runs.
 */
#define CG_STACK_CACHE_SLOTS 1024u
#define CG_STACK_SLOTS (CG_STACK_CACHE_SLOTS + 1)

/* What a gradient or checkpoint event's addr points at (the writer frees it). */
struct cg_grad_blob {
	double norm;
	uint8_t state;
	char strings[]; /* "root\0key\0" */
};
struct cg_ckpt_blob {
	uint64_t used, free_bytes, reserved, allocated;
	char device[];
};

/* A CG_EV_MODULES event's list (modules.c makes it): mapped memory. */
struct cg_modules {
	size_t map_len;
	uint32_t count;
	struct cg_modv mod[]; /* their strings follow the array */
};

/* The list's memory goes back (the writer, or a pending event dropped). */
void cg_modules_release(struct cg_modules *m);

/* Flags in the kind byte of device events: CG_PROBE_MANAGED, CG_PROBE_VMM. */
#define CG_EV_KIND_MASK 0x0f
_Static_assert(((CG_PROBE_MANAGED | CG_PROBE_VMM) & CG_EV_KIND_MASK) == 0,
	       "device flags leave the kind alone");

/* What was called: the record's op_name. */
enum cg_op {
	CG_OP_MALLOC,
	CG_OP_CALLOC,
	CG_OP_REALLOC,
	CG_OP_REALLOCARRAY,
	CG_OP_POSIX_MEMALIGN,
	CG_OP_ALIGNED_ALLOC,
	CG_OP_MEMALIGN,
	CG_OP_VALLOC,
	CG_OP_PVALLOC,
	CG_OP_FREE,
	CG_OP_COUNT
};

struct cg_event {
	uint64_t ts;   /* clock ticks (see clock.h); the writer makes them ns */
	uint64_t addr; /* memory: the address; span start: its blob (span_blob.h) */
	uint64_t size; /* memory: requested bytes; span start: parent span; span end: start ticks */
	uint32_t span; /* memory: innermost span of the thread; span events: the span */
	uint8_t kind;
	uint8_t op;
	uint8_t category; /* enum cgtrace_category */
	uint8_t step;     /* span start: enum cgtrace_step */
};

_Static_assert(sizeof(struct cg_event) == 32, "events are 32 bytes");

/* The slots an event takes in a ring: a stack's definition takes its frames' too. */
static inline unsigned cg_event_slots(const struct cg_event *e)
{
	if ((e->kind & CG_EV_KIND_MASK) != CG_EV_STACK)
		return 1;
	return 1 + (unsigned)((e->size + CG_EV_FRAMES_PER_SLOT - 1) / CG_EV_FRAMES_PER_SLOT);
}
/* An event that will never be processed: the memory it carries goes back. */
void cg_event_discard(const struct cg_event *e);

extern const char *const cg_op_names[CG_OP_COUNT];

#endif

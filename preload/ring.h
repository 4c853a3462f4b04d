/* SPDX-License-Identifier: MIT */
/*
 * Per-thread single-producer rings of events, drained by the writer thread.
 * No lock on the hot path: the owner writes head, the writer writes tail.
 * Rings are mapped memory, never freed: a dead thread's ring goes back to a
 * free list once drained, so memory stays bounded by live threads.
 */
#ifndef CG_RING_H
#define CG_RING_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "event.h"

struct cg_stack_cache;

/* ring->unwinds: by the fast unwinder, by libunwind, and where the two differed. */
enum { CG_RING_UNWOUND_FAST, CG_RING_UNWOUND_LIBUNWIND, CG_RING_UNWOUND_DIFFERED, CG_RING_UNWIND_KINDS };

#define CG_RING_EVENTS 8192 /* 276 KiB per thread that allocates, stack slots included */

enum { CG_RING_FREE, CG_RING_OWNED };

struct cg_ring {
	_Alignas(64) atomic_uint_fast64_t head;
	uint64_t tail_seen; /* owner only: the last tail read, so most pushes read no shared line */
	/* Owner only, on the owner's line: the stacks already sent (stack.c), or NULL. */
	struct cg_stack_cache *stacks;
	/* Times the owner found the ring full and waited for the writer (CGPROBE_STATS). */
	atomic_uint_fast64_t full;
	/*
	 * Owner only, read for CGPROBE_STATS: stacks the fast unwinder took,
	 * those libunwind took, and those where the two differed (stack.c).
	 */
	atomic_uint_fast64_t unwinds[CG_RING_UNWIND_KINDS];
	_Alignas(64) atomic_uint_fast64_t tail;
	atomic_int waiting; /* futex word: the owner sleeps on a full ring until the writer frees room */
	atomic_int state;
	pid_t tid;
	uint64_t last_ns; /* writer only: keeps the thread's stamps strictly increasing */
	uint64_t pending_oom; /* writer only: a DEV_OOM waiting for its MEMINFO */
	bool has_pending_oom;
	struct cg_ring *next; /* registry; rings are never unlinked */
	/*
	 * Writer only: what each stack slot of the owner's names now
	 * (stack_intern.h). It stays with the ring, as the owner's stack
	 * cache does, so a thread that takes over a dead one's ring finds
	 * both alike.
	 */
	uint32_t stack_names[CG_STACK_SLOTS + 1];
	struct cg_event ev[CG_RING_EVENTS];
	/*
	 * Beside each event, the stack it names (its slot, event.h; 0 for
	 * none): published by the same head store as the event, read by the
	 * writer for allocations only, so the 32-byte events stay as they are.
	 */
	uint16_t stack[CG_RING_EVENTS];
};
_Static_assert(CG_STACK_SLOTS <= UINT16_MAX, "a stack slot fits beside its event");

/*
 * The consumer's wake-up (the writer's, writer.c), called when a ring is
 * full or half full: the rings know nothing else of who drains them.
 */
typedef void (*cg_ring_wake_fn)(void);
void cg_rings_set_wake(cg_ring_wake_fn fn);

/* Head of the registry, for the writer. */
struct cg_ring *cg_rings_first(void);
/* The times any ring's owner found it full, all rings together (CGPROBE_STATS). */
uint64_t cg_rings_full(void);
/* Each kind of ring->unwinds, all rings together (CGPROBE_STATS). */
void cg_rings_unwinds(uint64_t out[CG_RING_UNWIND_KINDS]);
/* A ring for the calling thread (reused or new), or NULL if none can be mapped. */
struct cg_ring *cg_ring_claim(void);
/* The slow half of a push: the ring was full, or the writer is due a wake. */
bool cg_ring_push_slow(struct cg_ring *r, const struct cg_event *e, uint32_t stack,
		       bool (*keep_waiting)(void));
/*
 * n consecutive slots (1 to CG_RING_EVENTS / 4) published by one head
 * store, so the writer sees all of them or none: a stack's definition and
 * its frames (event.h). Waits for room as cg_ring_push does.
 */
bool cg_ring_push_n(struct cg_ring *r, const struct cg_event *ev, unsigned n,
		    bool (*keep_waiting)(void));

/*
 * Appends an event and the stack it names; when the ring is full, wakes the
 * writer and waits for room as long as keep_waiting() says so. Returns
 * false if the event was dropped because recording stopped. Inline: it
 * runs on every allocation.
 */
static inline bool cg_ring_push(struct cg_ring *r, const struct cg_event *e, uint32_t stack,
				bool (*keep_waiting)(void))
{
	uint64_t h = atomic_load_explicit(&r->head, memory_order_relaxed);
	if (__builtin_expect(h - r->tail_seen >= CG_RING_EVENTS ||
				     (h + 1) % (CG_RING_EVENTS / 2) == 0,
			     0))
		return cg_ring_push_slow(r, e, stack, keep_waiting);
	r->ev[h % CG_RING_EVENTS] = *e;
	r->stack[h % CG_RING_EVENTS] = (uint16_t)stack;
	atomic_store_explicit(&r->head, h + 1, memory_order_release);
	return true;
}
/* Writer side: events before pos are consumed; wakes the owner if it waits for room. */
void cg_ring_release(struct cg_ring *r, uint64_t pos);
/* After fork, in the child: every ring is emptied and freed but the caller's. */
void cg_rings_reset_after_fork(struct cg_ring *keep);
/*
 * With no writer running: every event not yet drained is dropped, the
 * names they carry freed. Owners may push on meanwhile.
 */
void cg_rings_drop_pending(void);
/* Releases rings of threads that have exited; call after draining them. */
void cg_rings_reclaim(void);

#endif

/* SPDX-License-Identifier: MIT */
#include "hooks.h"

#include <errno.h>
#include <stdatomic.h>
#include <string.h>

#include "capture.h"
#include "clock.h"
#include "options.h"
#include "params.h"
#include "real.h"
#include "ring.h"
#include "run_meta.h"
#include "session.h"
#include "stack.h"
#include "thread.h"

__thread struct cg_thread cg_self __attribute__((tls_model("initial-exec")));

/* Strictly increasing per thread, from the one monotonic clock. */
static inline uint64_t stamp_ticks(uint64_t t)
{
	if (t <= cg_self.last_ts)
		t = cg_self.last_ts + 1;
	cg_self.last_ts = t;
	return t;
}

/* After the real call returned (allocations, spans). */
static uint64_t stamp(void)
{
	return stamp_ticks(cg_clock_ticks());
}

/* Before the real call (frees). */
static uint64_t stamp_before(void)
{
	return stamp_ticks(cg_clock_ticks_before());
}

static bool keep_waiting(void)
{
	return cg_session_recording();
}

/* A thread's first event maps its ring; errno is kept across that mmap. */
static __attribute__((noinline)) bool claim_ring(void)
{
	int saved = errno;
	cg_self.ring = cg_ring_claim();
	errno = saved;
	return cg_self.ring != NULL;
}

static inline void push(const struct cg_event *e, uint32_t stack)
{
	if (__builtin_expect(!cg_self.ring, 0) && !claim_ring())
		return;
	cg_ring_push(cg_self.ring, e, stack, keep_waiting);
}

struct cg_ring *cg_hook_ring(void)
{
	if (__builtin_expect(!cg_self.ring, 0) && !claim_ring())
		return NULL;
	return cg_self.ring;
}

bool cg_hook_push_n(const struct cg_event *ev, unsigned n)
{
	struct cg_ring *r = cg_hook_ring();
	return r && cg_ring_push_n(r, ev, n, keep_waiting);
}

uint64_t cg_hook_stamp(bool before)
{
	return before ? stamp_before() : stamp();
}

void cg_hook_push(const struct cg_event *e, uint32_t stack)
{
	push(e, stack);
}

uint8_t cg_hook_category(uint64_t addr, uint64_t size)
{
	if (cg_params_contains(addr, size))
		return CGTRACE_CAT_PARAMETER;
	return cg_thread_category();
}

void cg_hook_alloc(void *p, size_t size, uint8_t op)
{
	if (size < cg_opt.min_bytes || !cg_session_recording())
		return;
	/* Before the stamp: a new stack's definition goes first, stamped before the allocation. */
	uint32_t stack = cg_stack_depth && !cg_capture_outside ? cg_stack_capture() : 0;
	uint8_t cat = cg_hook_category((uint64_t)(uintptr_t)p, size);
	struct cg_event e = {stamp(), (uint64_t)(uintptr_t)p, size, cg_thread_span(),
			     CG_EV_ALLOC, op, cat, 0};
	push(&e, stack);
}

void cg_hook_free(void *p, uint8_t op)
{
	if (!p || !cg_session_recording())
		return;
	struct cg_event e = {stamp_before(), (uint64_t)(uintptr_t)p, 0, cg_thread_span(), CG_EV_FREE, op,
			     0, 0};
	push(&e, 0);
}

void cg_hook_realloc_begin(void *p, struct cg_realloc_state *st)
{
	st->stamped = p && cg_session_recording();
	if (st->stamped)
		st->ts = stamp_before();
}

void cg_hook_realloc_end(void *old, void *p, size_t size, uint8_t op,
			 const struct cg_realloc_state *st)
{
	/* NULL for a non-zero size is a failure: the old block is untouched. */
	if (!p && size != 0)
		return;
	if (st->stamped && cg_session_recording()) {
		struct cg_event e = {st->ts, (uint64_t)(uintptr_t)old, 0, cg_thread_span(),
				     CG_EV_FREE, op, 0, 0};
		push(&e, 0);
	}
	if (p)
		cg_hook_alloc(p, size, op);
}

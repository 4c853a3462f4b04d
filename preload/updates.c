/* SPDX-License-Identifier: MIT */
#include "updates.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "capture.h"
#include "span_blob.h"
#include "spans.h"
#include "state.h"

#define NO_STEP 0 /* an update's span is no step (enum cgtrace_step's none) */

/*
 * The open update: its number (0: none), whether a range opened it (then
 * only that range ends it), and the span the API opened for it (0: none).
 * Changed under a spin lock held for a few loads and stores; the window
 * and the spans are told outside it. A thread re-entering from a signal
 * handler while it holds the lock changes nothing.
 */
struct open {
	uint64_t n;
	bool by_range;
	uint64_t span, ticks;
};
static struct open cur;
static uint64_t count;  /* updates begun so far */
static bool api_joined; /* the API began inside a range's update: its next end is spent */
static atomic_flag lock = ATOMIC_FLAG_INIT;
static __thread bool holding __attribute__((tls_model("initial-exec")));

static bool take(void)
{
	if (holding)
		return false;
	holding = true;
	while (atomic_flag_test_and_set_explicit(&lock, memory_order_acquire))
		;
	return true;
}

static void give(void)
{
	atomic_flag_clear_explicit(&lock, memory_order_release);
	holding = false;
}

/* The update is over: its span ends, then the window hears of it. */
static void finish(const struct open *u)
{
	if (u->span)
		cg_span_end_loose(u->span, NO_STEP, u->ticks);
	cg_capture_update_ends(u->n);
}

/* The probe counts updates while it is on, recording or not: a capture window waits for one. */
static bool probe_on(void)
{
	return atomic_load(&cg_state) != CG_OFF;
}

uint64_t cg_update_begin(void)
{
	if (!probe_on() || !take())
		return 0;
	if (cur.n && cur.by_range) {
		uint64_t n = cur.n;
		api_joined = true;
		give();
		return n;
	}
	struct open prev = cur;
	uint64_t n = ++count;
	cur = (struct open){n, false, 0, 0};
	api_joined = false;
	give();
	if (prev.n)
		finish(&prev);
	cg_capture_update_begins(n);
	/* After the window's begin, so that the window's trace holds the span. */
	uint64_t ticks;
	uint64_t span =
	    cg_span_start_loose("update", NO_STEP, &(struct cg_span_info){.update = n}, &ticks);
	if (!span)
		return n;
	bool kept = take();
	if (kept && cur.n == n && !cur.by_range) {
		cur.span = span;
		cur.ticks = ticks;
	} else {
		/* Ended meanwhile, by another thread: so is its span. */
		cg_span_end_loose(span, NO_STEP, ticks);
	}
	if (kept)
		give();
	return n;
}

int cg_update_end(void)
{
	if (!probe_on() || !take())
		return 0;
	if (api_joined) {
		api_joined = false;
		give();
		return 0;
	}
	if (!cur.n || cur.by_range) {
		give();
		return -EINVAL;
	}
	struct open prev = cur;
	cur = (struct open){0};
	give();
	finish(&prev);
	return 0;
}

uint64_t cg_update_range_begin(void)
{
	if (!probe_on() || !take())
		return 0;
	uint64_t n = 0;
	if (!cur.n) {
		n = ++count;
		cur = (struct open){n, true, 0, 0};
	}
	give();
	if (n)
		cg_capture_update_begins(n);
	return n;
}

void cg_update_range_end(uint64_t n)
{
	if (!n || !take())
		return;
	bool ends = cur.n == n && cur.by_range;
	if (ends)
		cur = (struct open){0};
	give();
	if (ends)
		cg_capture_update_ends(n);
}

void cg_updates_session_end(void)
{
	if (!take())
		return;
	uint64_t span = cur.span, ticks = cur.ticks;
	cur.span = 0;
	give();
	if (span)
		cg_span_end_loose(span, NO_STEP, ticks);
}

void cg_updates_after_fork(void)
{
	/* Another thread may have held it at the fork: it is gone. */
	atomic_flag_clear(&lock);
	holding = false;
	cur.span = 0;
}

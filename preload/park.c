/* SPDX-License-Identifier: MIT */
#include "park.h"

#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <stdatomic.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "options.h"

/* A ticket's low bit is its kind; 0 is no hold. */
#define KIND_BIT 1u

static struct {
	atomic_uint held;    /* futex word: the ticket holding the writer, 0 for none */
	atomic_uint ack;     /* the ticket the writer last stopped for */
	atomic_uint signals; /* futex word: bumped whenever a requester may go on */
	atomic_int outside;  /* the writer is in cg_park_outside_* */
	atomic_uint next;
	int depth; /* writer only: cg_park_outside_* nesting */
} p;

static long futex(atomic_uint *addr, int op, unsigned val, const struct timespec *ts)
{
	return syscall(SYS_futex, addr, op, val, ts, NULL, 0);
}

static bool fork_kind(uint32_t ticket)
{
	return ticket & KIND_BIT;
}

/*
 * A fork hold the writer may answer. CGPROBE_TEST_FORK_TIMEOUT: none, as a
 * writer starved of CPU would not, so that tests see the fork go on without it.
 */
static bool answerable_fork(uint32_t ticket)
{
	return fork_kind(ticket) && !cg_opt.test_fork_timeout;
}

/* What is left until deadline (cg_clock_raw), as a timespec; false once it passed. */
static bool remaining(uint64_t deadline, struct timespec *ts)
{
	uint64_t now = cg_clock_raw();
	if (now >= deadline)
		return false;
	uint64_t left = deadline - now;
	*ts = (struct timespec){(time_t)(left / 1000000000u), (long)(left % 1000000000u)};
	return true;
}

static uint32_t new_ticket(enum cg_park_kind kind)
{
	uint32_t t;
	do
		t = atomic_fetch_add(&p.next, 1) << 1 | (kind == CG_PARK_FORK ? KIND_BIT : 0);
	while (t >> 1 == 0);
	return t;
}

/* One hold at a time: a fork while a window opens must not let the writer go under it. */
static int take(uint32_t t, uint64_t deadline)
{
	for (;;) {
		unsigned none = 0;
		if (atomic_compare_exchange_strong(&p.held, &none, t))
			return 0;
		struct timespec ts;
		if (!remaining(deadline, &ts))
			return -EBUSY;
		futex(&p.held, FUTEX_WAIT_PRIVATE, none, &ts);
	}
}

/*
 * The writer answered: it stopped for this ticket, or (a fork hold) it is
 * outside the table. Sequentially consistent with the writer's side: the
 * ticket is stored before outside is read here, outside before held is
 * read there, so a writer seen outside sees the ticket when it comes back.
 */
static bool answered(uint32_t t)
{
	return atomic_load(&p.ack) == t || (fork_kind(t) && atomic_load(&p.outside));
}

int cg_park_hold(enum cg_park_kind kind, int timeout_ms, void (*ask)(void), uint32_t *ticket)
{
	uint64_t deadline = cg_clock_raw() + (uint64_t)timeout_ms * 1000000u;
	uint32_t t = new_ticket(kind);
	int r = take(t, deadline);
	if (r < 0)
		return r;
	if (ask)
		ask();
	for (;;) {
		unsigned seen = atomic_load(&p.signals);
		if (answered(t)) {
			*ticket = t;
			return 0;
		}
		struct timespec ts;
		if (!remaining(deadline, &ts))
			break;
		futex(&p.signals, FUTEX_WAIT_PRIVATE, seen, &ts);
	}
	cg_park_release(t);
	return -ETIMEDOUT;
}

void cg_park_release(uint32_t ticket)
{
	unsigned t = ticket;
	if (atomic_compare_exchange_strong(&p.held, &t, 0))
		futex(&p.held, FUTEX_WAKE_PRIVATE, INT_MAX, NULL);
}

static void signal_requester(void)
{
	atomic_fetch_add(&p.signals, 1);
	futex(&p.signals, FUTEX_WAKE_PRIVATE, INT_MAX, NULL);
}

/* Stops for ticket t until it is released. */
static void stop_for(uint32_t t)
{
	atomic_store(&p.ack, t);
	signal_requester();
	while (atomic_load(&p.held) == t)
		futex(&p.held, FUTEX_WAIT_PRIVATE, t, NULL);
}

void cg_park_point(bool round_end)
{
	uint32_t t = atomic_load(&p.held);
	if (t && (fork_kind(t) ? answerable_fork(t) : round_end))
		stop_for(t);
}

bool cg_park_pending(void)
{
	return answerable_fork(atomic_load_explicit(&p.held, memory_order_relaxed));
}

void cg_park_outside_begin(void)
{
	if (p.depth++ || cg_opt.test_fork_timeout)
		return;
	atomic_store(&p.outside, 1);
	/* A fork hold taken while the writer was inside may go on now. */
	if (fork_kind(atomic_load(&p.held)))
		signal_requester();
}

void cg_park_outside_end(void)
{
	if (--p.depth || cg_opt.test_fork_timeout)
		return;
	atomic_store(&p.outside, 0);
	uint32_t t = atomic_load(&p.held);
	/* It may have gone on while the writer was outside: it is held until released. */
	if (fork_kind(t))
		stop_for(t);
}

void cg_park_reset(void)
{
	atomic_store(&p.held, 0);
	atomic_store(&p.ack, 0);
	atomic_store(&p.outside, 0);
	p.depth = 0;
}

/* SPDX-License-Identifier: MIT */
#include "ring.h"

#include <errno.h>
#include <linux/futex.h>
#include <sched.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static _Atomic(struct cg_ring *) registry;

static void no_wake(void)
{
}

/* Who drains the rings (the writer), told when one fills or is half full. */
static _Atomic(cg_ring_wake_fn) wake = no_wake;

void cg_rings_set_wake(cg_ring_wake_fn fn)
{
	atomic_store_explicit(&wake, fn ? fn : no_wake, memory_order_release);
}

static void wake_drainer(void)
{
	atomic_load_explicit(&wake, memory_order_acquire)();
}

struct cg_ring *cg_rings_first(void)
{
	return atomic_load_explicit(&registry, memory_order_acquire);
}

uint64_t cg_rings_full(void)
{
	uint64_t n = 0;
	for (struct cg_ring *r = cg_rings_first(); r; r = r->next)
		n += atomic_load_explicit(&r->full, memory_order_relaxed);
	return n;
}

void cg_rings_unwinds(uint64_t out[CG_RING_UNWIND_KINDS])
{
	for (int k = 0; k < CG_RING_UNWIND_KINDS; k++)
		out[k] = 0;
	for (struct cg_ring *r = cg_rings_first(); r; r = r->next)
		for (int k = 0; k < CG_RING_UNWIND_KINDS; k++)
			out[k] += atomic_load_explicit(&r->unwinds[k], memory_order_relaxed);
}

static pid_t self_tid(void)
{
	return (pid_t)syscall(SYS_gettid);
}

struct cg_ring *cg_ring_claim(void)
{
	pid_t tid = self_tid();
	for (struct cg_ring *r = cg_rings_first(); r; r = r->next) {
		int expected = CG_RING_FREE;
		if (atomic_compare_exchange_strong(&r->state, &expected, CG_RING_OWNED)) {
			r->tid = tid;
			return r;
		}
	}
	struct cg_ring *r = mmap(NULL, sizeof(*r), PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (r == MAP_FAILED)
		return NULL;
	atomic_init(&r->head, 0);
	atomic_init(&r->tail, 0);
	atomic_init(&r->full, 0);
	r->tail_seen = 0;
	atomic_init(&r->state, CG_RING_OWNED);
	r->tid = tid;
	r->next = atomic_load(&registry);
	while (!atomic_compare_exchange_weak(&registry, &r->next, r))
		;
	return r;
}

static long futex(atomic_int *addr, int op, int val, const struct timespec *ts)
{
	return syscall(SYS_futex, addr, op, val, ts, NULL, 0);
}

/*
 * Waits for the writer to free room: yields first (it usually frees some
 * within microseconds, and a sleep and wake-up cost more than that on a
 * virtual machine), then a futex sleep that cg_ring_release ends. The
 * owner writes waiting then reads tail, the writer writes tail then reads
 * waiting, all sequentially consistent: either the writer sees the flag or
 * the owner sees the new tail. The timeout re-checks keep_waiting() in
 * case the writer is gone.
 */
static void wait_for_room(struct cg_ring *r, uint64_t h, unsigned spins)
{
	if (spins < 64) {
		sched_yield();
		return;
	}
	atomic_store(&r->waiting, 1);
	if (h - atomic_load(&r->tail) >= CG_RING_EVENTS) {
		struct timespec ts = {0, 2000000};
		futex(&r->waiting, FUTEX_WAIT_PRIVATE, 1, &ts);
	}
	atomic_store_explicit(&r->waiting, 0, memory_order_relaxed);
}

void cg_ring_release(struct cg_ring *r, uint64_t pos)
{
	atomic_store(&r->tail, pos);
	if (atomic_load(&r->waiting)) {
		atomic_store_explicit(&r->waiting, 0, memory_order_relaxed);
		futex(&r->waiting, FUTEX_WAKE_PRIVATE, 1, NULL);
	}
}

/* Waits until n slots are free at head h; false when recording stopped meanwhile. */
static bool wait_room(struct cg_ring *r, uint64_t h, unsigned n, bool (*keep_waiting)(void))
{
	uint64_t t = r->tail_seen;
	unsigned spins = 0;
	if (h + n - t > CG_RING_EVENTS)
		t = r->tail_seen = atomic_load_explicit(&r->tail, memory_order_acquire);
	if (h + n - t > CG_RING_EVENTS)
		atomic_store_explicit(&r->full, atomic_load_explicit(&r->full, memory_order_relaxed) + 1,
				      memory_order_relaxed);
	while (h + n - t > CG_RING_EVENTS) {
		/* Full: the writer is behind. Wait rather than drop, unless it is gone. */
		if (!keep_waiting())
			return false;
		wake_drainer();
		wait_for_room(r, h + n - 1, spins++);
		t = r->tail_seen = atomic_load_explicit(&r->tail, memory_order_acquire);
	}
	return true;
}

/* Publishes slots up to h + n; every half ring, asks the writer for an early drain. */
static void publish(struct cg_ring *r, uint64_t h, unsigned n)
{
	atomic_store_explicit(&r->head, h + n, memory_order_release);
	if ((h + n) / (CG_RING_EVENTS / 2) != h / (CG_RING_EVENTS / 2))
		wake_drainer();
}

bool cg_ring_push_slow(struct cg_ring *r, const struct cg_event *e, uint32_t stack,
		       bool (*keep_waiting)(void))
{
	/* Syscalls below (futex, sched_yield) must not leave errno changed for the program. */
	int saved = errno;
	uint64_t h = atomic_load_explicit(&r->head, memory_order_relaxed);
	bool ok = wait_room(r, h, 1, keep_waiting);
	if (ok) {
		r->ev[h % CG_RING_EVENTS] = *e;
		r->stack[h % CG_RING_EVENTS] = (uint16_t)stack;
		publish(r, h, 1);
	}
	errno = saved;
	return ok;
}

bool cg_ring_push_n(struct cg_ring *r, const struct cg_event *ev, unsigned n,
		    bool (*keep_waiting)(void))
{
	int saved = errno;
	uint64_t h = atomic_load_explicit(&r->head, memory_order_relaxed);
	bool ok = n <= CG_RING_EVENTS / 4 && wait_room(r, h, n, keep_waiting);
	if (ok) {
		for (unsigned i = 0; i < n; i++) {
			r->ev[(h + i) % CG_RING_EVENTS] = ev[i];
			r->stack[(h + i) % CG_RING_EVENTS] = 0;
		}
		publish(r, h, n);
	}
	errno = saved;
	return ok;
}

void cg_rings_reset_after_fork(struct cg_ring *keep)
{
	pid_t tid = self_tid();
	for (struct cg_ring *r = cg_rings_first(); r; r = r->next) {
		atomic_store(&r->tail, atomic_load(&r->head));
		atomic_store(&r->waiting, 0);
		r->tail_seen = atomic_load(&r->head);
		atomic_store(&r->state, r == keep ? CG_RING_OWNED : CG_RING_FREE);
		if (r == keep)
			r->tid = tid;
	}
}

void cg_rings_drop_pending(void)
{
	for (struct cg_ring *r = cg_rings_first(); r; r = r->next) {
		uint64_t tail = atomic_load(&r->tail);
		uint64_t head = atomic_load_explicit(&r->head, memory_order_acquire);
		for (uint64_t i = tail; i != head; i += cg_event_slots(&r->ev[i % CG_RING_EVENTS]))
			cg_event_discard(&r->ev[i % CG_RING_EVENTS]);
		cg_ring_release(r, head);
	}
}

void cg_rings_reclaim(void)
{
	pid_t pid = getpid();
	for (struct cg_ring *r = cg_rings_first(); r; r = r->next) {
		if (atomic_load(&r->state) != CG_RING_OWNED)
			continue;
		if (syscall(SYS_tgkill, pid, r->tid, 0) == 0 || errno != ESRCH)
			continue;
		/* The owner is gone, so nothing is pushed any more: empty means done. */
		if (atomic_load(&r->head) == atomic_load(&r->tail))
			atomic_store(&r->state, CG_RING_FREE);
	}
}

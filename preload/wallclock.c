/* SPDX-License-Identifier: MIT */
#include "wallclock.h"

#include <time.h>

#include "sysline.h"

/* Reads enough that one preempted try does not set the error. */
#define TRIES 5

static uint64_t read_ns(clockid_t id)
{
	struct timespec t;
	clock_gettime(id, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

void cg_wallclock_read(struct cg_wallclock *w, uint64_t monotonic_ns)
{
	uint64_t best = UINT64_MAX, a = 0, r = 0, b = 0;
	for (int i = 0; i < TRIES; i++) {
		uint64_t a1 = read_ns(CLOCK_MONOTONIC);
		uint64_t r1 = read_ns(CLOCK_REALTIME);
		uint64_t b1 = read_ns(CLOCK_MONOTONIC);
		if (b1 - a1 < best) {
			best = b1 - a1;
			a = a1;
			r = r1;
			b = b1;
		}
	}
	/* The realtime read sits in the bracket's middle, give or take its half. */
	uint64_t mid = a + (b - a) / 2;
	w->monotonic_ns = monotonic_ns;
	w->realtime_ns = r - (mid - monotonic_ns);
	w->error_ns = (b - a + 1) / 2;
	if (w->error_ns == 0)
		w->error_ns = 1;
	cg_sysline("/proc/sys/kernel/random/boot_id", w->boot_id, sizeof(w->boot_id));
}

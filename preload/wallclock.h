/* SPDX-License-Identifier: MIT */
/*
 * A trace's time 0 on the clocks other processes read (docs/jobs.md, "One
 * time axis"): CLOCK_MONOTONIC itself, which every process of one boot
 * shares exactly, the boot it belongs to, and CLOCK_REALTIME then, which
 * lines up machines as well as their clocks agree.
 */
#ifndef CG_WALLCLOCK_H
#define CG_WALLCLOCK_H

#include <stdint.h>

struct cg_wallclock {
	uint64_t monotonic_ns; /* CLOCK_MONOTONIC at time 0 (cgprobe_clock_monotonic_ns) */
	uint64_t realtime_ns;  /* CLOCK_REALTIME at time 0 (cgprobe_clock_realtime_ns) */
	/* How far realtime_ns may be off: half the tightest bracket, rounded up, at least 1. */
	uint64_t error_ns;
	char boot_id[40]; /* /proc/sys/kernel/random/boot_id, "" when unreadable */
};

/*
 * Anchors time 0, CLOCK_MONOTONIC's monotonic_ns (at or before now), on
 * the wall clock: CLOCK_REALTIME read between two CLOCK_MONOTONIC reads,
 * the tightest of a few tries. No allocation.
 */
void cg_wallclock_read(struct cg_wallclock *w, uint64_t monotonic_ns);

#endif

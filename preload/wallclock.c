/* SPDX-License-Identifier: MIT */
#include "wallclock.h"

#include "clock_source.h"
#include "sysline.h"

/* Reads enough that one preempted try does not set the error. */
#define TRIES 5

static uint64_t realtime_ns(void)
{
	return cg_clock_ns(CLOCK_REALTIME);
}

void cg_wallclock_read(struct cg_wallclock *w, uint64_t monotonic_ns)
{
	struct cg_clock_pair p = cg_clock_pair_read(realtime_ns, TRIES);
	w->monotonic_ns = monotonic_ns;
	w->realtime_ns = p.value - (p.mono_ns - monotonic_ns);
	/* The realtime read sits in the bracket's middle, give or take its half. */
	w->error_ns = (p.width_ns + 1) / 2;
	if (w->error_ns == 0)
		w->error_ns = 1;
	cg_sysline("/proc/sys/kernel/random/boot_id", w->boot_id, sizeof(w->boot_id));
}

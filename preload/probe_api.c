/* SPDX-License-Identifier: MIT */
/* The small half of the contract (probe.h): doors onto the engine's own state. */
#include "probe.h"

#include "options.h"
#include "real.h"
#include "thread.h"

bool cg_probe_real_init(void)
{
	cg_real_init();
	return cg_real_ready();
}

void *cg_probe_real_realloc(void *p, size_t size)
{
	return cg_real.realloc(p, size);
}

void cg_probe_nest_enter(void)
{
	cg_self.nest++;
}

void cg_probe_nest_leave(void)
{
	cg_self.nest--;
}

bool cg_probe_nested(void)
{
	return cg_self.nest > 0;
}

bool cg_probe_device_snapshots(void)
{
	return cg_opt.device_snapshots;
}

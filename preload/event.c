/* SPDX-License-Identifier: MIT */
#include "event.h"

#include <sys/mman.h>

#include "real.h"

const char *const cg_op_names[CG_OP_COUNT] = {
	[CG_OP_MALLOC] = "malloc",
	[CG_OP_CALLOC] = "calloc",
	[CG_OP_REALLOC] = "realloc",
	[CG_OP_REALLOCARRAY] = "reallocarray",
	[CG_OP_POSIX_MEMALIGN] = "posix_memalign",
	[CG_OP_ALIGNED_ALLOC] = "aligned_alloc",
	[CG_OP_MEMALIGN] = "memalign",
	[CG_OP_VALLOC] = "valloc",
	[CG_OP_PVALLOC] = "pvalloc",
	[CG_OP_FREE] = "free",
};

void cg_event_discard(const struct cg_event *e)
{
	uint8_t kind = e->kind & CG_EV_KIND_MASK;
	if (kind == CG_EV_SPAN_START || kind == CG_EV_DEV_INFO || kind == CG_EV_GRADIENT ||
	    kind == CG_EV_CHECKPOINT)
		cg_real.free((void *)(uintptr_t)e->addr);
	else if (kind == CG_EV_MODULES)
		cg_modules_release((struct cg_modules *)(uintptr_t)e->addr);
}

void cg_modules_release(struct cg_modules *m)
{
	if (m)
		munmap(m, m->map_len);
}

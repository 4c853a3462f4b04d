/* SPDX-License-Identifier: MIT */
#include "hooks.h"

#include <errno.h>
#include <stdatomic.h>
#include <string.h>

#include "cgtrace.h"
#include "options.h"
#include "params.h"
#include "push.h"
#include "spans.h"
#include "stack.h"
#include "state.h"
#include "thread.h"

uint8_t cg_hook_category(uint64_t addr, uint64_t size)
{
	if (cg_params_contains(addr, size))
		return CGTRACE_CAT_PARAMETER;
	return cg_thread_category();
}

void cg_hook_free(void *p, uint8_t op)
{
	if (!p || !cg_recording())
		return;
	struct cg_event e = {cg_stamp(true), (uint64_t)(uintptr_t)p, 0, cg_thread_span(),
			     CG_EV_FREE, op, 0, 0};
	cg_push(&e, 0);
}

void cg_hook_realloc_begin(void *p, struct cg_realloc_state *st)
{
	st->stamped = p && cg_recording();
	if (st->stamped)
		st->ts = cg_stamp(true);
}

void cg_hook_realloc_end(void *old, void *p, size_t size, uint8_t op,
			 const struct cg_realloc_state *st)
{
	/* NULL for a non-zero size is a failure: the old block is untouched. */
	if (!p && size != 0)
		return;
	if (st->stamped && cg_recording()) {
		struct cg_event e = {st->ts, (uint64_t)(uintptr_t)old, 0, cg_thread_span(),
				     CG_EV_FREE, op, 0, 0};
		cg_push(&e, 0);
	}
	if (p)
		cg_hook_alloc(p, size, op);
}

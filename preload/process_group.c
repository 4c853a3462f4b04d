/* SPDX-License-Identifier: MIT */
#include "process_group.h"

#include <errno.h>

#include "span_blob.h"
#include "spans.h"
#include "state.h"

int cg_process_group(int64_t rank, int64_t world_size)
{
	if (rank < 0 || (world_size > 0 && rank >= world_size))
		return -EINVAL;
	/* Outside a capture window the trace takes no span (marks.c alike). */
	if (!cg_recording() || cg_outside_window)
		return 0;
	struct cg_span_info info = {
	    .rank = (uint64_t)rank + 1,
	    .world_size = world_size > 0 ? (uint64_t)world_size : 0,
	};
	return cg_span_instant("process_group", &info);
}

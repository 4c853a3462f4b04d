/* SPDX-License-Identifier: MIT */
/*
 * The process's rank in its job told once the program knows it
 * (cgprobe_process_rank: torch.multiprocessing.spawn, a rank given to
 * init_process_group), rather than by a launcher's variables: a span
 * process_group under the calling thread's innermost span, ended at once,
 * whose start carries cgprobe_rank and, when known, cgprobe_world_size
 * (docs/jobs.md, "Ranks").
 */
#ifndef CG_PROCESS_GROUP_H
#define CG_PROCESS_GROUP_H

#include <stdint.h>

/*
 * world_size 0 or less: unknown. 0 (also when the process is not
 * recorded); -EINVAL for a negative rank or one not below a known
 * world_size; -ENOMEM when the span could not be made.
 */
int cg_process_group(int64_t rank, int64_t world_size);

#endif

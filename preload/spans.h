/* SPDX-License-Identifier: MIT */
/*
 * Spans, steps, thread names and the other facts a program (include/cgprobe.h)
 * or its NVTX ranges (nvtx.c) tell the probe. Span stacks are per thread
 * (thread.h); a step applies to the whole process while it is open, as
 * autograd runs backward on threads of its own: a process-wide word counts
 * the open steps, which the allocation hook reads with one relaxed load.
 */
#ifndef CG_SPANS_H
#define CG_SPANS_H

#include <stdbool.h>
#include <stdint.h>

struct cg_span_info;

/*
 * Opens a span on the calling thread's stack: its id, 0 when not recorded
 * or for bad arguments (step above optimizer, kind above module, no name).
 * flags: CG_SPAN_MEASURED or 0; info (NULL: none): what else its start
 * carries (span_blob.h), copied.
 */
uint64_t cg_span_begin(const char *name, uint8_t step, uint8_t kind, unsigned flags,
		       const struct cg_span_info *info);
/* Ends the innermost span, which must be id; any other is an error, warned once: -EINVAL. */
int cg_span_end(uint64_t id);
/* Ends the innermost span whatever it is (an NVTX pop): its id, 0 when none is open. */
uint64_t cg_span_pop(void);

/*
 * A span outside the thread's stack (an NVTX start/end range): it may
 * overlap others and end on any thread. Its step counts while it is open.
 * *start_ticks gets its stamp, for the end's duration.
 */
uint64_t cg_span_start_loose(const char *name, uint8_t step, const struct cg_span_info *info,
			     uint64_t *start_ticks);
/* start_ticks 0: unknown (duration 0). */
void cg_span_end_loose(uint64_t id, uint8_t step, uint64_t start_ticks);

/*
 * A span that ends as it begins (duration 0), under the calling thread's
 * innermost span: a fact of a moment, such as a parameter mark. 0 (also
 * when not recorded), -ENOMEM when its blob could not be made (nothing
 * recorded).
 */
int cg_span_instant(const char *name, const struct cg_span_info *info);

/* The innermost step open on any thread (enum cgtrace_step), none when none is. */
uint8_t cg_steps_open_anywhere(void);
/*
 * The category of a memory record made now: the innermost step span of the
 * calling thread, else the innermost step open on any thread, other
 * outside every step.
 */
uint8_t cg_thread_category(void);
/* In a fork child: only the forking thread remains, with no spans open. */
void cg_spans_after_fork(void);

/* A gradient record; norm NaN for none. */
int cg_gradient(const char *root, const char *key, uint8_t state, double norm);
/* A device_memory record; reserved and allocated UINT64_MAX when absent. */
int cg_checkpoint(const char *device, uint64_t used, uint64_t free_bytes, uint64_t reserved,
                  uint64_t allocated);
/* Names the calling thread; the next span_start it opens carries the name. */
int cg_thread_set_name(const char *name);

#endif

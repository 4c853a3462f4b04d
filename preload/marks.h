/* SPDX-License-Identifier: MIT */
/*
 * Parameter marks (cgprobe_mark_parameters and its _n form): the ranges go
 * into the probe's table (params.h), which makes later records and a
 * capture window's snapshot `parameter`, and travel in the trace as spans
 * `parameters` under the calling thread's innermost span, ended at once,
 * whose starts carry them (cgprobe_parameters), so that a reader counts
 * the marked bytes as parameter from the mark on. A mark made while the
 * process is not recorded (a capture window still to come, or past)
 * goes into the table alone.
 */
#ifndef CG_MARKS_H
#define CG_MARKS_H

#include <stddef.h>
#include <stdint.h>

#include "record.h"

/* The most ranges one call marks. */
#define CG_MARKS_MAX 65536
/* The most one span holds: a reader takes at most CG_STACK_FRAMES_MAX values in an array of hex. */
#define CG_MARKS_PER_SPAN (CG_STACK_FRAMES_MAX / 2)

/*
 * Marks n ranges [ptrs[i], ptrs[i] + bytes[i]), in call order: one span
 * for up to CG_MARKS_PER_SPAN of them, consecutive spans of that many for
 * more. 0; -EINVAL for NULL arrays, n 0, or an empty or wrapping range,
 * -E2BIG for n above CG_MARKS_MAX (nothing marked then); -ENOSPC when the
 * table could not take every range (the spans still hold them all: the
 * trace says what the program marked); -ENOMEM when a span could not be
 * made (the table has its ranges).
 */
int cg_marks_add(const void *const *ptrs, const uint64_t *bytes, size_t n);

#endif

/* SPDX-License-Identifier: MIT */
/*
 * Training updates, numbered 1, 2, ... in begin order across the process,
 * whoever marks them: the API (cgprobe_update_begin/end, and so the
 * Python module) or NVTX ranges matching CGPROBE_UPDATE_RANGE (nvtx.c).
 * Each is a span carrying cgprobe_update: the API's a span `update` of
 * its own beside the thread's stack, a range's the range's span. Updates
 * nest: one begun while another is open joins it (counted once, the
 * outer's number), so a loop marked both ways counts each update once.
 * The capture window (capture.h) hears of each begin and end.
 */
#ifndef CG_UPDATES_H
#define CG_UPDATES_H

#include <stdint.h>

/*
 * The API's begin: the update's number, 0 when the probe is off. A begin
 * while the API's own update is open ends that one first; inside a
 * range's update it joins it (its number), and the API's next end then
 * ends nothing.
 */
uint64_t cg_update_begin(void);
/* The API's end: 0, or -EINVAL when the API has no update open. */
int cg_update_end(void);

/*
 * An update range begins: the number of the update it opens, for its span
 * to carry, or 0 when it joins the open one (or the probe is off). Only
 * the range that opened an update ends it: cg_update_range_end(n).
 */
uint64_t cg_update_range_begin(void);
void cg_update_range_end(uint64_t n);

/*
 * The session ends with an update of the API's open (a loop of
 * next_update() leaves its last one so): its span ends with the trace, as
 * the root span does; the update itself stays open.
 */
void cg_updates_session_end(void);
/* In a fork child: the parent's update span is not in the child's trace. */
void cg_updates_after_fork(void);

#endif

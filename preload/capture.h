/* SPDX-License-Identifier: MIT */
/*
 * The capture window (CGPROBE_CAPTURE=update): told where each update
 * begins and ends (updates.c numbers them), it opens the trace at the
 * begin of update CGPROBE_CAPTURE_STEP and ends it at that update's end
 * (docs/probe.md, "Capture window").
 */
#ifndef CG_CAPTURE_H
#define CG_CAPTURE_H

#include <stdbool.h>
#include <stdint.h>

/* Update n begins (the window may open: the head and snapshot go out first) or ends. */
void cg_capture_update_begins(uint64_t n);
void cg_capture_update_ends(uint64_t n);
/* Whether an NVTX range of this name marks an update (CGPROBE_UPDATE_RANGE's globs). */
bool cg_capture_is_update_range(const char *name);

/* Where the process stands with its window. */
enum cg_capture_state { CG_CAPTURE_NONE, CG_CAPTURE_WAITING, CG_CAPTURE_OPEN, CG_CAPTURE_DONE };
enum cg_capture_state cg_capture_state(void);
/*
 * A session starts (before main, after a fork): waiting when
 * CGPROBE_CAPTURE=update. window_open() is the session's, called as the
 * window begins: the head and the snapshot go out; 0 or -errno.
 */
void cg_capture_session_start(int (*window_open)(void));

#endif

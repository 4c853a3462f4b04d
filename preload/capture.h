/* SPDX-License-Identifier: MIT */
/*
 * The capture window (CGPROBE_CAPTURE=update): told where each training
 * update begins and ends (the C API, NVTX ranges matching
 * CGPROBE_UPDATE_RANGE), it opens the trace at the begin of update
 * CGPROBE_CAPTURE_STEP and ends it at that update's end (docs/probe.md,
 * "Capture window").
 */
#ifndef CG_CAPTURE_H
#define CG_CAPTURE_H

#include <stdbool.h>
#include <stdint.h>

void cg_capture_update_begin(uint64_t n);
void cg_capture_update_end(uint64_t n);
/* Whether an NVTX range of this name marks an update (CGPROBE_UPDATE_RANGE's globs). */
bool cg_capture_is_update_range(const char *name);

/* Outside the window: hooks leave out what only records need (call stacks). */
extern bool cg_capture_outside;

/* Where the process stands with its window. */
enum cg_capture_state { CG_CAPTURE_NONE, CG_CAPTURE_WAITING, CG_CAPTURE_OPEN, CG_CAPTURE_DONE };
enum cg_capture_state cg_capture_state(void);
/* A session starts (before main, after a fork): waiting when CGPROBE_CAPTURE=update. */
void cg_capture_session_start(void);
/* The meta tag cgprobe_capture_reached: "yes", "no", or NULL with CGPROBE_CAPTURE=all. */
const char *cg_capture_reached_tag(void);
/* While the head is formatted: whether it is the window's own (yes) or the never-reached one. */
void cg_capture_set_reached(bool reached);

#endif

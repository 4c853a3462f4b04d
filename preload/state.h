/* SPDX-License-Identifier: MIT */
/*
 * The process's recording state, which every hook reads with one relaxed
 * load: whether the session records (session.c moves it), and whether a
 * capture window leaves out what only records need (capture.c). Below
 * everything that reads it, so that hooks and the writer need nothing of
 * the session's.
 */
#ifndef CG_STATE_H
#define CG_STATE_H

#include <stdatomic.h>
#include <stdbool.h>

enum { CG_OFF, CG_RECORDING, CG_STOPPED };

extern atomic_int cg_state;

static inline bool cg_recording(void)
{
	return atomic_load_explicit(&cg_state, memory_order_relaxed) == CG_RECORDING;
}

/* Stops recording for good (an output error): the file is closed at exit. */
void cg_recording_stop(void);

/* Outside the capture window: hooks leave out what only records need (call stacks). */
extern bool cg_outside_window;

#endif

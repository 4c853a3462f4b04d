/* SPDX-License-Identifier: MIT */
/*
 * One trace session per process: started before main (and again in a fork
 * child, and after a failed exec whose empty trace was removed), ended on
 * every exit path. Records are accepted only while the session is
 * recording.
 */
#ifndef CG_SESSION_H
#define CG_SESSION_H

#include <stdatomic.h>
#include <stdbool.h>
#include <sys/types.h>

enum { CG_OFF, CG_RECORDING, CG_STOPPED };

extern atomic_int cg_state;

static inline bool cg_session_recording(void)
{
	return atomic_load_explicit(&cg_state, memory_order_relaxed) == CG_RECORDING;
}

/* Opens the trace and starts the writer; parent is the pid forked from, or 0. */
void cg_session_start(pid_t parent);
/* Stops recording after an output error; the file is closed at exit. */
void cg_session_stop(void);
/* Every exit path: closes the root span, flushes and closes (once, owner only). */
void cg_session_end(int timeout_ms);
/*
 * Before exec: the root span is closed and everything written; a trace with
 * nothing but its head is closed and removed instead (owner only).
 */
void cg_session_before_exec(void);
/* After an exec that failed: a removed trace is followed by a new session, same forked_from. */
void cg_session_exec_failed(void);
const char *cg_session_path(void);
/*
 * The capture window begins (capture.c): the writer parked, the head goes
 * out with the window's time as t=0, then the snapshot. 0 or -errno.
 */
int cg_session_window_open(void);
/* Fork handlers. */
void cg_session_fork_prepare(void);
void cg_session_fork_parent(void);
void cg_session_fork_child(void);

#endif

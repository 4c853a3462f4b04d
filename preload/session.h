/* SPDX-License-Identifier: MIT */
/*
 * One trace session per process: started before main (and again in a fork
 * child, and after a failed exec whose empty trace was removed), ended on
 * every exit path. Records are accepted only while the session is
 * recording.
 */
#ifndef CG_SESSION_H
#define CG_SESSION_H

#include <stdbool.h>
#include <sys/types.h>

/* Opens the trace and starts the writer; parent is the pid forked from, or 0. */
void cg_session_start(pid_t parent);
/* Every exit path: closes the root span, flushes and closes (once, owner only). */
void cg_session_end(int timeout_ms);
/*
 * Before exec: the root span is closed and everything written; a trace with
 * nothing but its head is closed and removed instead (owner only).
 */
void cg_session_before_exec(void);
/* After an exec that failed: a removed trace is followed by a new session, same forked_from. */
void cg_session_exec_failed(void);
/* Fork handlers. */
void cg_session_fork_prepare(void);
void cg_session_fork_parent(void);
void cg_session_fork_child(void);

#endif

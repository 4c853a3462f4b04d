/* SPDX-License-Identifier: MIT */
/*
 * Death by a signal: for signals whose default action ends the process and
 * that the program left at SIG_DFL, a handler flushes the trace, restores
 * SIG_DFL and re-raises, so the process dies the same way. The program sees
 * SIG_DFL when it asks, and its own handlers replace ours as usual.
 */
#ifndef CG_SIGNALS_H
#define CG_SIGNALS_H

#include <signal.h>

void cg_signals_install(void);
/* The sigaction the program sees. */
int cg_signals_sigaction(int sig, const struct sigaction *act, struct sigaction *old);

#endif

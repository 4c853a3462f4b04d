/* SPDX-License-Identifier: MIT */
/*
 * Whether the hooks may stamp events with the CPU's time-stamp counter:
 * only where the kernel's own clock is the TSC, read the same way on
 * every CPU (clock_source.c). Once per process image, at its first
 * session's start.
 */
#ifndef CG_CLOCK_SOURCE_H
#define CG_CLOCK_SOURCE_H

#include <stdbool.h>

bool cg_clock_source_tsc(void);

#endif

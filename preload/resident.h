/* SPDX-License-Identifier: MIT */
/*
 * What memory costs, for the figures a trace ends with (docs/probe.md,
 * "The probe's memory"): the pages of the probe's own mappings that are
 * resident, and the process's peak resident set. System calls only: no
 * allocation, callable on the writer thread and at exit.
 */
#ifndef CG_RESIDENT_H
#define CG_RESIDENT_H

#include <stddef.h>
#include <stdint.h>

/* Bytes of the pages of [p, p + len) resident now (mincore); 0 for p NULL. */
size_t cg_resident(const void *p, size_t len);
/* The process's peak resident set in bytes (VmHWM of /proc/self/status), 0 when unknown. */
uint64_t cg_peak_rss(void);

#endif

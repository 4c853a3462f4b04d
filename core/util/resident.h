/* SPDX-License-Identifier: MIT */
/*
 * What a piece of memory costs now: its pages that are resident. A
 * system call, no allocation: the probe's writer thread uses it for the
 * figures a trace ends with (docs/probe.md, "The probe's own memory").
 */
#ifndef CG_RESIDENT_H
#define CG_RESIDENT_H

#include <stddef.h>
#include <stdint.h>

/* Bytes of the pages of [p, p + len) resident now (mincore); 0 for p NULL. */
size_t cg_resident(const void *p, size_t len);

#endif

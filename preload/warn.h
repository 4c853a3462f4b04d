/* SPDX-License-Identifier: MIT */
/* One-line warnings on stderr, written with write(2): no stdio, no malloc. */
#ifndef CG_WARN_H
#define CG_WARN_H

#include <stdbool.h>

/*
 * CGPROBE_QUIET: no warnings. The options table (options.c) sets it, as
 * the first setting it reads, so that warn needs nothing above it.
 */
extern bool cg_warn_quiet;

/* Joins the parts (NULL-terminated) after "cgprobe: " and ends the line. */
void cg_warn(const char *first, ...) __attribute__((sentinel));

#endif

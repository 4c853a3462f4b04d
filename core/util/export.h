/* SPDX-License-Identifier: MIT */
/*
 * The library is built with -fvisibility=hidden so that internal cg_ symbols
 * never leak into the programs that load it (the preload probe shares an
 * address space with arbitrary applications). Public cgtrace_ definitions
 * opt back in with this marker.
 */
#ifndef CG_EXPORT_H
#define CG_EXPORT_H

#define CG_EXPORT __attribute__((visibility("default")))

#endif

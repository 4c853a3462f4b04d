/* SPDX-License-Identifier: MIT */
/* The capture window (CGPROBE_CAPTURE): told where each training update begins and ends. */
#ifndef CG_CAPTURE_H
#define CG_CAPTURE_H

#include <stdint.h>

void cg_capture_update_begin(uint64_t n);
void cg_capture_update_end(uint64_t n);

#endif

/* SPDX-License-Identifier: MIT */
/* Placeholder until the capture window lands: updates are counted by the API, nothing more. */
#include "capture.h"

void cg_capture_update_begin(uint64_t n)
{
	(void)n;
}

void cg_capture_update_end(uint64_t n)
{
	(void)n;
}

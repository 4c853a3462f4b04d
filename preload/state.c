/* SPDX-License-Identifier: MIT */
#include "state.h"

atomic_int cg_state;
bool cg_outside_window;

void cg_recording_stop(void)
{
	atomic_store(&cg_state, CG_STOPPED);
}

/* SPDX-License-Identifier: MIT */
#include "capture.h"

#include <stdatomic.h>

#include "options.h"
#include "state.h"
#include "writer.h"

static atomic_int state;
static int (*open_window)(void);

enum cg_capture_state cg_capture_state(void)
{
	return (enum cg_capture_state)atomic_load(&state);
}

void cg_capture_session_start(int (*window_open)(void))
{
	open_window = window_open;
	/* A fork child of an open or ended window keeps its parent's state (session.c). */
	if (!cg_opt.capture_update || atomic_load(&state) != CG_CAPTURE_NONE)
		return;
	atomic_store(&state, CG_CAPTURE_WAITING);
	cg_outside_window = true;
}

bool cg_capture_is_update_range(const char *name)
{
	return cg_options_match(cg_opt.update_range, name);
}

void cg_capture_update_begins(uint64_t n)
{
	int want = CG_CAPTURE_WAITING;
	if (n != cg_opt.capture_step || !cg_recording() ||
	    !atomic_compare_exchange_strong(&state, &want, CG_CAPTURE_OPEN))
		return;
	cg_outside_window = false;
	if (open_window() < 0) {
		atomic_store(&state, CG_CAPTURE_DONE);
		cg_outside_window = true;
	}
}

void cg_capture_update_ends(uint64_t n)
{
	int want = CG_CAPTURE_OPEN;
	if (n != cg_opt.capture_step ||
	    !atomic_compare_exchange_strong(&state, &want, CG_CAPTURE_DONE))
		return;
	cg_outside_window = true;
	/* The window's records are written now: nothing later belongs to the trace. */
	cg_writer_request(CG_REQ_WINDOW_END | CG_REQ_SYNC, 5000);
}

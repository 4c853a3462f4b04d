/* SPDX-License-Identifier: MIT */
/* The lower room: it must not use high, and does, by include and by call. */
#include "low.h"

#include "high.h"

int cg_rooms_low(void)
{
	return cg_rooms_high() + 1;
}

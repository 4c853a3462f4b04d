/* SPDX-License-Identifier: MIT */
/* The lower of the rooms test's two crafted rooms (tests/rooms/selftest.table). */
#ifndef CG_ROOMS_LOW_H
#define CG_ROOMS_LOW_H

int cg_rooms_low(void);

#endif

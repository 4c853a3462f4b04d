/* SPDX-License-Identifier: MIT */
/* The upper of the rooms test's two crafted rooms (tests/rooms/selftest.table). */
#ifndef CG_ROOMS_HIGH_H
#define CG_ROOMS_HIGH_H

int cg_rooms_high(void);

#endif

/* SPDX-License-Identifier: MIT */
/*
 * The engine's half of device memory (probe.h): the events a device
 * source records, pushed like the heap hooks' events (the source itself:
 * device_source.h).
 */
#ifndef CG_DEVICE_H
#define CG_DEVICE_H

/* A new session forgets which devices its trace has announced. */
void cg_device_session_start(void);

#endif

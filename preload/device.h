/* SPDX-License-Identifier: MIT */
/*
 * The engine's half of device memory (probe.h): the events a device
 * source records, pushed like the heap hooks' events, and what the writer
 * and the session need of the registered source.
 */
#ifndef CG_DEVICE_H
#define CG_DEVICE_H

#include <stddef.h>
#include <stdint.h>

#include "probe.h"

/* The op_name of a device event's op, from the source's table. */
const char *cg_device_op_name(uint8_t op);
/*
 * A device's name in records into out, returning its length: "cpu" for
 * CG_PROBE_HOST, else what the device source names it.
 */
size_t cg_device_name(char out[32], uint8_t device);
/* A new session forgets which devices its trace has announced. */
void cg_device_session_start(void);

#endif

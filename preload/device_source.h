/* SPDX-License-Identifier: MIT */
/*
 * The registered device source (probe.h: cg_probe_register_device_source):
 * its op names and device names, which the encoders write, and the source
 * itself for the engine's device hooks (device.h).
 */
#ifndef CG_DEVICE_SOURCE_H
#define CG_DEVICE_SOURCE_H

#include <stddef.h>
#include <stdint.h>

#include "probe.h"

/* The source registered, or NULL. */
const struct cg_device_source *cg_device_source(void);
/* The op_name of a device event's op, from the source's table. */
const char *cg_device_op_name(uint8_t op);
/*
 * A device's name in records into out, returning its length: "cpu" for
 * CG_PROBE_HOST, else what the device source names it.
 */
size_t cg_device_name(char out[32], uint8_t device);

#endif

/* SPDX-License-Identifier: MIT */
/*
 * Device memory into the trace: the CUDA wrappers call these after the
 * real call succeeded (or failed with out-of-memory). Like the heap hooks
 * they only stamp and push an event to the thread's ring.
 */
#ifndef CG_CUDA_DEVICE_EVENTS_H
#define CG_CUDA_DEVICE_EVENTS_H

#include <stdbool.h>
#include <stdint.h>

#include "event.h"
#include "ops.h"

/* device: a CUDA ordinal or CG_DEV_CPU (pinned host memory); flags: CG_EV_MANAGED, CG_EV_VMM. */
void cg_cuda_record_alloc(uint64_t addr, uint64_t size, uint8_t device, enum cg_cuda_op op,
			  uint8_t flags);
/* A free is stamped before the real call: take the stamp first, record after. */
uint64_t cg_cuda_stamp_before(void);
void cg_cuda_record_free(uint64_t ticks, uint64_t addr, enum cg_cuda_op op, uint8_t flags);
/* A device_memory checkpoint; oom_request is the failed size, or 0. */
void cg_cuda_record_meminfo(uint8_t device, uint64_t free_bytes, uint64_t total_bytes,
			    uint64_t oom_request);
/* The device's identity, once per trace (cheap after the first time). */
void cg_cuda_announce(uint8_t device);
/* A new session forgets which devices were announced. */
void cg_cuda_session_reset(void);

#endif

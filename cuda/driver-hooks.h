/* SPDX-License-Identifier: MIT */
/* What the driver wrappers record after the real call. */
#ifndef CG_CUDA_DRIVER_HOOKS_H
#define CG_CUDA_DRIVER_HOOKS_H

#include <stdint.h>

#include "abi.h"
#include "ops.h"

/* device < 0: the current context's device; CG_PROBE_HOST: pinned host memory. */
void cg_drv_after_alloc(CUresult r, uint64_t addr, uint64_t bytes, enum cg_cuda_op op,
			uint8_t flags, int device);
void cg_drv_after_free(CUresult r, uint64_t ticks, uint64_t addr, enum cg_cuda_op op);
void cg_drv_after_mem_info(CUresult r, const size_t *free_bytes, const size_t *total_bytes);
/* CGPROBE_DEVICE_SNAPSHOTS=alloc: a checkpoint of a device, where the thread has a context. */
void cg_drv_snapshot(int device);

#endif

/* SPDX-License-Identifier: MIT */
#include "driver-hooks.h"

#include "driver.h"
#include "probe.h"

void cg_drv_snapshot(int device)
{
	size_t free_bytes, total_bytes;
	if (!cg_probe_device_snapshots() || device < 0 || device == CG_PROBE_HOST ||
	    cg_drv_mem_info(&free_bytes, &total_bytes) < 0)
		return;
	cg_probe_device_checkpoint((uint8_t)device, free_bytes, total_bytes, 0);
}

void cg_drv_after_alloc(CUresult r, uint64_t addr, uint64_t bytes, enum cg_cuda_op op,
			uint8_t flags, int device)
{
	if (cg_probe_nested())
		return;
	if (r == CUDA_ERROR_OUT_OF_MEMORY && device != CG_PROBE_HOST) {
		size_t free_bytes, total_bytes;
		int dev = cg_drv_current_device();
		if (dev >= 0 && cg_drv_mem_info(&free_bytes, &total_bytes) == 0)
			cg_probe_device_checkpoint((uint8_t)dev, free_bytes, total_bytes,
						   bytes ? bytes : 1);
		return;
	}
	if (r != CUDA_SUCCESS || !addr)
		return;
	if (device < 0)
		device = cg_drv_current_device();
	if (device < 0)
		return; /* no context: the call could not have succeeded on a device */
	cg_probe_device_alloc(addr, bytes, (uint8_t)device, op, flags);
	cg_drv_snapshot(device);
}

void cg_drv_after_free(CUresult r, uint64_t ticks, uint64_t addr, enum cg_cuda_op op)
{
	if (cg_probe_nested() || r != CUDA_SUCCESS || !addr)
		return;
	cg_probe_device_free(ticks, addr, op, 0);
	/* Pinned host memory is no device's: no checkpoint after it. */
	if (op != CG_CU_cuMemFreeHost)
		cg_drv_snapshot(cg_drv_current_device());
}

void cg_drv_after_mem_info(CUresult r, const size_t *free_bytes, const size_t *total_bytes)
{
	if (cg_probe_nested() || r != CUDA_SUCCESS || !free_bytes || !total_bytes)
		return;
	int dev = cg_drv_current_device();
	if (dev >= 0)
		cg_probe_device_checkpoint((uint8_t)dev, *free_bytes, *total_bytes, 0);
}

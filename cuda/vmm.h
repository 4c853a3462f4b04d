/* SPDX-License-Identifier: MIT */
/*
 * Virtual memory management (cuMemCreate/cuMemMap): physical memory is an
 * allocation from cuMemCreate until its handle is released and its last
 * mapping unmapped. Mapping records nothing, so a handle mapped twice is
 * counted once.
 */
#ifndef CG_CUDA_VMM_H
#define CG_CUDA_VMM_H

#include <stddef.h>
#include <stdint.h>

void cg_vmm_create(uint64_t handle, uint64_t size, uint8_t device);
void cg_vmm_release(uint64_t handle);
void cg_vmm_map(uint64_t va, uint64_t size, uint64_t handle);
void cg_vmm_unmap(uint64_t va, uint64_t size);

#endif

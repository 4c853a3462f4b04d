/* SPDX-License-Identifier: MIT */
/* Prototypes of the exported driver wrappers (exports-driver.c), as cuda.h declares them. */
#ifndef CG_CUDA_DRIVER_API_H
#define CG_CUDA_DRIVER_API_H

#include "abi.h"

CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytes);
CUresult cuMemAllocPitch_v2(CUdeviceptr *dptr, size_t *pitch, size_t width, size_t height,
			    unsigned int element_bytes);
CUresult cuMemAllocManaged(CUdeviceptr *dptr, size_t bytes, unsigned int flags);
CUresult cuMemFree_v2(CUdeviceptr dptr);
CUresult cuMemAllocHost_v2(void **pp, size_t bytes);
CUresult cuMemHostAlloc(void **pp, size_t bytes, unsigned int flags);
CUresult cuMemFreeHost(void *p);
CUresult cuMemAllocAsync(CUdeviceptr *dptr, size_t bytes, CUstream stream);
CUresult cuMemAllocAsync_ptsz(CUdeviceptr *dptr, size_t bytes, CUstream stream);
CUresult cuMemAllocFromPoolAsync(CUdeviceptr *dptr, size_t bytes, CUmemoryPool pool,
				 CUstream stream);
CUresult cuMemAllocFromPoolAsync_ptsz(CUdeviceptr *dptr, size_t bytes, CUmemoryPool pool,
				      CUstream stream);
CUresult cuMemFreeAsync(CUdeviceptr dptr, CUstream stream);
CUresult cuMemFreeAsync_ptsz(CUdeviceptr dptr, CUstream stream);
CUresult cuMemGetInfo_v2(size_t *free_bytes, size_t *total_bytes);
CUresult cuMemCreate(CUmemGenericAllocationHandle *handle, size_t size, const void *prop,
		     unsigned long long flags);
CUresult cuMemRelease(CUmemGenericAllocationHandle handle);
CUresult cuMemMap(CUdeviceptr ptr, size_t size, size_t offset, CUmemGenericAllocationHandle handle,
		  unsigned long long flags);
CUresult cuMemUnmap(CUdeviceptr ptr, size_t size);
CUresult cuGetProcAddress(const char *symbol, void **pfn, int version, cuuint64_t flags);
CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int version, cuuint64_t flags,
			     int *status);

#endif

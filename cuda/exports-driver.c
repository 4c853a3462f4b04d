/* SPDX-License-Identifier: MIT */
/*
 * The exported driver API wrappers. A program reaches them by linking
 * libcuda (the preloaded definition comes first), through dlsym on a
 * dlopen'ed libcuda, or through cuGetProcAddress and the runtime's entry
 * point queries, which hand out these addresses (see driver.c). Each
 * forwards to the real function and leaves the recording to driver-hooks.c;
 * results and outputs are passed through untouched.
 */
#include <stdbool.h>

#include "driver-api.h"
#include "driver-hooks.h"
#include "driver.h"
#include "probe.h"
#include "vmm.h"

#define REAL(name, ret, params)                                                              \
	typedef ret(*real_t) params;                                                           \
	real_t real = (real_t)cg_drv_real(CG_DRV_##name)
#define NO_DRIVER CUDA_ERROR_NOT_FOUND

#define ALLOC_WRAPPER(name, params, args, out, bytes, flags, device)                          \
	CG_PROBE_EXPORT CUresult name params                                                   \
	{                                                                                      \
		REAL(name, CUresult, params);                                                \
		if (!real)                                                                     \
			return NO_DRIVER;                                                      \
		CUresult r = real args;                                                        \
		cg_drv_after_alloc(r, r == CUDA_SUCCESS && out ? (uint64_t)*out : 0, bytes,    \
				   CG_CU_##name, flags, device);                               \
		return r;                                                                      \
	}

ALLOC_WRAPPER(cuMemAlloc_v2, (CUdeviceptr * dptr, size_t bytes), (dptr, bytes), dptr, bytes, 0, -1)
ALLOC_WRAPPER(cuMemAllocManaged, (CUdeviceptr * dptr, size_t bytes, unsigned int flags),
	      (dptr, bytes, flags), dptr, bytes, CG_PROBE_MANAGED, -1)
ALLOC_WRAPPER(cuMemAllocHost_v2, (void **pp, size_t bytes), (pp, bytes), (uintptr_t *)pp, bytes, 0,
	      CG_PROBE_HOST)
ALLOC_WRAPPER(cuMemHostAlloc, (void **pp, size_t bytes, unsigned int flags), (pp, bytes, flags),
	      (uintptr_t *)pp, bytes, 0, CG_PROBE_HOST)
ALLOC_WRAPPER(cuMemAllocAsync, (CUdeviceptr * dptr, size_t bytes, CUstream stream),
	      (dptr, bytes, stream), dptr, bytes, 0, -1)
ALLOC_WRAPPER(cuMemAllocAsync_ptsz, (CUdeviceptr * dptr, size_t bytes, CUstream stream),
	      (dptr, bytes, stream), dptr, bytes, 0, -1)
ALLOC_WRAPPER(cuMemAllocFromPoolAsync,
	      (CUdeviceptr * dptr, size_t bytes, CUmemoryPool pool, CUstream stream),
	      (dptr, bytes, pool, stream), dptr, bytes, 0, -1)
ALLOC_WRAPPER(cuMemAllocFromPoolAsync_ptsz,
	      (CUdeviceptr * dptr, size_t bytes, CUmemoryPool pool, CUstream stream),
	      (dptr, bytes, pool, stream), dptr, bytes, 0, -1)

/* The allocation is pitch x height bytes: what the program can address. */
CG_PROBE_EXPORT CUresult cuMemAllocPitch_v2(CUdeviceptr *dptr, size_t *pitch, size_t width,
					    size_t height, unsigned int element_bytes)
{
	REAL(cuMemAllocPitch_v2, CUresult, (CUdeviceptr *, size_t *, size_t, size_t, unsigned int));
	if (!real)
		return NO_DRIVER;
	CUresult r = real(dptr, pitch, width, height, element_bytes);
	bool ok = r == CUDA_SUCCESS && dptr && pitch;
	cg_drv_after_alloc(r, ok ? *dptr : 0, ok ? *pitch * height : width * height,
			   CG_CU_cuMemAllocPitch_v2, 0, -1);
	return r;
}

#define FREE_WRAPPER(name, params, args, addr)                                                \
	CG_PROBE_EXPORT CUresult name params                                                   \
	{                                                                                      \
		REAL(name, CUresult, params);                                                \
		if (!real)                                                                     \
			return NO_DRIVER;                                                      \
		uint64_t ticks = cg_probe_stamp_before();                                       \
		CUresult r = real args;                                                        \
		cg_drv_after_free(r, ticks, (uint64_t)(addr), CG_CU_##name);                   \
		return r;                                                                      \
	}

FREE_WRAPPER(cuMemFree_v2, (CUdeviceptr dptr), (dptr), dptr)
FREE_WRAPPER(cuMemFreeHost, (void *p), (p), (uintptr_t)p)
FREE_WRAPPER(cuMemFreeAsync, (CUdeviceptr dptr, CUstream stream), (dptr, stream), dptr)
FREE_WRAPPER(cuMemFreeAsync_ptsz, (CUdeviceptr dptr, CUstream stream), (dptr, stream), dptr)

/* OptiX asks cuMemGetInfo_v2(NULL, &total): NULL outputs go through as they are. */
CG_PROBE_EXPORT CUresult cuMemGetInfo_v2(size_t *free_bytes, size_t *total_bytes)
{
	REAL(cuMemGetInfo_v2, CUresult, (size_t *, size_t *));
	if (!real)
		return NO_DRIVER;
	CUresult r = real(free_bytes, total_bytes);
	cg_drv_after_mem_info(r, free_bytes, total_bytes);
	return r;
}

CG_PROBE_EXPORT CUresult cuMemCreate(CUmemGenericAllocationHandle *handle, size_t size,
				     const void *prop, unsigned long long flags)
{
	REAL(cuMemCreate, CUresult, (CUmemGenericAllocationHandle *, size_t, const void *,
				      unsigned long long));
	if (!real)
		return NO_DRIVER;
	CUresult r = real(handle, size, prop, flags);
	if (r == CUDA_SUCCESS && handle && prop && !cg_probe_nested()) {
		const struct cg_cu_mem_prop_head *p = prop;
		int dev = p->location_id >= 0 && p->location_id < 255 ? p->location_id : 0;
		cg_vmm_create(*handle, size, (uint8_t)dev);
	} else if (r == CUDA_ERROR_OUT_OF_MEMORY) {
		cg_drv_after_alloc(r, 0, size, CG_CU_cuMemCreate, CG_PROBE_VMM, -1);
	}
	return r;
}

CG_PROBE_EXPORT CUresult cuMemRelease(CUmemGenericAllocationHandle handle)
{
	REAL(cuMemRelease, CUresult, (CUmemGenericAllocationHandle));
	if (!real)
		return NO_DRIVER;
	CUresult r = real(handle);
	if (r == CUDA_SUCCESS && !cg_probe_nested())
		cg_vmm_release(handle);
	return r;
}

CG_PROBE_EXPORT CUresult cuMemMap(CUdeviceptr ptr, size_t size, size_t offset,
				  CUmemGenericAllocationHandle handle, unsigned long long flags)
{
	REAL(cuMemMap, CUresult, (CUdeviceptr, size_t, size_t, CUmemGenericAllocationHandle,
				   unsigned long long));
	if (!real)
		return NO_DRIVER;
	CUresult r = real(ptr, size, offset, handle, flags);
	if (r == CUDA_SUCCESS && !cg_probe_nested())
		cg_vmm_map(ptr, size, handle);
	return r;
}

CG_PROBE_EXPORT CUresult cuMemUnmap(CUdeviceptr ptr, size_t size)
{
	REAL(cuMemUnmap, CUresult, (CUdeviceptr, size_t));
	if (!real)
		return NO_DRIVER;
	CUresult r = real(ptr, size);
	if (r == CUDA_SUCCESS && !cg_probe_nested())
		cg_vmm_unmap(ptr, size);
	return r;
}

/* Lookups go to the real driver with the caller's name, version and flags untouched. */
CG_PROBE_EXPORT CUresult cuGetProcAddress(const char *symbol, void **pfn, int version,
					  cuuint64_t flags)
{
	REAL(cuGetProcAddress, CUresult, (const char *, void **, int, cuuint64_t));
	if (!real)
		return NO_DRIVER;
	CUresult r = real(symbol, pfn, version, flags);
	if (r == CUDA_SUCCESS && pfn)
		*pfn = cg_drv_substitute(*pfn);
	return r;
}

CG_PROBE_EXPORT CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int version,
					     cuuint64_t flags, int *status)
{
	REAL(cuGetProcAddress_v2, CUresult, (const char *, void **, int, cuuint64_t, int *));
	if (!real)
		return NO_DRIVER;
	CUresult r = real(symbol, pfn, version, flags, status);
	if (r == CUDA_SUCCESS && pfn)
		*pfn = cg_drv_substitute(*pfn);
	return r;
}

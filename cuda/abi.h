/* SPDX-License-Identifier: MIT */
/*
 * The few CUDA types and values the probe needs, declared here so that
 * nothing is built against CUDA's headers and nothing links libcudart or
 * libcuda: both are found at run time, in whatever process has them.
 * Layouts follow cuda.h and driver_types.h of CUDA 12 and 13.
 */
#ifndef CG_CUDA_ABI_H
#define CG_CUDA_ABI_H

#include <stddef.h>
#include <stdint.h>

typedef int cudaError_t;
typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef unsigned long long CUmemGenericAllocationHandle;
typedef unsigned long long cuuint64_t;
typedef void *CUcontext;
typedef void *CUstream;
typedef void *CUmemoryPool;
typedef void *cudaStream_t;
typedef void *cudaMemPool_t;

enum {
	cudaSuccess = 0,
	cudaErrorMemoryAllocation = 2,
	CUDA_SUCCESS = 0,
	CUDA_ERROR_OUT_OF_MEMORY = 2,
	CUDA_ERROR_NOT_FOUND = 500,
};

/* cuGetProcAddress flags: the per-thread default stream variant (`_ptsz`). */
#define CG_CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM 2ull

struct cg_cuda_pitched_ptr {
	void *ptr;
	size_t pitch;
	size_t xsize;
	size_t ysize;
};

struct cg_cuda_extent {
	size_t width;
	size_t height;
	size_t depth;
};

/* The start of CUmemAllocationProp: type, handle types, then the location. */
struct cg_cu_mem_prop_head {
	int type;
	int requested_handle_types;
	int location_type;
	int location_id; /* the device ordinal for device memory */
};

typedef struct {
	unsigned char bytes[16];
} cg_cu_uuid;

#endif

/* SPDX-License-Identifier: MIT */
/*
 * The part of the CUDA runtime API (cuda_runtime_api.h, CUDA 13) that the
 * fake libcudart.so.13 implements, for building it and the runtime test
 * programs with gcc when the CUDA toolkit is missing. Names, values and
 * layouts are the toolkit's; FAKE_REAL_HEADERS builds fake-cudart.c against
 * the real header instead, which checks the signatures.
 *
 * As in the real header, CUDA_API_PER_THREAD_DEFAULT_STREAM (nvcc
 * --default-stream per-thread) renames the stream-ordered calls to their
 * _ptsz/_ptds exports.
 */
#ifndef FAKE_CUDART_API_H
#define FAKE_CUDART_API_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum cudaError {
	cudaSuccess = 0,
	cudaErrorInvalidValue = 1,
	cudaErrorMemoryAllocation = 2,
	cudaErrorInitializationError = 3,
	cudaErrorInsufficientDriver = 35,
	cudaErrorNoDevice = 100,
	cudaErrorInvalidDevice = 101,
	cudaErrorInvalidResourceHandle = 400,
	cudaErrorSymbolNotFound = 500,
	cudaErrorNotSupported = 801,
	cudaErrorUnknown = 999
} cudaError_t;

enum cudaMemcpyKind {
	cudaMemcpyHostToHost = 0,
	cudaMemcpyHostToDevice = 1,
	cudaMemcpyDeviceToHost = 2,
	cudaMemcpyDeviceToDevice = 3,
	cudaMemcpyDefault = 4
};

enum cudaDriverEntryPointQueryResult {
	cudaDriverEntryPointSuccess = 0,
	cudaDriverEntryPointSymbolNotFound = 1,
	cudaDriverEntryPointVersionNotSufficent = 2
};

#define cudaMemAttachGlobal 0x01
#define cudaMemAttachHost 0x02
#define cudaHostAllocDefault 0x00
#define cudaHostAllocPortable 0x01
#define cudaEnableDefault 0x0
#define cudaEnableLegacyStream 0x1
#define cudaEnablePerThreadDefaultStream 0x2

typedef struct CUstream_st *cudaStream_t;
typedef struct CUmemPoolHandle_st *cudaMemPool_t;
typedef struct CUkern_st *cudaKernel_t;

struct cudaPitchedPtr {
	void *ptr;
	size_t pitch;
	size_t xsize;
	size_t ysize;
};

struct cudaExtent {
	size_t width;
	size_t height;
	size_t depth;
};

typedef struct dim3 {
	unsigned int x, y, z;
} dim3;

typedef struct uint3 {
	unsigned int x, y, z;
} uint3;

#if defined(CUDA_API_PER_THREAD_DEFAULT_STREAM)
#define cudaMemcpy cudaMemcpy_ptds
#define cudaMemset cudaMemset_ptds
#define cudaMemcpyAsync cudaMemcpyAsync_ptsz
#define cudaMemsetAsync cudaMemsetAsync_ptsz
#define cudaStreamSynchronize cudaStreamSynchronize_ptsz
#define cudaLaunchKernel cudaLaunchKernel_ptsz
#define cudaMallocAsync cudaMallocAsync_ptsz
#define cudaFreeAsync cudaFreeAsync_ptsz
#define cudaMallocFromPoolAsync cudaMallocFromPoolAsync_ptsz
#define cudaGetDriverEntryPoint cudaGetDriverEntryPoint_ptsz
#define cudaGetDriverEntryPointByVersion cudaGetDriverEntryPointByVersion_ptsz
#endif

cudaError_t cudaMalloc(void **devPtr, size_t size);
cudaError_t cudaFree(void *devPtr);
cudaError_t cudaMallocManaged(void **devPtr, size_t size, unsigned int flags);
cudaError_t cudaMallocPitch(void **devPtr, size_t *pitch, size_t width, size_t height);
cudaError_t cudaMalloc3D(struct cudaPitchedPtr *pitchedDevPtr, struct cudaExtent extent);
cudaError_t cudaMallocHost(void **ptr, size_t size);
cudaError_t cudaHostAlloc(void **pHost, size_t size, unsigned int flags);
cudaError_t cudaFreeHost(void *ptr);
cudaError_t cudaMallocAsync(void **devPtr, size_t size, cudaStream_t hStream);
cudaError_t cudaFreeAsync(void *devPtr, cudaStream_t hStream);
cudaError_t cudaMallocFromPoolAsync(void **ptr, size_t size, cudaMemPool_t memPool,
                                    cudaStream_t stream);
cudaError_t cudaDeviceGetDefaultMemPool(cudaMemPool_t *memPool, int device);
cudaError_t cudaMemGetInfo(size_t *free, size_t *total);
cudaError_t cudaGetDevice(int *device);
cudaError_t cudaSetDevice(int device);
cudaError_t cudaGetDeviceCount(int *count);
cudaError_t cudaDeviceSynchronize(void);
const char *cudaGetErrorString(cudaError_t error);
const char *cudaGetErrorName(cudaError_t error);
cudaError_t cudaGetLastError(void);
cudaError_t cudaPeekAtLastError(void);
cudaError_t cudaMemcpy(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind);
cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind,
                            cudaStream_t stream);
cudaError_t cudaMemset(void *devPtr, int value, size_t count);
cudaError_t cudaMemsetAsync(void *devPtr, int value, size_t count, cudaStream_t stream);
cudaError_t cudaStreamCreate(cudaStream_t *pStream);
cudaError_t cudaStreamCreateWithFlags(cudaStream_t *pStream, unsigned int flags);
cudaError_t cudaStreamDestroy(cudaStream_t stream);
cudaError_t cudaStreamSynchronize(cudaStream_t stream);
cudaError_t cudaRuntimeGetVersion(int *runtimeVersion);
cudaError_t cudaDriverGetVersion(int *driverVersion);
cudaError_t cudaGetDriverEntryPoint(const char *symbol, void **funcPtr, unsigned long long flags,
                                    enum cudaDriverEntryPointQueryResult *driverStatus);
cudaError_t cudaGetDriverEntryPointByVersion(const char *symbol, void **funcPtr,
                                             unsigned int cudaVersion, unsigned long long flags,
                                             enum cudaDriverEntryPointQueryResult *driverStatus);
cudaError_t cudaLaunchKernel(const void *func, dim3 gridDim, dim3 blockDim, void **args,
                             size_t sharedMem, cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif

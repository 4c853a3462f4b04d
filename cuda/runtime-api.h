/* SPDX-License-Identifier: MIT */
/* Prototypes of the exported runtime wrappers (exports-runtime.c), as cuda_runtime_api.h has them. */
#ifndef CG_CUDA_RUNTIME_API_H
#define CG_CUDA_RUNTIME_API_H

#include "abi.h"

cudaError_t cudaMalloc(void **p, size_t bytes);
cudaError_t cudaMallocManaged(void **p, size_t bytes, unsigned int flags);
cudaError_t cudaMallocHost(void **p, size_t bytes);
cudaError_t cudaHostAlloc(void **p, size_t bytes, unsigned int flags);
cudaError_t cudaMallocAsync(void **p, size_t bytes, cudaStream_t s);
cudaError_t cudaMallocAsync_ptsz(void **p, size_t bytes, cudaStream_t s);
cudaError_t cudaMallocFromPoolAsync(void **p, size_t bytes, cudaMemPool_t pool, cudaStream_t s);
cudaError_t cudaMallocFromPoolAsync_ptsz(void **p, size_t bytes, cudaMemPool_t pool,
					 cudaStream_t s);
cudaError_t cudaMallocPitch(void **p, size_t *pitch, size_t width, size_t height);
cudaError_t cudaMalloc3D(struct cg_cuda_pitched_ptr *pp, struct cg_cuda_extent extent);
cudaError_t cudaFree(void *p);
cudaError_t cudaFreeHost(void *p);
cudaError_t cudaFreeAsync(void *p, cudaStream_t s);
cudaError_t cudaFreeAsync_ptsz(void *p, cudaStream_t s);
cudaError_t cudaMemGetInfo(size_t *free_bytes, size_t *total_bytes);
cudaError_t cudaGetDriverEntryPoint(const char *symbol, void **fn, unsigned long long flags,
				    int *status);
cudaError_t cudaGetDriverEntryPointByVersion(const char *symbol, void **fn, unsigned int version,
					     unsigned long long flags, int *status);
cudaError_t cudaGetDriverEntryPoint_ptsz(const char *symbol, void **fn, unsigned long long flags,
					 int *status);
cudaError_t cudaGetDriverEntryPointByVersion_ptsz(const char *symbol, void **fn,
						  unsigned int version, unsigned long long flags,
						  int *status);

#endif

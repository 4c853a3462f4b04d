/* SPDX-License-Identifier: MIT */
/* The CUDA functions the probe records, by name: the op_name of their records. */
#ifndef CG_CUDA_OPS_H
#define CG_CUDA_OPS_H

/* The runtime's allocating and freeing calls; runtime.h wraps these and a few more. */
#define CG_CUDA_RT_OPS(X)                                                                     \
	X(cudaMalloc) X(cudaFree) X(cudaMallocManaged) X(cudaMallocPitch) X(cudaMalloc3D)     \
	X(cudaMallocHost) X(cudaHostAlloc) X(cudaFreeHost) X(cudaMallocAsync)                 \
	X(cudaMallocAsync_ptsz) X(cudaFreeAsync) X(cudaFreeAsync_ptsz)                        \
	X(cudaMallocFromPoolAsync) X(cudaMallocFromPoolAsync_ptsz)

#define CG_CUDA_OPS(X)                                                                        \
	CG_CUDA_RT_OPS(X) X(cuMemAlloc_v2)                                                    \
	X(cuMemAllocPitch_v2) X(cuMemAllocManaged) X(cuMemFree_v2) X(cuMemAllocHost_v2)       \
	X(cuMemHostAlloc) X(cuMemFreeHost) X(cuMemAllocAsync) X(cuMemAllocAsync_ptsz)         \
	X(cuMemAllocFromPoolAsync) X(cuMemAllocFromPoolAsync_ptsz) X(cuMemFreeAsync)          \
	X(cuMemFreeAsync_ptsz) X(cuMemCreate) X(cuMemRelease) X(cuMemUnmap)

#define CG_CUDA_OP_ENUM(name) CG_CU_##name,
enum cg_cuda_op { CG_CUDA_OPS(CG_CUDA_OP_ENUM) CG_CU_OP_COUNT };
#undef CG_CUDA_OP_ENUM

#endif

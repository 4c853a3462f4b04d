/* SPDX-License-Identifier: MIT */
/*
 * The runtime API side. Several copies of libcudart can live in one
 * process (PyTorch wheels bring libcudart.so.12 beside a program's .13);
 * each wrapped call goes to the copy its caller links against, as the
 * loader would have bound it without the probe.
 */
#ifndef CG_CUDA_RUNTIME_H
#define CG_CUDA_RUNTIME_H

#include <stdint.h>

#include "abi.h"
#include "ops.h"

#define CG_RT_FUNCS(X)                                                                        \
	CG_CUDA_RT_OPS(X) X(cudaMemGetInfo)                                                   \
	X(cudaGetDriverEntryPoint) X(cudaGetDriverEntryPointByVersion)                        \
	X(cudaGetDriverEntryPoint_ptsz) X(cudaGetDriverEntryPointByVersion_ptsz) X(cudaGetDevice)

#define CG_RT_ENUM(name) CG_RT_##name,
enum cg_rt_fn { CG_RT_FUNCS(CG_RT_ENUM) CG_RT_COUNT };
#undef CG_RT_ENUM

/* The real function of the runtime copy the code at `caller` links against; NULL if none. */
void *cg_rt_real(enum cg_rt_fn fn, const void *caller);

/* After a runtime allocation (device < 0: the current device of that runtime). */
void cg_rt_after_alloc(cudaError_t r, const void *ptr, uint64_t bytes, enum cg_cuda_op op,
		       uint8_t flags, int device, const void *caller);
void cg_rt_after_free(cudaError_t r, uint64_t ticks, const void *ptr, enum cg_cuda_op op,
		      const void *caller);
void cg_rt_after_mem_info(cudaError_t r, const size_t *free_bytes, const size_t *total_bytes,
			  const void *caller);

#endif

/* SPDX-License-Identifier: MIT */
/*
 * The exported runtime API wrappers. libcudart's symbols are versioned
 * (cudaMalloc@@libcudart.so.13); these unversioned definitions, preloaded,
 * bind to a program's references all the same. Each forwards to the
 * runtime copy its caller links against; the driver calls the runtime makes
 * meanwhile are not recorded again (the call is recorded once, under the
 * runtime's name). Results and outputs are passed through untouched.
 */
#include <stdint.h>

#include "abi.h"
#include "driver.h"
#include "probe.h"
#include "runtime-api.h"
#include "runtime.h"

#define CALLER __builtin_return_address(0)
#define REAL(name, ret, params)                                                              \
	typedef ret(*real_t) params;                                                           \
	real_t real = (real_t)cg_rt_real(CG_RT_##name, CALLER)
/* cudaErrorInitializationError: no runtime to forward to. */
#define NO_RUNTIME 3

#define ALLOC_WRAPPER(name, params, args, out, bytes, flags, device)                          \
	CG_PROBE_EXPORT cudaError_t name params                                                \
	{                                                                                      \
		REAL(name, cudaError_t, params);                                             \
		if (!real)                                                                     \
			return NO_RUNTIME;                                                     \
		cg_probe_nest_enter();                                                         \
		cudaError_t r = real args;                                                     \
		cg_probe_nest_leave();                                                         \
		cg_rt_after_alloc(r, r == cudaSuccess && out ? *out : NULL, bytes,             \
				  CG_CU_##name, flags, device, CALLER);                        \
		return r;                                                                      \
	}

ALLOC_WRAPPER(cudaMalloc, (void **p, size_t bytes), (p, bytes), p, bytes, 0, -1)
ALLOC_WRAPPER(cudaMallocManaged, (void **p, size_t bytes, unsigned int flags), (p, bytes, flags),
	      p, bytes, CG_PROBE_MANAGED, -1)
ALLOC_WRAPPER(cudaMallocHost, (void **p, size_t bytes), (p, bytes), p, bytes, 0, CG_PROBE_HOST)
ALLOC_WRAPPER(cudaHostAlloc, (void **p, size_t bytes, unsigned int flags), (p, bytes, flags), p,
	      bytes, 0, CG_PROBE_HOST)
ALLOC_WRAPPER(cudaMallocAsync, (void **p, size_t bytes, cudaStream_t s), (p, bytes, s), p, bytes, 0,
	      -1)
ALLOC_WRAPPER(cudaMallocAsync_ptsz, (void **p, size_t bytes, cudaStream_t s), (p, bytes, s), p,
	      bytes, 0, -1)
ALLOC_WRAPPER(cudaMallocFromPoolAsync, (void **p, size_t bytes, cudaMemPool_t pool, cudaStream_t s),
	      (p, bytes, pool, s), p, bytes, 0, -1)
ALLOC_WRAPPER(cudaMallocFromPoolAsync_ptsz,
	      (void **p, size_t bytes, cudaMemPool_t pool, cudaStream_t s), (p, bytes, pool, s), p,
	      bytes, 0, -1)

/* Pitched allocations are pitch x height (x depth) bytes: what the program can address. */
CG_PROBE_EXPORT cudaError_t cudaMallocPitch(void **p, size_t *pitch, size_t width, size_t height)
{
	REAL(cudaMallocPitch, cudaError_t, (void **, size_t *, size_t, size_t));
	if (!real)
		return NO_RUNTIME;
	cg_probe_nest_enter();
	cudaError_t r = real(p, pitch, width, height);
	cg_probe_nest_leave();
	int ok = r == cudaSuccess && p && pitch;
	cg_rt_after_alloc(r, ok ? *p : NULL, ok ? *pitch * height : width * height,
			  CG_CU_cudaMallocPitch, 0, -1, CALLER);
	return r;
}

CG_PROBE_EXPORT cudaError_t cudaMalloc3D(struct cg_cuda_pitched_ptr *pp,
					 struct cg_cuda_extent extent)
{
	REAL(cudaMalloc3D, cudaError_t, (struct cg_cuda_pitched_ptr *, struct cg_cuda_extent));
	if (!real)
		return NO_RUNTIME;
	cg_probe_nest_enter();
	cudaError_t r = real(pp, extent);
	cg_probe_nest_leave();
	int ok = r == cudaSuccess && pp;
	cg_rt_after_alloc(r, ok ? pp->ptr : NULL,
			  (ok ? pp->pitch : extent.width) * extent.height * extent.depth,
			  CG_CU_cudaMalloc3D, 0, -1, CALLER);
	return r;
}

#define FREE_WRAPPER(name, params, args, ptr)                                                 \
	CG_PROBE_EXPORT cudaError_t name params                                                \
	{                                                                                      \
		REAL(name, cudaError_t, params);                                             \
		if (!real)                                                                     \
			return NO_RUNTIME;                                                     \
		uint64_t ticks = ptr ? cg_probe_stamp_before() : 0;                             \
		cg_probe_nest_enter();                                                         \
		cudaError_t r = real args;                                                     \
		cg_probe_nest_leave();                                                         \
		cg_rt_after_free(r, ticks, ptr, CG_CU_##name, CALLER);                         \
		return r;                                                                      \
	}

FREE_WRAPPER(cudaFree, (void *p), (p), p)
FREE_WRAPPER(cudaFreeHost, (void *p), (p), p)
FREE_WRAPPER(cudaFreeAsync, (void *p, cudaStream_t s), (p, s), p)
FREE_WRAPPER(cudaFreeAsync_ptsz, (void *p, cudaStream_t s), (p, s), p)

CG_PROBE_EXPORT cudaError_t cudaMemGetInfo(size_t *free_bytes, size_t *total_bytes)
{
	REAL(cudaMemGetInfo, cudaError_t, (size_t *, size_t *));
	if (!real)
		return NO_RUNTIME;
	cg_probe_nest_enter();
	cudaError_t r = real(free_bytes, total_bytes);
	cg_probe_nest_leave();
	cg_rt_after_mem_info(r, free_bytes, total_bytes, CALLER);
	return r;
}

/*
 * How PyTorch's expandable segments reach cuMemCreate and cuMemMap: the
 * driver function handed out is swapped for its wrapper when there is one.
 * CUDA 11 declared cudaGetDriverEntryPoint without the status argument; an
 * extra argument is harmless to it.
 */
#define ENTRY_POINT(name)                                                                     \
	CG_PROBE_EXPORT cudaError_t name(const char *symbol, void **fn, unsigned long long flags, \
					 int *status)                                          \
	{                                                                                      \
		REAL(name, cudaError_t, (const char *, void **, unsigned long long, int *));   \
		if (!real)                                                                     \
			return NO_RUNTIME;                                                     \
		cudaError_t r = real(symbol, fn, flags, status);                               \
		if (r == cudaSuccess && fn)                                                    \
			*fn = cg_drv_substitute(*fn);                                          \
		return r;                                                                      \
	}

#define ENTRY_POINT_BY_VERSION(name)                                                          \
	CG_PROBE_EXPORT cudaError_t name(const char *symbol, void **fn, unsigned int version,  \
					 unsigned long long flags, int *status)                \
	{                                                                                      \
		REAL(name, cudaError_t,                                                        \
		     (const char *, void **, unsigned int, unsigned long long, int *));        \
		if (!real)                                                                     \
			return NO_RUNTIME;                                                     \
		cudaError_t r = real(symbol, fn, version, flags, status);                      \
		if (r == cudaSuccess && fn)                                                    \
			*fn = cg_drv_substitute(*fn);                                          \
		return r;                                                                      \
	}

ENTRY_POINT(cudaGetDriverEntryPoint)
ENTRY_POINT(cudaGetDriverEntryPoint_ptsz)
ENTRY_POINT_BY_VERSION(cudaGetDriverEntryPointByVersion)
ENTRY_POINT_BY_VERSION(cudaGetDriverEntryPointByVersion_ptsz)

/* SPDX-License-Identifier: MIT */
/*
 * A fake CUDA runtime, libcudart.so.13, for testing cgprobe without a GPU.
 * An unmodified `nvcc -cudart shared` program runs on it: the symbols carry
 * the real library's version node (fake-cudart.map), and the registration
 * and launch stubs nvcc's host code calls are here (a kernel launch succeeds
 * and runs nothing).
 *
 * Device memory is host memory at recognisable addresses: device N from
 * 0x3N0000000000 (N = 0, 1), pinned host memory from 0x320000000000 (above
 * the shadow memory of AddressSanitizer, which ends at 0x10007fff8000). Two
 * devices of 16 GiB; cudaMemGetInfo counts what this process holds on the
 * current device (blocks rounded up to 256 bytes; managed memory counts).
 * The current device and the last error are per thread, as in the runtime.
 *
 * Self-contained by default: no call reaches the driver (libcuda.so.1)
 * except cudaGetDriverEntryPoint[ByVersion], which forwards to its
 * cuGetProcAddress_v2 like the real runtime does, so a probe records each
 * runtime allocation once, under the runtime's name.
 *
 * FAKE_CUDART_VIA_DRIVER=1 (read at each call): cudaMalloc, cudaFree,
 * cudaMallocAsync[_ptsz], cudaFreeAsync[_ptsz] and cudaMemGetInfo go through
 * the driver instead, found the way the real runtime finds it: dlopen
 * "libcuda.so.1", dlsym "cuGetProcAddress_v2", then cuGetProcAddress_v2 of
 * each function at RUNTIME_VERSION (flag 2 for the _ptsz ones); cuInit and
 * the device's primary context made current on first use on a thread. Their
 * memory is then the driver's (its addresses, its count); blocks of the
 * runtime's own arenas are still freed there. With FAKE_CUDA_LOG=1 too, each
 * function found is logged on stderr with the object that holds it:
 * `fake-cudart13: driver cuMemAlloc 13000 0 -> cuMemAlloc_v2 in libcuda.so.1`.
 *
 * Built twice by build.sh: FAKE_CUDART_MAJOR=13 (the default) is
 * libcudart.so.13, FAKE_CUDART_MAJOR=12 libcudart.so.12, a second copy for
 * programs that load both (its version RUNTIME_VERSION 12000, its memory at
 * other addresses: see the arenas below), so an address tells which copy
 * served a call.
 *
 * FAKE_CUDA_OOM_BYTES=N: any allocation above N bytes fails with
 * cudaErrorMemoryAllocation and leaves the output untouched.
 */
#define _GNU_SOURCE
#ifdef FAKE_REAL_HEADERS
#include <cuda_runtime_api.h>
#else
#include "fake-cudart-api.h"
#endif

#include <dlfcn.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fake-arena.h"
#include "fake-errors.h"

#define EXPORT __attribute__((visibility("default")))

#ifndef FAKE_CUDART_MAJOR
#define FAKE_CUDART_MAJOR 13
#endif
#define STR_(x) #x
#define STR(x) STR_(x)
#define COPY_NAME "fake-cudart" STR(FAKE_CUDART_MAJOR)

#define N_DEVICES 2
#define CAPACITY (16ull << 30)
#define RUNTIME_VERSION (FAKE_CUDART_MAJOR * 1000)

/*
 * Where each copy's memory is: libcudart.so.13 device N at 0x3N0000000000
 * and pinned memory at 0x320000000000; libcudart.so.12 the same from
 * 0x330000000000 (devices 0x33..., 0x34..., pinned 0x35...).
 */
#if FAKE_CUDART_MAJOR == 13
#define ARENA_BASE 0x300000000000ull
#elif FAKE_CUDART_MAJOR == 12
#define ARENA_BASE 0x330000000000ull
#else
#error "FAKE_CUDART_MAJOR: 12 or 13"
#endif

struct CUmemPoolHandle_st {
	int dev;
};

static struct fake_arena dev_arena[N_DEVICES] = {
    FAKE_ARENA_INIT(COPY_NAME "-dev0", ARENA_BASE, 32ull << 30, false, false),
    FAKE_ARENA_INIT(COPY_NAME "-dev1", ARENA_BASE + 0x010000000000ull, 32ull << 30, false, false),
};
static struct fake_arena host_arena =
    FAKE_ARENA_INIT(COPY_NAME "-host", ARENA_BASE + 0x020000000000ull, 16ull << 30, false, false);

static size_t used[N_DEVICES];
static struct CUmemPoolHandle_st pools[N_DEVICES] = {{0}, {1}};
static __thread int current_device;
static __thread cudaError_t last_error;

static cudaError_t ret(cudaError_t e)
{
	if (e != cudaSuccess)
		last_error = e;
	return e;
}

static bool over_limit(size_t bytes)
{
	return (uint64_t)bytes > fake_oom_limit();
}

static size_t rounded(size_t bytes)
{
	return (bytes + 255) & ~(size_t)255;
}

static bool charge(int dev, size_t len)
{
	return fake_charge(&used[dev], CAPACITY, len);
}

static void uncharge(int dev, size_t len)
{
	fake_uncharge(&used[dev], len);
}

/* bytes > 0 on device dev; *out untouched on failure. */
static cudaError_t device_alloc(int dev, size_t bytes, void **out)
{
	if (over_limit(bytes) || !charge(dev, rounded(bytes)))
		return ret(cudaErrorMemoryAllocation);
	uintptr_t p;
	if (fake_arena_alloc(&dev_arena[dev], bytes, 256, dev, &p)) {
		uncharge(dev, rounded(bytes));
		return ret(cudaErrorMemoryAllocation);
	}
	*out = (void *)p;
	return cudaSuccess;
}

static cudaError_t device_free(void *ptr)
{
	struct fake_block b;
	for (int d = 0; d < N_DEVICES; d++) {
		if (!fake_arena_free(&dev_arena[d], (uintptr_t)ptr, &b)) {
			uncharge(b.tag, b.len);
			return cudaSuccess;
		}
	}
	return ret(cudaErrorInvalidValue);
}

/* ------------------------------------------------------------------ */
/* The driver, as the real runtime reaches it                         */
/* ------------------------------------------------------------------ */

typedef int (*get_proc_v2_fn)(const char *symbol, void **pfn, int cudaVersion,
                              unsigned long long flags, int *symbolStatus);

static get_proc_v2_fn driver_get_proc;
static pthread_once_t driver_once = PTHREAD_ONCE_INIT;

/* dlopen + dlsym, like the real runtime: a preloaded dlsym may hand out its own. */
static void driver_open(void)
{
	void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	if (h)
		driver_get_proc = (get_proc_v2_fn)dlsym(h, "cuGetProcAddress_v2");
}

/* FAKE_CUDART_VIA_DRIVER=1: the memory calls below go through these. */
typedef unsigned long long drv_ptr;
static struct {
	int (*init)(unsigned int flags);
	int (*retain)(void **ctx, int dev);
	int (*set_current)(void *ctx);
	int (*alloc)(drv_ptr *p, size_t bytes);
	int (*free)(drv_ptr p);
	int (*alloc_async)(drv_ptr *p, size_t bytes, void *stream);
	int (*alloc_async_ptsz)(drv_ptr *p, size_t bytes, void *stream);
	int (*free_async)(drv_ptr p, void *stream);
	int (*free_async_ptsz)(drv_ptr p, void *stream);
	int (*info)(size_t *free, size_t *total);
} drv;
/* CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM: the _ptsz variant. */
#define DRV_PER_THREAD 2ull
static bool drv_found;
static pthread_once_t drv_once = PTHREAD_ONCE_INIT;
static __thread int drv_context_device = -1;

static bool via_driver(void)
{
	const char *s = getenv("FAKE_CUDART_VIA_DRIVER");
	return s && !strcmp(s, "1");
}

static bool drv_find(const char *symbol, unsigned long long flags, void **out)
{
	int status = 0;
	*out = NULL;
	if (driver_get_proc(symbol, out, RUNTIME_VERSION, flags, &status) || !*out)
		return false;
	if (fake_log_enabled()) {
		Dl_info info;
		const char *sname = "?", *object = "?";
		if (dladdr(*out, &info)) {
			sname = info.dli_sname ? info.dli_sname : "?";
			if (info.dli_fname) {
				const char *slash = strrchr(info.dli_fname, '/');
				object = slash ? slash + 1 : info.dli_fname;
			}
		}
		fake_log(COPY_NAME ": driver %s %d %llu -> %s in %s", symbol, RUNTIME_VERSION,
		         flags, sname, object);
	}
	return true;
}

static void drv_load(void)
{
	pthread_once(&driver_once, driver_open);
	if (!driver_get_proc)
		return;
	drv_found = drv_find("cuInit", 0, (void **)&drv.init) &&
	            drv_find("cuDevicePrimaryCtxRetain", 0, (void **)&drv.retain) &&
	            drv_find("cuCtxSetCurrent", 0, (void **)&drv.set_current) &&
	            drv_find("cuMemAlloc", 0, (void **)&drv.alloc) &&
	            drv_find("cuMemFree", 0, (void **)&drv.free) &&
	            drv_find("cuMemAllocAsync", 0, (void **)&drv.alloc_async) &&
	            drv_find("cuMemAllocAsync", DRV_PER_THREAD,
	                     (void **)&drv.alloc_async_ptsz) &&
	            drv_find("cuMemFreeAsync", 0, (void **)&drv.free_async) &&
	            drv_find("cuMemFreeAsync", DRV_PER_THREAD,
	                     (void **)&drv.free_async_ptsz) &&
	            drv_find("cuMemGetInfo", 0, (void **)&drv.info) && drv.init(0) == 0;
}

static cudaError_t drv_error(int rc)
{
	switch (rc) {
	case 0:
		return cudaSuccess;
	case 1:
		return ret(cudaErrorInvalidValue);
	case 2:
		return ret(cudaErrorMemoryAllocation);
	case 101:
		return ret(cudaErrorInvalidDevice);
	default:
		return ret(cudaErrorUnknown);
	}
}

/* The driver found and this thread's current device's primary context current. */
static cudaError_t drv_ready(int dev)
{
	pthread_once(&drv_once, drv_load);
	if (!drv_found)
		return ret(cudaErrorInsufficientDriver);
	if (drv_context_device != dev) {
		void *ctx = NULL;
		int rc = drv.retain(&ctx, dev);
		if (!rc)
			rc = drv.set_current(ctx);
		if (rc)
			return drv_error(rc);
		drv_context_device = dev;
	}
	return cudaSuccess;
}

static bool own_device_block(const void *p)
{
	for (int d = 0; d < N_DEVICES; d++)
		if (fake_arena_contains(&dev_arena[d], (uintptr_t)p))
			return true;
	return false;
}

/* ------------------------------------------------------------------ */
/* Memory                                                             */
/* ------------------------------------------------------------------ */

EXPORT cudaError_t cudaMalloc(void **devPtr, size_t size)
{
	if (!devPtr)
		return ret(cudaErrorInvalidValue);
	if (!size) {
		*devPtr = NULL;
		return cudaSuccess;
	}
	if (via_driver()) {
		cudaError_t e = drv_ready(current_device);
		drv_ptr p;
		if (!e)
			e = drv_error(drv.alloc(&p, size));
		if (!e)
			*devPtr = (void *)(uintptr_t)p;
		return e;
	}
	return device_alloc(current_device, size, devPtr);
}

/* cudaFree(NULL), and so the cudaFree(0) idiom, does nothing. */
EXPORT cudaError_t cudaFree(void *devPtr)
{
	if (!devPtr)
		return cudaSuccess;
	if (via_driver() && !own_device_block(devPtr)) {
		cudaError_t e = drv_ready(current_device);
		return e ? e : drv_error(drv.free((drv_ptr)(uintptr_t)devPtr));
	}
	return device_free(devPtr);
}

EXPORT cudaError_t cudaMallocManaged(void **devPtr, size_t size, unsigned int flags)
{
	if (!devPtr || !size || (flags != cudaMemAttachGlobal && flags != cudaMemAttachHost))
		return ret(cudaErrorInvalidValue);
	return device_alloc(current_device, size, devPtr);
}

EXPORT cudaError_t cudaMallocPitch(void **devPtr, size_t *pitch, size_t width, size_t height)
{
	if (!devPtr || !pitch)
		return ret(cudaErrorInvalidValue);
	size_t p = (width + 511) & ~(size_t)511;
	if (!width || !height) {
		*devPtr = NULL;
		*pitch = p;
		return cudaSuccess;
	}
	if (height > SIZE_MAX / p)
		return ret(cudaErrorMemoryAllocation);
	cudaError_t e = device_alloc(current_device, p * height, devPtr);
	if (!e)
		*pitch = p;
	return e;
}

EXPORT cudaError_t cudaMalloc3D(struct cudaPitchedPtr *pitchedDevPtr, struct cudaExtent extent)
{
	if (!pitchedDevPtr)
		return ret(cudaErrorInvalidValue);
	size_t pitch = (extent.width + 511) & ~(size_t)511;
	if (!extent.width || !extent.height || !extent.depth) {
		*pitchedDevPtr = (struct cudaPitchedPtr){NULL, pitch, extent.width, extent.height};
		return cudaSuccess;
	}
	if (extent.height > SIZE_MAX / pitch || extent.depth > SIZE_MAX / (pitch * extent.height))
		return ret(cudaErrorMemoryAllocation);
	void *p;
	cudaError_t e = device_alloc(current_device, pitch * extent.height * extent.depth, &p);
	if (!e)
		*pitchedDevPtr = (struct cudaPitchedPtr){p, pitch, extent.width, extent.height};
	return e;
}

static cudaError_t host_alloc(void **ptr, size_t size)
{
	if (!ptr)
		return ret(cudaErrorInvalidValue);
	if (!size) {
		*ptr = NULL;
		return cudaSuccess;
	}
	uintptr_t p;
	if (over_limit(size) || fake_arena_alloc(&host_arena, size, 256, -1, &p))
		return ret(cudaErrorMemoryAllocation);
	*ptr = (void *)p;
	return cudaSuccess;
}

EXPORT cudaError_t cudaMallocHost(void **ptr, size_t size)
{
	return host_alloc(ptr, size);
}

EXPORT cudaError_t cudaHostAlloc(void **pHost, size_t size, unsigned int flags)
{
	if (flags & ~0xfu)
		return ret(cudaErrorInvalidValue);
	return host_alloc(pHost, size);
}

EXPORT cudaError_t cudaFreeHost(void *ptr)
{
	if (!ptr)
		return cudaSuccess;
	if (fake_arena_free(&host_arena, (uintptr_t)ptr, NULL))
		return ret(cudaErrorInvalidValue);
	return cudaSuccess;
}

/* Stream-ordered calls take effect at once: the fake has no streams to order. */
static cudaError_t async_alloc(void **devPtr, size_t size, int dev)
{
	if (!devPtr)
		return ret(cudaErrorInvalidValue);
	if (!size) {
		*devPtr = NULL;
		return cudaSuccess;
	}
	return device_alloc(dev, size, devPtr);
}

/* cudaMallocAsync[_ptsz] with FAKE_CUDART_VIA_DRIVER: cuMemAllocAsync[_ptsz]. */
static cudaError_t drv_async_alloc(void **devPtr, size_t size, cudaStream_t hStream, bool ptsz)
{
	if (!devPtr)
		return ret(cudaErrorInvalidValue);
	if (!size) {
		*devPtr = NULL;
		return cudaSuccess;
	}
	cudaError_t e = drv_ready(current_device);
	drv_ptr p;
	if (!e)
		e = drv_error((ptsz ? drv.alloc_async_ptsz : drv.alloc_async)(&p, size, hStream));
	if (!e)
		*devPtr = (void *)(uintptr_t)p;
	return e;
}

static cudaError_t drv_async_free(void *devPtr, cudaStream_t hStream, bool ptsz)
{
	cudaError_t e = drv_ready(current_device);
	if (e)
		return e;
	return drv_error((ptsz ? drv.free_async_ptsz : drv.free_async)((drv_ptr)(uintptr_t)devPtr,
	                                                               hStream));
}

EXPORT cudaError_t cudaMallocAsync(void **devPtr, size_t size, cudaStream_t hStream)
{
	if (via_driver())
		return drv_async_alloc(devPtr, size, hStream, false);
	return async_alloc(devPtr, size, current_device);
}

EXPORT cudaError_t cudaMallocAsync_ptsz(void **devPtr, size_t size, cudaStream_t hStream)
{
	if (via_driver())
		return drv_async_alloc(devPtr, size, hStream, true);
	return async_alloc(devPtr, size, current_device);
}

static cudaError_t pool_alloc(void **ptr, size_t size, cudaMemPool_t memPool)
{
	if (memPool < &pools[0] || memPool >= &pools[N_DEVICES])
		return ret(cudaErrorInvalidValue);
	return async_alloc(ptr, size, memPool->dev);
}

EXPORT cudaError_t cudaMallocFromPoolAsync(void **ptr, size_t size, cudaMemPool_t memPool,
                                           cudaStream_t stream)
{
	(void)stream;
	return pool_alloc(ptr, size, memPool);
}

EXPORT cudaError_t cudaMallocFromPoolAsync_ptsz(void **ptr, size_t size, cudaMemPool_t memPool,
                                                cudaStream_t stream)
{
	(void)stream;
	return pool_alloc(ptr, size, memPool);
}

EXPORT cudaError_t cudaFreeAsync(void *devPtr, cudaStream_t hStream)
{
	if (!devPtr)
		return cudaSuccess;
	if (via_driver() && !own_device_block(devPtr))
		return drv_async_free(devPtr, hStream, false);
	return device_free(devPtr);
}

EXPORT cudaError_t cudaFreeAsync_ptsz(void *devPtr, cudaStream_t hStream)
{
	if (!devPtr)
		return cudaSuccess;
	if (via_driver() && !own_device_block(devPtr))
		return drv_async_free(devPtr, hStream, true);
	return device_free(devPtr);
}

EXPORT cudaError_t cudaDeviceGetDefaultMemPool(cudaMemPool_t *memPool, int device)
{
	if (!memPool)
		return ret(cudaErrorInvalidValue);
	if (device < 0 || device >= N_DEVICES)
		return ret(cudaErrorInvalidDevice);
	*memPool = &pools[device];
	return cudaSuccess;
}

/* With FAKE_CUDART_VIA_DRIVER, what the driver counts (cuMemGetInfo_v2). */
EXPORT cudaError_t cudaMemGetInfo(size_t *free, size_t *total)
{
	if (via_driver()) {
		cudaError_t e = drv_ready(current_device);
		return e ? e : drv_error(drv.info(free, total));
	}
	size_t u = __atomic_load_n(&used[current_device], __ATOMIC_RELAXED);
	if (free)
		*free = CAPACITY - u;
	if (total)
		*total = CAPACITY;
	return cudaSuccess;
}

static cudaError_t copy(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind)
{
	if ((unsigned)kind > cudaMemcpyDefault)
		return ret(cudaErrorInvalidValue);
	if (count && (!dst || !src))
		return ret(cudaErrorInvalidValue);
	if (count)
		memmove(dst, src, count);
	return cudaSuccess;
}

EXPORT cudaError_t cudaMemcpy(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind)
{
	return copy(dst, src, count, kind);
}

EXPORT cudaError_t cudaMemcpy_ptds(void *dst, const void *src, size_t count,
                                   enum cudaMemcpyKind kind)
{
	return copy(dst, src, count, kind);
}

EXPORT cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t count,
                                   enum cudaMemcpyKind kind, cudaStream_t stream)
{
	(void)stream;
	return copy(dst, src, count, kind);
}

EXPORT cudaError_t cudaMemcpyAsync_ptsz(void *dst, const void *src, size_t count,
                                        enum cudaMemcpyKind kind, cudaStream_t stream)
{
	(void)stream;
	return copy(dst, src, count, kind);
}

static cudaError_t set(void *devPtr, int value, size_t count)
{
	if (count && !devPtr)
		return ret(cudaErrorInvalidValue);
	if (count)
		memset(devPtr, value, count);
	return cudaSuccess;
}

EXPORT cudaError_t cudaMemset(void *devPtr, int value, size_t count)
{
	return set(devPtr, value, count);
}

EXPORT cudaError_t cudaMemset_ptds(void *devPtr, int value, size_t count)
{
	return set(devPtr, value, count);
}

EXPORT cudaError_t cudaMemsetAsync(void *devPtr, int value, size_t count, cudaStream_t stream)
{
	(void)stream;
	return set(devPtr, value, count);
}

EXPORT cudaError_t cudaMemsetAsync_ptsz(void *devPtr, int value, size_t count, cudaStream_t stream)
{
	(void)stream;
	return set(devPtr, value, count);
}

/* ------------------------------------------------------------------ */
/* Devices, errors, streams                                           */
/* ------------------------------------------------------------------ */

EXPORT cudaError_t cudaGetDevice(int *device)
{
	if (!device)
		return ret(cudaErrorInvalidValue);
	*device = current_device;
	return cudaSuccess;
}

EXPORT cudaError_t cudaSetDevice(int device)
{
	if (device < 0 || device >= N_DEVICES)
		return ret(cudaErrorInvalidDevice);
	current_device = device;
	return cudaSuccess;
}

EXPORT cudaError_t cudaGetDeviceCount(int *count)
{
	if (!count)
		return ret(cudaErrorInvalidValue);
	*count = N_DEVICES;
	return cudaSuccess;
}

EXPORT cudaError_t cudaDeviceSynchronize(void)
{
	return cudaSuccess;
}

EXPORT cudaError_t cudaRuntimeGetVersion(int *runtimeVersion)
{
	if (!runtimeVersion)
		return ret(cudaErrorInvalidValue);
	*runtimeVersion = RUNTIME_VERSION;
	return cudaSuccess;
}

EXPORT cudaError_t cudaDriverGetVersion(int *driverVersion)
{
	if (!driverVersion)
		return ret(cudaErrorInvalidValue);
	*driverVersion = RUNTIME_VERSION;
	return cudaSuccess;
}

#define RUNTIME_ERROR(drv, rt, text) FAKE_ERROR(rt, text),
static const struct fake_error errors[] = {
    FAKE_ERROR(cudaErrorInsufficientDriver,
               "CUDA driver version is insufficient for CUDA runtime version"),
    FAKE_SHARED_ERRORS(RUNTIME_ERROR)
};

static const struct fake_error *find_error(cudaError_t error)
{
	return fake_error_find(errors, sizeof(errors) / sizeof(errors[0]), error);
}

EXPORT const char *cudaGetErrorString(cudaError_t error)
{
	const struct fake_error *e = find_error(error);
	return e ? e->text : "unrecognized error code";
}

EXPORT const char *cudaGetErrorName(cudaError_t error)
{
	const struct fake_error *e = find_error(error);
	return e ? e->name : "unrecognized error code";
}

EXPORT cudaError_t cudaGetLastError(void)
{
	cudaError_t e = last_error;
	last_error = cudaSuccess;
	return e;
}

EXPORT cudaError_t cudaPeekAtLastError(void)
{
	return last_error;
}

/* Streams are numbers: nothing runs on them. */
static cudaError_t stream_create(cudaStream_t *pStream)
{
	static uintptr_t next = 0x5700;
	if (!pStream)
		return ret(cudaErrorInvalidValue);
	*pStream = (cudaStream_t)__atomic_add_fetch(&next, 0x10, __ATOMIC_RELAXED);
	return cudaSuccess;
}

EXPORT cudaError_t cudaStreamCreate(cudaStream_t *pStream)
{
	return stream_create(pStream);
}

EXPORT cudaError_t cudaStreamCreateWithFlags(cudaStream_t *pStream, unsigned int flags)
{
	(void)flags;
	return stream_create(pStream);
}

EXPORT cudaError_t cudaStreamDestroy(cudaStream_t stream)
{
	if (!stream)
		return ret(cudaErrorInvalidResourceHandle);
	return cudaSuccess;
}

EXPORT cudaError_t cudaStreamSynchronize(cudaStream_t stream)
{
	(void)stream;
	return cudaSuccess;
}

EXPORT cudaError_t cudaStreamSynchronize_ptsz(cudaStream_t stream)
{
	(void)stream;
	return cudaSuccess;
}

/* ------------------------------------------------------------------ */
/* Driver entry points: through the driver's cuGetProcAddress_v2      */
/* ------------------------------------------------------------------ */

static cudaError_t entry_point(const char *symbol, void **funcPtr, unsigned int cudaVersion,
                               unsigned long long flags,
                               enum cudaDriverEntryPointQueryResult *driverStatus)
{
	if (!symbol || !funcPtr ||
	    flags > (cudaEnableLegacyStream | cudaEnablePerThreadDefaultStream))
		return ret(cudaErrorInvalidValue);
	pthread_once(&driver_once, driver_open);
	if (!driver_get_proc)
		return ret(cudaErrorInsufficientDriver);
	int status = 0;
	void *fn = NULL;
	int rc = driver_get_proc(symbol, &fn, (int)cudaVersion, flags, &status);
	if (rc == 0) {
		*funcPtr = fn;
		if (driverStatus)
			*driverStatus = cudaDriverEntryPointSuccess;
		return cudaSuccess;
	}
	if (rc == 500) {
		/* As documented: success, a NULL pointer, and why. */
		*funcPtr = NULL;
		if (driverStatus)
			*driverStatus = status == 2 ? cudaDriverEntryPointVersionNotSufficent
			                            : cudaDriverEntryPointSymbolNotFound;
		return cudaSuccess;
	}
	return ret(cudaErrorInvalidValue);
}

EXPORT cudaError_t cudaGetDriverEntryPoint(const char *symbol, void **funcPtr,
                                           unsigned long long flags,
                                           enum cudaDriverEntryPointQueryResult *driverStatus)
{
	return entry_point(symbol, funcPtr, RUNTIME_VERSION, flags, driverStatus);
}

/* Built with --default-stream per-thread: the default flags mean per-thread. */
EXPORT cudaError_t cudaGetDriverEntryPoint_ptsz(const char *symbol, void **funcPtr,
                                                unsigned long long flags,
                                                enum cudaDriverEntryPointQueryResult *driverStatus)
{
	return entry_point(symbol, funcPtr, RUNTIME_VERSION,
	                   flags ? flags : cudaEnablePerThreadDefaultStream, driverStatus);
}

EXPORT cudaError_t cudaGetDriverEntryPointByVersion(
    const char *symbol, void **funcPtr, unsigned int cudaVersion, unsigned long long flags,
    enum cudaDriverEntryPointQueryResult *driverStatus)
{
	return entry_point(symbol, funcPtr, cudaVersion, flags, driverStatus);
}

EXPORT cudaError_t cudaGetDriverEntryPointByVersion_ptsz(
    const char *symbol, void **funcPtr, unsigned int cudaVersion, unsigned long long flags,
    enum cudaDriverEntryPointQueryResult *driverStatus)
{
	return entry_point(symbol, funcPtr, cudaVersion,
	                   flags ? flags : cudaEnablePerThreadDefaultStream, driverStatus);
}

/* ------------------------------------------------------------------ */
/* What nvcc's host code calls: registration and launches             */
/* ------------------------------------------------------------------ */

#define MAX_FATBINS 256
static void *fatbins[MAX_FATBINS];
static unsigned n_fatbins;
static __thread struct {
	dim3 grid, block;
	size_t shared;
	void *stream;
	int depth;
} call_config;

EXPORT void **__cudaRegisterFatBinary(void *fatCubin)
{
	unsigned i = __atomic_fetch_add(&n_fatbins, 1, __ATOMIC_RELAXED) % MAX_FATBINS;
	fatbins[i] = fatCubin;
	return &fatbins[i];
}

EXPORT void __cudaRegisterFatBinaryEnd(void **fatCubinHandle)
{
	(void)fatCubinHandle;
}

EXPORT void __cudaUnregisterFatBinary(void **fatCubinHandle)
{
	(void)fatCubinHandle;
}

EXPORT void __cudaRegisterFunction(void **fatCubinHandle, const char *hostFun, char *deviceFun,
                                   const char *deviceName, int thread_limit, uint3 *tid, uint3 *bid,
                                   dim3 *bDim, dim3 *gDim, int *wSize)
{
	(void)fatCubinHandle, (void)hostFun, (void)deviceFun, (void)deviceName;
	(void)thread_limit, (void)tid, (void)bid, (void)bDim, (void)gDim, (void)wSize;
}

EXPORT void __cudaRegisterVar(void **fatCubinHandle, char *hostVar, char *deviceAddress,
                              const char *deviceName, int ext, size_t size, int constant,
                              int global)
{
	(void)fatCubinHandle, (void)hostVar, (void)deviceAddress, (void)deviceName;
	(void)ext, (void)size, (void)constant, (void)global;
}

EXPORT void __cudaRegisterManagedVar(void **fatCubinHandle, void **hostVarPtrAddress,
                                     char *deviceAddress, const char *deviceName, int ext,
                                     size_t size, int constant, int global)
{
	(void)fatCubinHandle, (void)hostVarPtrAddress, (void)deviceAddress, (void)deviceName;
	(void)ext, (void)size, (void)constant, (void)global;
}

EXPORT char __cudaInitModule(void **fatCubinHandle)
{
	(void)fatCubinHandle;
	return 1;
}

EXPORT unsigned __cudaPushCallConfiguration(dim3 gridDim, dim3 blockDim, size_t sharedMem,
                                            void *stream)
{
	call_config.grid = gridDim;
	call_config.block = blockDim;
	call_config.shared = sharedMem;
	call_config.stream = stream;
	call_config.depth++;
	return 0;
}

EXPORT cudaError_t __cudaPopCallConfiguration(dim3 *gridDim, dim3 *blockDim, size_t *sharedMem,
                                              void *stream)
{
	if (call_config.depth <= 0)
		return ret(cudaErrorInvalidValue);
	call_config.depth--;
	*gridDim = call_config.grid;
	*blockDim = call_config.block;
	*sharedMem = call_config.shared;
	*(void **)stream = call_config.stream;
	return cudaSuccess;
}

EXPORT cudaError_t __cudaGetKernel(cudaKernel_t *kernel, const void *func)
{
	if (!kernel)
		return ret(cudaErrorInvalidValue);
	*kernel = (cudaKernel_t)func;
	return cudaSuccess;
}

/* A launch is accepted and runs nothing: programs must not depend on kernel results. */
EXPORT cudaError_t __cudaLaunchKernel(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim, void **args,
                                      size_t sharedMem, cudaStream_t stream)
{
	(void)gridDim, (void)blockDim, (void)args, (void)sharedMem, (void)stream;
	return kernel ? cudaSuccess : ret(cudaErrorInvalidValue);
}

EXPORT cudaError_t __cudaLaunchKernel_ptsz(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim,
                                           void **args, size_t sharedMem, cudaStream_t stream)
{
	(void)gridDim, (void)blockDim, (void)args, (void)sharedMem, (void)stream;
	return kernel ? cudaSuccess : ret(cudaErrorInvalidValue);
}

EXPORT cudaError_t cudaLaunchKernel(const void *func, dim3 gridDim, dim3 blockDim, void **args,
                                    size_t sharedMem, cudaStream_t stream)
{
	(void)gridDim, (void)blockDim, (void)args, (void)sharedMem, (void)stream;
	return func ? cudaSuccess : ret(cudaErrorInvalidValue);
}

EXPORT cudaError_t cudaLaunchKernel_ptsz(const void *func, dim3 gridDim, dim3 blockDim, void **args,
                                         size_t sharedMem, cudaStream_t stream)
{
	(void)gridDim, (void)blockDim, (void)args, (void)sharedMem, (void)stream;
	return func ? cudaSuccess : ret(cudaErrorInvalidValue);
}

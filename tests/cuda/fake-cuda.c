/* SPDX-License-Identifier: MIT */
/*
 * A fake CUDA driver, libcuda.so.1, for testing cgprobe without a GPU.
 *
 * Device memory is host memory at recognisable addresses (fake-arena.h):
 * device N from 0x2N0000000000 (N = 0, 1), pinned host memory from
 * 0x220000000000, the 32-bit pointers of the v1 entry points below 2 GiB,
 * address ranges of cuMemAddressReserve from 0x240000000000, and cuMemCreate's
 * physical memory in memfds mapped there by cuMemMap. Two devices of 16 GiB;
 * cuMemGetInfo counts what this process holds (rounded up to 256 bytes a
 * block; cuMemCreate handles until released and unmapped).
 *
 * Like the real driver: cuInit comes first (CUDA_ERROR_NOT_INITIALIZED),
 * memory calls need the calling thread's current context
 * (CUDA_ERROR_INVALID_CONTEXT), outputs are untouched on failure, and
 * cuGetProcAddress resolves base names by version and flags. The library is
 * linked with -Bsymbolic so its own references (the cuGetProcAddress table)
 * bind inside it and a preloaded probe sees only what the program calls.
 *
 * FAKE_CUDA_OOM_BYTES=N: any allocation above N bytes fails with
 * CUDA_ERROR_OUT_OF_MEMORY. FAKE_CUDA_LOG=1: every cuGetProcAddress request
 * goes to stderr as "fake-cuda: cuGetProcAddress[_v2] NAME VERSION FLAGS -> RESULT".
 */
#define _GNU_SOURCE
#ifdef FAKE_REAL_HEADERS
#include <cuda.h>
#else
#include "fake-cuda.h"
#endif

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fake-arena.h"
#include "fake-errors.h"

#define EXPORT __attribute__((visibility("default")))

/* Returns the call's error, when it has one. */
#define TRY(call)                                                                                  \
	do {                                                                                       \
		CUresult try_rc_ = (call);                                                         \
		if (try_rc_)                                                                       \
			return try_rc_;                                                            \
	} while (0)

#define N_DEVICES 2
#define CAPACITY (16ull << 30)
#define GRANULARITY (2ull << 20)
#define MAX_CONTEXTS 64
#define MAX_HANDLES 256
#define MAX_MAPPINGS 1024

struct CUctx_st {
	CUdevice dev;
	int refs;
	bool live;
	bool primary;
};

struct CUmemPoolHandle_st {
	CUdevice dev;
};

static struct fake_arena dev_arena[N_DEVICES] = {
    FAKE_ARENA_INIT("cuda-dev0", 0x200000000000ull, 32ull << 30, false, false),
    FAKE_ARENA_INIT("cuda-dev1", 0x210000000000ull, 32ull << 30, false, false),
};
static struct fake_arena host_arena =
    FAKE_ARENA_INIT("cuda-host", 0x220000000000ull, 16ull << 30, false, false);
static struct fake_arena v1_arena = FAKE_ARENA_INIT("cuda-v1", 0, 256ull << 20, true, false);
static struct fake_arena va_arena =
    FAKE_ARENA_INIT("cuda-va", 0x240000000000ull, 64ull << 30, false, true);

static bool initialised;
static size_t used[N_DEVICES];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct CUctx_st contexts[MAX_CONTEXTS]; /* [0, N_DEVICES): the primary contexts */
static struct CUmemPoolHandle_st pools[N_DEVICES] = {{0}, {1}};
static __thread CUcontext current;

struct vmm_handle {
	bool live;
	bool released;
	int dev;
	int fd;
	int maps;
	size_t size;
};

struct vmm_mapping {
	bool live;
	uintptr_t ptr;
	size_t size;
	int handle;
};

static struct vmm_handle handles[MAX_HANDLES];
static struct vmm_mapping mappings[MAX_MAPPINGS];

#define HANDLE_BASE 0xcafe0000ull

static bool is_initialised(void)
{
	return __atomic_load_n(&initialised, __ATOMIC_ACQUIRE);
}

static bool valid_context(CUcontext c)
{
	return c >= &contexts[0] && c < &contexts[MAX_CONTEXTS] && c->live;
}

/* The current context's device, or why there is none. */
static CUresult current_device(CUdevice *dev)
{
	if (!is_initialised())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!current || !valid_context(current))
		return CUDA_ERROR_INVALID_CONTEXT;
	*dev = current->dev;
	return CUDA_SUCCESS;
}

/* The current device, then the output pointer: the order the driver checks them in. */
static CUresult current_device_out(CUdevice *dev, const void *out)
{
	TRY(current_device(dev));
	return out ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

/* The driver initialised, then the output pointer. */
static CUresult initialised_out(const void *out)
{
	if (!is_initialised())
		return CUDA_ERROR_NOT_INITIALIZED;
	return out ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

static bool over_limit(size_t bytes)
{
	return (uint64_t)bytes > fake_oom_limit();
}

/* Counts len bytes against a device, or fails when it would exceed the capacity. */
static bool charge(int dev, size_t len)
{
	return fake_charge(&used[dev], CAPACITY, len);
}

static void uncharge(int dev, size_t len)
{
	fake_uncharge(&used[dev], len);
}

static size_t rounded(size_t bytes)
{
	return (bytes + 255) & ~(size_t)255;
}

/* A device allocation: arena a, counted against dev. */
static CUresult device_alloc(struct fake_arena *a, CUdevice dev, size_t bytes, uintptr_t *out)
{
	if (!bytes)
		return CUDA_ERROR_INVALID_VALUE;
	if (over_limit(bytes) || bytes > CAPACITY)
		return CUDA_ERROR_OUT_OF_MEMORY;
	if (!charge(dev, rounded(bytes)))
		return CUDA_ERROR_OUT_OF_MEMORY;
	if (fake_arena_alloc(a, bytes, 256, dev, out)) {
		uncharge(dev, rounded(bytes));
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	return CUDA_SUCCESS;
}

/* device_alloc on dev's own memory, into *dptr (untouched on failure). */
static CUresult device_alloc_into(CUdevice dev, size_t bytes, CUdeviceptr *dptr)
{
	uintptr_t p;
	TRY(device_alloc(&dev_arena[dev], dev, bytes, &p));
	*dptr = (CUdeviceptr)p;
	return CUDA_SUCCESS;
}

/* A pitched allocation's arguments, as the driver takes them. */
static bool pitch_args_ok(const void *dptr, const void *pitch, size_t width, size_t height,
			  unsigned int element_bytes)
{
	return dptr && pitch && width && height &&
	       (element_bytes == 4 || element_bytes == 8 || element_bytes == 16);
}

static CUresult device_free(uintptr_t addr)
{
	struct fake_block b;
	for (int d = 0; d < N_DEVICES; d++) {
		if (fake_arena_contains(&dev_arena[d], addr)) {
			if (fake_arena_free(&dev_arena[d], addr, &b))
				return CUDA_ERROR_INVALID_VALUE;
			uncharge(b.tag, b.len);
			return CUDA_SUCCESS;
		}
	}
	if (fake_arena_contains(&v1_arena, addr) && !fake_arena_free(&v1_arena, addr, &b)) {
		uncharge(b.tag, b.len);
		return CUDA_SUCCESS;
	}
	return CUDA_ERROR_INVALID_VALUE;
}

/* ------------------------------------------------------------------ */
/* Errors, initialisation, devices                                    */
/* ------------------------------------------------------------------ */

#define DRIVER_ERROR(drv, rt, text) FAKE_ERROR(drv, text),
static const struct fake_error errors[] = {
    FAKE_ERROR(CUDA_ERROR_DEINITIALIZED, "driver shutting down"),
    FAKE_ERROR(CUDA_ERROR_INVALID_CONTEXT, "invalid device context"),
    FAKE_ERROR(CUDA_ERROR_CONTEXT_ALREADY_CURRENT, "context already current"),
    FAKE_ERROR(CUDA_ERROR_ALREADY_MAPPED, "resource already mapped"),
    FAKE_ERROR(CUDA_ERROR_NOT_MAPPED, "resource not mapped"),
    FAKE_SHARED_ERRORS(DRIVER_ERROR)
};

/* The error's text or its name; NULL and CUDA_ERROR_INVALID_VALUE for a code not known. */
static CUresult error_string(CUresult error, bool text, const char **pStr)
{
	if (!pStr)
		return CUDA_ERROR_INVALID_VALUE;
	const struct fake_error *e =
	    fake_error_find(errors, sizeof(errors) / sizeof(errors[0]), error);
	*pStr = !e ? NULL : text ? e->text : e->name;
	return e ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

EXPORT CUresult cuGetErrorString(CUresult error, const char **pStr)
{
	return error_string(error, true, pStr);
}

EXPORT CUresult cuGetErrorName(CUresult error, const char **pStr)
{
	return error_string(error, false, pStr);
}

EXPORT CUresult cuInit(unsigned int Flags)
{
	if (Flags)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&lock);
	for (int d = 0; d < N_DEVICES; d++) {
		contexts[d].dev = d;
		contexts[d].live = true;
		contexts[d].primary = true;
	}
	__atomic_store_n(&initialised, true, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&lock);
	return CUDA_SUCCESS;
}

EXPORT CUresult cuDriverGetVersion(int *driverVersion)
{
	if (!driverVersion)
		return CUDA_ERROR_INVALID_VALUE;
	*driverVersion = 13000;
	return CUDA_SUCCESS;
}

static CUresult check_device(CUdevice dev)
{
	if (!is_initialised())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (dev < 0 || dev >= N_DEVICES)
		return CUDA_ERROR_INVALID_DEVICE;
	return CUDA_SUCCESS;
}

/* The device first, then the output pointer: the order the driver checks them in. */
static CUresult check_device_out(CUdevice dev, const void *out)
{
	TRY(check_device(dev));
	return out ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

EXPORT CUresult cuDeviceGet(CUdevice *device, int ordinal)
{
	TRY(initialised_out(device));
	if (ordinal < 0 || ordinal >= N_DEVICES)
		return CUDA_ERROR_INVALID_DEVICE;
	*device = ordinal;
	return CUDA_SUCCESS;
}

EXPORT CUresult cuDeviceGetCount(int *count)
{
	TRY(initialised_out(count));
	*count = N_DEVICES;
	return CUDA_SUCCESS;
}

EXPORT CUresult cuDeviceGetName(char *name, int len, CUdevice dev)
{
	TRY(check_device(dev));
	if (!name || len <= 0)
		return CUDA_ERROR_INVALID_VALUE;
	static const char *const names[N_DEVICES] = {"Fake CUDA Device 0", "Fake CUDA Device 1"};
	size_t n = strlen(names[dev]);
	if (n >= (size_t)len)
		n = (size_t)len - 1;
	memcpy(name, names[dev], n);
	name[n] = '\0';
	return CUDA_SUCCESS;
}

/* GPU-fa4ec0da-0000-4000-8000-00000000000N for device N. */
static CUresult device_uuid(CUuuid *uuid, CUdevice dev)
{
	TRY(check_device_out(dev, uuid));
	static const unsigned char base[16] = {0xfa, 0x4e, 0xc0, 0xda, 0x00, 0x00, 0x40, 0x00,
	                                       0x80, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00};
	memcpy(uuid->bytes, base, sizeof(base));
	uuid->bytes[15] = (char)dev;
	return CUDA_SUCCESS;
}

EXPORT CUresult cuDeviceGetUuid(CUuuid *uuid, CUdevice dev)
{
	return device_uuid(uuid, dev);
}

EXPORT CUresult cuDeviceGetUuid_v2(CUuuid *uuid, CUdevice dev)
{
	return device_uuid(uuid, dev);
}

EXPORT CUresult cuDeviceTotalMem(unsigned int *bytes, CUdevice dev)
{
	TRY(check_device_out(dev, bytes));
	*bytes = UINT_MAX; /* 16 GiB does not fit */
	return CUDA_SUCCESS;
}

EXPORT CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice dev)
{
	TRY(check_device_out(dev, bytes));
	*bytes = CAPACITY;
	return CUDA_SUCCESS;
}

EXPORT CUresult cuDeviceGetDefaultMemPool(CUmemoryPool *pool_out, CUdevice dev)
{
	TRY(check_device_out(dev, pool_out));
	*pool_out = &pools[dev];
	return CUDA_SUCCESS;
}

/* ------------------------------------------------------------------ */
/* Contexts: one current per thread                                   */
/* ------------------------------------------------------------------ */

EXPORT CUresult cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev)
{
	TRY(check_device_out(dev, pctx));
	__atomic_fetch_add(&contexts[dev].refs, 1, __ATOMIC_RELAXED);
	*pctx = &contexts[dev];
	return CUDA_SUCCESS;
}

static CUresult primary_release(CUdevice dev)
{
	TRY(check_device(dev));
	int refs = __atomic_load_n(&contexts[dev].refs, __ATOMIC_RELAXED);
	do {
		if (refs <= 0)
			return CUDA_ERROR_INVALID_CONTEXT;
	} while (!__atomic_compare_exchange_n(&contexts[dev].refs, &refs, refs - 1, true,
	                                      __ATOMIC_RELAXED, __ATOMIC_RELAXED));
	return CUDA_SUCCESS;
}

EXPORT CUresult cuDevicePrimaryCtxRelease(CUdevice dev)
{
	return primary_release(dev);
}

EXPORT CUresult cuDevicePrimaryCtxRelease_v2(CUdevice dev)
{
	return primary_release(dev);
}

static CUresult context_create(CUcontext *pctx, CUdevice dev)
{
	TRY(check_device_out(dev, pctx));
	CUresult rc = CUDA_ERROR_OUT_OF_MEMORY;
	pthread_mutex_lock(&lock);
	for (int i = N_DEVICES; i < MAX_CONTEXTS; i++) {
		if (!contexts[i].live) {
			contexts[i] = (struct CUctx_st){.dev = dev, .refs = 1, .live = true};
			current = &contexts[i];
			*pctx = &contexts[i];
			rc = CUDA_SUCCESS;
			break;
		}
	}
	pthread_mutex_unlock(&lock);
	return rc;
}

EXPORT CUresult cuCtxCreate(CUcontext *pctx, unsigned int flags, CUdevice dev)
{
	(void)flags;
	return context_create(pctx, dev);
}

EXPORT CUresult cuCtxCreate_v2(CUcontext *pctx, unsigned int flags, CUdevice dev)
{
	(void)flags;
	return context_create(pctx, dev);
}

EXPORT CUresult cuCtxCreate_v3(CUcontext *pctx, CUexecAffinityParam *paramsArray, int numParams,
                               unsigned int flags, CUdevice dev)
{
	(void)paramsArray, (void)numParams, (void)flags;
	return context_create(pctx, dev);
}

EXPORT CUresult cuCtxCreate_v4(CUcontext *pctx, CUctxCreateParams *ctxCreateParams,
                               unsigned int flags, CUdevice dev)
{
	(void)ctxCreateParams, (void)flags;
	return context_create(pctx, dev);
}

static CUresult context_destroy(CUcontext ctx)
{
	if (!is_initialised())
		return CUDA_ERROR_NOT_INITIALIZED;
	CUresult rc = CUDA_ERROR_INVALID_CONTEXT;
	pthread_mutex_lock(&lock);
	if (valid_context(ctx) && !ctx->primary) {
		ctx->live = false;
		rc = CUDA_SUCCESS;
	}
	pthread_mutex_unlock(&lock);
	if (!rc && current == ctx)
		current = NULL;
	return rc;
}

EXPORT CUresult cuCtxDestroy(CUcontext ctx)
{
	return context_destroy(ctx);
}

EXPORT CUresult cuCtxDestroy_v2(CUcontext ctx)
{
	return context_destroy(ctx);
}

EXPORT CUresult cuCtxSetCurrent(CUcontext ctx)
{
	if (!is_initialised())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (ctx && !valid_context(ctx))
		return CUDA_ERROR_INVALID_CONTEXT;
	current = ctx;
	return CUDA_SUCCESS;
}

EXPORT CUresult cuCtxGetCurrent(CUcontext *pctx)
{
	TRY(initialised_out(pctx));
	*pctx = current;
	return CUDA_SUCCESS;
}

EXPORT CUresult cuCtxGetDevice(CUdevice *device)
{
	CUdevice dev;
	TRY(current_device_out(&dev, device));
	*device = dev;
	return CUDA_SUCCESS;
}

/* CUDA 13: the device of ctx, or of the current context when ctx is NULL. */
EXPORT CUresult cuCtxGetDevice_v2(CUdevice *device, CUcontext ctx)
{
	if (!ctx)
		return cuCtxGetDevice(device);
	if (!is_initialised())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!valid_context(ctx))
		return CUDA_ERROR_INVALID_CONTEXT;
	if (!device)
		return CUDA_ERROR_INVALID_VALUE;
	*device = ctx->dev;
	return CUDA_SUCCESS;
}

EXPORT CUresult cuCtxSynchronize(void)
{
	CUdevice dev;
	return current_device(&dev);
}

EXPORT CUresult cuCtxSynchronize_v2(CUcontext ctx)
{
	if (!ctx)
		return cuCtxSynchronize();
	if (!is_initialised())
		return CUDA_ERROR_NOT_INITIALIZED;
	return valid_context(ctx) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT;
}

/* ------------------------------------------------------------------ */
/* Memory                                                             */
/* ------------------------------------------------------------------ */

EXPORT CUresult cuMemGetInfo_v2(size_t *free, size_t *total)
{
	CUdevice dev;
	TRY(current_device(&dev));
	size_t u = __atomic_load_n(&used[dev], __ATOMIC_RELAXED);
	/* Either output may be NULL (OptiX asks for the total alone). */
	if (free)
		*free = CAPACITY - u;
	if (total)
		*total = CAPACITY;
	return CUDA_SUCCESS;
}

EXPORT CUresult cuMemGetInfo(unsigned int *free, unsigned int *total)
{
	size_t f, t;
	TRY(cuMemGetInfo_v2(&f, &t));
	if (free)
		*free = f > UINT_MAX ? UINT_MAX : (unsigned int)f;
	if (total)
		*total = t > UINT_MAX ? UINT_MAX : (unsigned int)t;
	return CUDA_SUCCESS;
}

EXPORT CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize)
{
	CUdevice dev;
	TRY(current_device_out(&dev, dptr));
	return device_alloc_into(dev, bytesize, dptr);
}

EXPORT CUresult cuMemAlloc(CUdeviceptr_v1 *dptr, unsigned int bytesize)
{
	CUdevice dev;
	uintptr_t p;
	TRY(current_device_out(&dev, dptr));
	TRY(device_alloc(&v1_arena, dev, bytesize, &p));
	*dptr = (CUdeviceptr_v1)p;
	return CUDA_SUCCESS;
}

EXPORT CUresult cuMemAllocPitch_v2(CUdeviceptr *dptr, size_t *pPitch, size_t WidthInBytes,
                                   size_t Height, unsigned int ElementSizeBytes)
{
	CUdevice dev;
	TRY(current_device(&dev));
	if (!pitch_args_ok(dptr, pPitch, WidthInBytes, Height, ElementSizeBytes))
		return CUDA_ERROR_INVALID_VALUE;
	size_t pitch = (WidthInBytes + 511) & ~(size_t)511;
	if (Height > SIZE_MAX / pitch)
		return CUDA_ERROR_OUT_OF_MEMORY;
	TRY(device_alloc_into(dev, pitch * Height, dptr));
	*pPitch = pitch;
	return CUDA_SUCCESS;
}

EXPORT CUresult cuMemAllocPitch(CUdeviceptr_v1 *dptr, unsigned int *pPitch,
                                unsigned int WidthInBytes, unsigned int Height,
                                unsigned int ElementSizeBytes)
{
	CUdevice dev;
	uintptr_t p;
	TRY(current_device(&dev));
	if (!pitch_args_ok(dptr, pPitch, WidthInBytes, Height, ElementSizeBytes))
		return CUDA_ERROR_INVALID_VALUE;
	size_t pitch = ((size_t)WidthInBytes + 511) & ~(size_t)511;
	TRY(device_alloc(&v1_arena, dev, pitch * Height, &p));
	*dptr = (CUdeviceptr_v1)p;
	*pPitch = (unsigned int)pitch;
	return CUDA_SUCCESS;
}

EXPORT CUresult cuMemFree_v2(CUdeviceptr dptr)
{
	CUdevice dev;
	TRY(current_device(&dev));
	return dptr ? device_free((uintptr_t)dptr) : CUDA_SUCCESS;
}

EXPORT CUresult cuMemFree(CUdeviceptr_v1 dptr)
{
	return cuMemFree_v2((CUdeviceptr)dptr);
}

EXPORT CUresult cuMemAllocManaged(CUdeviceptr *dptr, size_t bytesize, unsigned int flags)
{
	CUdevice dev;
	TRY(current_device_out(&dev, dptr));
	/* CU_MEM_ATTACH_GLOBAL or CU_MEM_ATTACH_HOST */
	if (flags != 0x1 && flags != 0x2)
		return CUDA_ERROR_INVALID_VALUE;
	return device_alloc_into(dev, bytesize, dptr);
}

static CUresult host_alloc(void **pp, size_t bytesize)
{
	CUdevice dev;
	TRY(current_device_out(&dev, pp));
	if (!bytesize)
		return CUDA_ERROR_INVALID_VALUE;
	if (over_limit(bytesize))
		return CUDA_ERROR_OUT_OF_MEMORY;
	uintptr_t p;
	if (fake_arena_alloc(&host_arena, bytesize, 256, -1, &p))
		return CUDA_ERROR_OUT_OF_MEMORY;
	*pp = (void *)p;
	return CUDA_SUCCESS;
}

EXPORT CUresult cuMemAllocHost_v2(void **pp, size_t bytesize)
{
	return host_alloc(pp, bytesize);
}

EXPORT CUresult cuMemAllocHost(void **pp, unsigned int bytesize)
{
	return host_alloc(pp, bytesize);
}

EXPORT CUresult cuMemHostAlloc(void **pp, size_t bytesize, unsigned int Flags)
{
	if (Flags & ~0xfu)
		return CUDA_ERROR_INVALID_VALUE;
	return host_alloc(pp, bytesize);
}

EXPORT CUresult cuMemFreeHost(void *p)
{
	CUdevice dev;
	TRY(current_device(&dev));
	if (p && fake_arena_free(&host_arena, (uintptr_t)p, NULL))
		return CUDA_ERROR_INVALID_VALUE;
	return CUDA_SUCCESS;
}

EXPORT CUresult cuMemGetAddressRange_v2(CUdeviceptr *pbase, size_t *psize, CUdeviceptr dptr)
{
	CUdevice dev;
	TRY(current_device(&dev));
	struct fake_block b;
	for (int d = 0; d < N_DEVICES; d++) {
		if (!fake_arena_find_inside(&dev_arena[d], (uintptr_t)dptr, &b)) {
			if (pbase)
				*pbase = (CUdeviceptr)b.addr;
			if (psize)
				*psize = b.bytes;
			return CUDA_SUCCESS;
		}
	}
	return CUDA_ERROR_NOT_FOUND;
}

/* Stream-ordered allocation happens at once: the fake has no streams to order. */
static CUresult async_alloc(CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool)
{
	CUdevice dev;
	TRY(current_device_out(&dev, dptr));
	if (pool) {
		if (pool < &pools[0] || pool >= &pools[N_DEVICES])
			return CUDA_ERROR_INVALID_VALUE;
		dev = pool->dev;
	}
	return device_alloc_into(dev, bytesize, dptr);
}

EXPORT CUresult cuMemAllocAsync(CUdeviceptr *dptr, size_t bytesize, CUstream hStream)
{
	(void)hStream;
	return async_alloc(dptr, bytesize, NULL);
}

/* The per-thread default stream is no different here: the _ptsz names are aliases. */
EXPORT CUresult cuMemAllocAsync_ptsz(CUdeviceptr *dptr, size_t bytesize, CUstream hStream)
{
	return cuMemAllocAsync(dptr, bytesize, hStream);
}

EXPORT CUresult cuMemAllocFromPoolAsync(CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool,
                                        CUstream hStream)
{
	(void)hStream;
	return pool ? async_alloc(dptr, bytesize, pool) : CUDA_ERROR_INVALID_VALUE;
}

EXPORT CUresult cuMemAllocFromPoolAsync_ptsz(CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool,
                                             CUstream hStream)
{
	return cuMemAllocFromPoolAsync(dptr, bytesize, pool, hStream);
}

EXPORT CUresult cuMemFreeAsync(CUdeviceptr dptr, CUstream hStream)
{
	(void)hStream;
	return cuMemFree_v2(dptr);
}

EXPORT CUresult cuMemFreeAsync_ptsz(CUdeviceptr dptr, CUstream hStream)
{
	return cuMemFreeAsync(dptr, hStream);
}

EXPORT CUresult cuMemcpyHtoD_v2(CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount)
{
	CUdevice dev;
	TRY(current_device(&dev));
	memcpy((void *)(uintptr_t)dstDevice, srcHost, ByteCount);
	return CUDA_SUCCESS;
}

EXPORT CUresult cuMemcpyDtoH_v2(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount)
{
	CUdevice dev;
	TRY(current_device(&dev));
	memcpy(dstHost, (const void *)(uintptr_t)srcDevice, ByteCount);
	return CUDA_SUCCESS;
}

EXPORT CUresult cuMemsetD8_v2(CUdeviceptr dstDevice, unsigned char uc, size_t N)
{
	CUdevice dev;
	TRY(current_device(&dev));
	memset((void *)(uintptr_t)dstDevice, uc, N);
	return CUDA_SUCCESS;
}

/* ------------------------------------------------------------------ */
/* Virtual memory management: handles are memfds, maps are mmaps      */
/* ------------------------------------------------------------------ */

EXPORT CUresult cuMemGetAllocationGranularity(size_t *granularity, const CUmemAllocationProp *prop,
                                              CUmemAllocationGranularity_flags option)
{
	(void)option;
	TRY(initialised_out(granularity));
	if (!prop)
		return CUDA_ERROR_INVALID_VALUE;
	*granularity = GRANULARITY;
	return CUDA_SUCCESS;
}

static int handle_index(CUmemGenericAllocationHandle h)
{
	if (h <= HANDLE_BASE || h > HANDLE_BASE + MAX_HANDLES)
		return -1;
	int i = (int)(h - HANDLE_BASE - 1);
	return handles[i].live && !handles[i].released ? i : -1;
}

/* Called with the lock held: the handle's memory goes once released and unmapped. */
static void handle_put(int i)
{
	if (handles[i].released && handles[i].maps == 0) {
		uncharge(handles[i].dev, handles[i].size);
		handles[i].live = false;
	}
}

EXPORT CUresult cuMemCreate(CUmemGenericAllocationHandle *handle, size_t size,
                            const CUmemAllocationProp *prop, unsigned long long flags)
{
	if (!is_initialised())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!handle || !prop || flags || !size || size % GRANULARITY ||
	    prop->type != CU_MEM_ALLOCATION_TYPE_PINNED ||
	    prop->location.type != CU_MEM_LOCATION_TYPE_DEVICE)
		return CUDA_ERROR_INVALID_VALUE;
	int dev = prop->location.id;
	if (dev < 0 || dev >= N_DEVICES)
		return CUDA_ERROR_INVALID_DEVICE;
	if (over_limit(size) || !charge(dev, size))
		return CUDA_ERROR_OUT_OF_MEMORY;
	CUresult rc = CUDA_ERROR_OUT_OF_MEMORY;
	pthread_mutex_lock(&lock);
	for (int i = 0; i < MAX_HANDLES; i++) {
		if (handles[i].live)
			continue;
		int fd = memfd_create("fake-cuda-vmm", MFD_CLOEXEC);
		if (fd < 0)
			break;
		if (ftruncate(fd, (off_t)size)) {
			close(fd);
			break;
		}
		handles[i] = (struct vmm_handle){.live = true, .dev = dev, .fd = fd, .size = size};
		*handle = HANDLE_BASE + (CUmemGenericAllocationHandle)i + 1;
		rc = CUDA_SUCCESS;
		break;
	}
	pthread_mutex_unlock(&lock);
	if (rc)
		uncharge(dev, size);
	return rc;
}

EXPORT CUresult cuMemRelease(CUmemGenericAllocationHandle handle)
{
	if (!is_initialised())
		return CUDA_ERROR_NOT_INITIALIZED;
	CUresult rc = CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&lock);
	int i = handle_index(handle);
	if (i >= 0) {
		handles[i].released = true;
		close(handles[i].fd); /* the mappings keep the memory */
		handles[i].fd = -1;
		handle_put(i);
		rc = CUDA_SUCCESS;
	}
	pthread_mutex_unlock(&lock);
	return rc;
}

EXPORT CUresult cuMemAddressReserve(CUdeviceptr *ptr, size_t size, size_t alignment,
                                    CUdeviceptr addr, unsigned long long flags)
{
	if (!is_initialised())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!ptr || !size || size % GRANULARITY || flags || (alignment & (alignment - 1)))
		return CUDA_ERROR_INVALID_VALUE;
	if (alignment < GRANULARITY)
		alignment = GRANULARITY;
	uintptr_t p = (uintptr_t)addr;
	/* addr is a hint: elsewhere when it is taken. */
	if (!addr || p % alignment || fake_arena_alloc_at(&va_arena, p, size, 0)) {
		if (fake_arena_alloc(&va_arena, size, alignment, 0, &p))
			return CUDA_ERROR_OUT_OF_MEMORY;
	}
	*ptr = (CUdeviceptr)p;
	return CUDA_SUCCESS;
}

EXPORT CUresult cuMemAddressFree(CUdeviceptr ptr, size_t size)
{
	if (!is_initialised())
		return CUDA_ERROR_NOT_INITIALIZED;
	struct fake_block b;
	if (fake_arena_find(&va_arena, (uintptr_t)ptr, &b) || b.bytes != size)
		return CUDA_ERROR_INVALID_VALUE;
	fake_arena_free(&va_arena, (uintptr_t)ptr, NULL);
	return CUDA_SUCCESS;
}

/* Called with the lock held. */
static bool range_mapped(uintptr_t p, size_t size)
{
	for (int i = 0; i < MAX_MAPPINGS; i++)
		if (mappings[i].live && mappings[i].ptr < p + size &&
		    p < mappings[i].ptr + mappings[i].size)
			return true;
	return false;
}

EXPORT CUresult cuMemMap(CUdeviceptr ptr, size_t size, size_t offset,
                         CUmemGenericAllocationHandle handle, unsigned long long flags)
{
	if (!is_initialised())
		return CUDA_ERROR_NOT_INITIALIZED;
	uintptr_t p = (uintptr_t)ptr;
	struct fake_block b;
	if (flags || !size || size % GRANULARITY || offset % GRANULARITY ||
	    fake_arena_find_inside(&va_arena, p, &b) || p + size > b.addr + b.bytes)
		return CUDA_ERROR_INVALID_VALUE;
	CUresult rc = CUDA_ERROR_INVALID_HANDLE;
	pthread_mutex_lock(&lock);
	int h = handle_index(handle);
	if (h < 0)
		goto out;
	rc = CUDA_ERROR_INVALID_VALUE;
	if (offset > handles[h].size || size > handles[h].size - offset)
		goto out;
	rc = CUDA_ERROR_ALREADY_MAPPED;
	if (range_mapped(p, size))
		goto out;
	rc = CUDA_ERROR_OUT_OF_MEMORY;
	int m;
	for (m = 0; m < MAX_MAPPINGS && mappings[m].live; m++)
		;
	if (m == MAX_MAPPINGS)
		goto out;
	if (mmap((void *)p, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, handles[h].fd,
	         (off_t)offset) == MAP_FAILED)
		goto out;
	mappings[m] = (struct vmm_mapping){.live = true, .ptr = p, .size = size, .handle = h};
	handles[h].maps++;
	rc = CUDA_SUCCESS;
out:
	pthread_mutex_unlock(&lock);
	return rc;
}

EXPORT CUresult cuMemUnmap(CUdeviceptr ptr, size_t size)
{
	if (!is_initialised())
		return CUDA_ERROR_NOT_INITIALIZED;
	uintptr_t p = (uintptr_t)ptr;
	if (!size)
		return CUDA_ERROR_INVALID_VALUE;
	CUresult rc = CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&lock);
	/* Whole mappings only, as the driver requires. */
	for (int i = 0; i < MAX_MAPPINGS; i++) {
		struct vmm_mapping *m = &mappings[i];
		if (m->live && m->ptr < p + size && p < m->ptr + m->size &&
		    (m->ptr < p || m->ptr + m->size > p + size))
			goto out;
	}
	for (int i = 0; i < MAX_MAPPINGS; i++) {
		struct vmm_mapping *m = &mappings[i];
		if (!m->live || m->ptr < p || m->ptr + m->size > p + size)
			continue;
		mmap((void *)m->ptr, m->size, PROT_NONE,
		     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
		m->live = false;
		handles[m->handle].maps--;
		handle_put(m->handle);
		rc = CUDA_SUCCESS;
	}
out:
	pthread_mutex_unlock(&lock);
	return rc;
}

EXPORT CUresult cuMemSetAccess(CUdeviceptr ptr, size_t size, const CUmemAccessDesc *desc,
                               size_t count)
{
	if (!is_initialised())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!desc || !count || !size)
		return CUDA_ERROR_INVALID_VALUE;
	for (size_t i = 0; i < count; i++)
		if (desc[i].location.type != CU_MEM_LOCATION_TYPE_DEVICE ||
		    desc[i].location.id < 0 || desc[i].location.id >= N_DEVICES)
			return CUDA_ERROR_INVALID_DEVICE;
	uintptr_t p = (uintptr_t)ptr;
	size_t covered = 0;
	pthread_mutex_lock(&lock);
	for (int i = 0; i < MAX_MAPPINGS; i++) {
		struct vmm_mapping *m = &mappings[i];
		if (m->live && m->ptr >= p && m->ptr + m->size <= p + size)
			covered += m->size;
	}
	pthread_mutex_unlock(&lock);
	return covered == size ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

/* ------------------------------------------------------------------ */
/* cuGetProcAddress                                                   */
/* ------------------------------------------------------------------ */

struct proc {
	const char *base;
	int version; /* the CUDA version that introduced this variant */
	bool ptsz;   /* the per-thread default stream variant */
	void *fn;
	const char *symbol;
};

#define P(BASE, VERSION, FN)                                                                       \
	{                                                                                          \
		BASE, VERSION, false, (void *)FN, #FN                                              \
	}
#define PZ(BASE, VERSION, FN)                                                                      \
	{                                                                                          \
		BASE, VERSION, true, (void *)FN, #FN                                               \
	}

static const struct proc procs[] = {
    P("cuGetErrorString", 6000, cuGetErrorString),
    P("cuGetErrorName", 6000, cuGetErrorName),
    P("cuInit", 2000, cuInit),
    P("cuDriverGetVersion", 2020, cuDriverGetVersion),
    P("cuDeviceGet", 2000, cuDeviceGet),
    P("cuDeviceGetCount", 2000, cuDeviceGetCount),
    P("cuDeviceGetName", 2000, cuDeviceGetName),
    P("cuDeviceGetUuid", 9020, cuDeviceGetUuid),
    P("cuDeviceGetUuid", 11040, cuDeviceGetUuid_v2),
    P("cuDeviceTotalMem", 2000, cuDeviceTotalMem),
    P("cuDeviceTotalMem", 3020, cuDeviceTotalMem_v2),
    P("cuDeviceGetDefaultMemPool", 11020, cuDeviceGetDefaultMemPool),
    P("cuDevicePrimaryCtxRetain", 7000, cuDevicePrimaryCtxRetain),
    P("cuDevicePrimaryCtxRelease", 7000, cuDevicePrimaryCtxRelease),
    P("cuDevicePrimaryCtxRelease", 11000, cuDevicePrimaryCtxRelease_v2),
    P("cuCtxCreate", 2000, cuCtxCreate),
    P("cuCtxCreate", 3020, cuCtxCreate_v2),
    P("cuCtxCreate", 11040, cuCtxCreate_v3),
    P("cuCtxCreate", 12050, cuCtxCreate_v4),
    P("cuCtxDestroy", 2000, cuCtxDestroy),
    P("cuCtxDestroy", 4000, cuCtxDestroy_v2),
    P("cuCtxSetCurrent", 4000, cuCtxSetCurrent),
    P("cuCtxGetCurrent", 4000, cuCtxGetCurrent),
    P("cuCtxGetDevice", 2000, cuCtxGetDevice),
    P("cuCtxGetDevice", 13000, cuCtxGetDevice_v2),
    P("cuCtxSynchronize", 2000, cuCtxSynchronize),
    P("cuCtxSynchronize", 13000, cuCtxSynchronize_v2),
    P("cuMemGetInfo", 2000, cuMemGetInfo),
    P("cuMemGetInfo", 3020, cuMemGetInfo_v2),
    P("cuMemAlloc", 2000, cuMemAlloc),
    P("cuMemAlloc", 3020, cuMemAlloc_v2),
    P("cuMemAllocPitch", 2000, cuMemAllocPitch),
    P("cuMemAllocPitch", 3020, cuMemAllocPitch_v2),
    P("cuMemFree", 2000, cuMemFree),
    P("cuMemFree", 3020, cuMemFree_v2),
    P("cuMemAllocManaged", 6000, cuMemAllocManaged),
    P("cuMemAllocHost", 2000, cuMemAllocHost),
    P("cuMemAllocHost", 3020, cuMemAllocHost_v2),
    P("cuMemHostAlloc", 2020, cuMemHostAlloc),
    P("cuMemFreeHost", 2000, cuMemFreeHost),
    P("cuMemGetAddressRange", 3020, cuMemGetAddressRange_v2),
    P("cuMemAllocAsync", 11020, cuMemAllocAsync),
    PZ("cuMemAllocAsync", 11020, cuMemAllocAsync_ptsz),
    P("cuMemAllocFromPoolAsync", 11020, cuMemAllocFromPoolAsync),
    PZ("cuMemAllocFromPoolAsync", 11020, cuMemAllocFromPoolAsync_ptsz),
    P("cuMemFreeAsync", 11020, cuMemFreeAsync),
    PZ("cuMemFreeAsync", 11020, cuMemFreeAsync_ptsz),
    P("cuMemGetAllocationGranularity", 10020, cuMemGetAllocationGranularity),
    P("cuMemCreate", 10020, cuMemCreate),
    P("cuMemRelease", 10020, cuMemRelease),
    P("cuMemAddressReserve", 10020, cuMemAddressReserve),
    P("cuMemAddressFree", 10020, cuMemAddressFree),
    P("cuMemMap", 10020, cuMemMap),
    P("cuMemUnmap", 10020, cuMemUnmap),
    P("cuMemSetAccess", 10020, cuMemSetAccess),
    P("cuMemcpyHtoD", 3020, cuMemcpyHtoD_v2),
    P("cuMemcpyDtoH", 3020, cuMemcpyDtoH_v2),
    P("cuMemsetD8", 3020, cuMemsetD8_v2),
    P("cuGetProcAddress", 11030, cuGetProcAddress),
    P("cuGetProcAddress", 12000, cuGetProcAddress_v2),
};

/*
 * The newest variant of symbol introduced at or before cudaVersion; with the
 * per-thread flag a _ptsz variant first, else the legacy one.
 */
static CUresult lookup(const char *caller, const char *symbol, void **pfn, int cudaVersion,
                       cuuint64_t flags, CUdriverProcAddressQueryResult *symbolStatus)
{
	if (!symbol || !pfn ||
	    flags > (CU_GET_PROC_ADDRESS_LEGACY_STREAM |
	             CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM)) {
		if (fake_log_enabled())
			fake_log("fake-cuda: %s %s %d %llu -> invalid (1)", caller,
			         symbol ? symbol : "(null)", cudaVersion,
			         (unsigned long long)flags);
		return CUDA_ERROR_INVALID_VALUE;
	}
	bool want_ptsz = flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM;
	const struct proc *best = NULL, *best_ptsz = NULL;
	bool known = false;
	for (size_t i = 0; i < sizeof(procs) / sizeof(procs[0]); i++) {
		const struct proc *p = &procs[i];
		if (strcmp(p->base, symbol))
			continue;
		known = true;
		if (p->version > cudaVersion)
			continue;
		const struct proc **slot = p->ptsz ? &best_ptsz : &best;
		if (!*slot || (*slot)->version < p->version)
			*slot = p;
	}
	if (want_ptsz && best_ptsz)
		best = best_ptsz;
	if (!best) {
		CUdriverProcAddressQueryResult st = known
		                                        ? CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT
		                                        : CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
		if (symbolStatus)
			*symbolStatus = st;
		*pfn = NULL;
		if (fake_log_enabled())
			fake_log("fake-cuda: %s %s %d %llu -> %s (500)", caller, symbol,
			         cudaVersion, (unsigned long long)flags,
			         known ? "version-not-sufficient" : "not-found");
		return CUDA_ERROR_NOT_FOUND;
	}
	if (symbolStatus)
		*symbolStatus = CU_GET_PROC_ADDRESS_SUCCESS;
	*pfn = best->fn;
	if (fake_log_enabled())
		fake_log("fake-cuda: %s %s %d %llu -> %s", caller, symbol, cudaVersion,
		         (unsigned long long)flags, best->symbol);
	return CUDA_SUCCESS;
}

EXPORT CUresult cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags)
{
	return lookup("cuGetProcAddress", symbol, pfn, cudaVersion, flags, NULL);
}

EXPORT CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion,
                                    cuuint64_t flags, CUdriverProcAddressQueryResult *symbolStatus)
{
	return lookup("cuGetProcAddress_v2", symbol, pfn, cudaVersion, flags, symbolStatus);
}

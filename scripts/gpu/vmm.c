/* SPDX-License-Identifier: MIT */
/*
 * vmm.c: CUDA driver API allocations of known sizes, for scripts/gpu-check.sh.
 * Plain C, linked with -lcuda (the stub at build time, the driver's
 * libcuda.so.1 at run time).
 *
 *   cuInit, the primary context;
 *   cuMemCreate 2 x 512 MiB (rounded up to cuMemGetAllocationGranularity),
 *   cuMemAddressReserve of three slots, the first handle mapped twice (slots
 *   0 and 1, checked to alias), the second once, cuMemSetAccess;
 *   cuMemRelease of the first handle while it is still mapped and cuMemUnmap
 *   of one of its mappings: the memory stays in use until its last mapping
 *   goes, so it is still counted at the peak;
 *   then, alive together at the peak: cuMemAlloc 32 MiB called directly,
 *   cuMemAlloc_v2 32 MiB through dlsym, cuMemAllocAsync 256 MiB through
 *   cuGetProcAddress; cuMemGetInfo at the peak;
 *   everything freed, the first handle's memory with its last cuMemUnmap.
 *
 * The last line of stdout is
 *   CGCHECK expected_peak_bytes=N expected_device_allocs=N expected_device_frees=N
 * Exit status 0 on success, 1 on any CUDA error (printed on stderr).
 */
#include <cuda.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

#define MiB (1024ull * 1024ull)

static void check(CUresult r, const char *call, int line)
{
	if (r == CUDA_SUCCESS)
		return;
	const char *name = NULL, *text = NULL;
	cuGetErrorName(r, &name);
	cuGetErrorString(r, &text);
	fprintf(stderr, "vmm: %s failed: %s (%d): %s at line %d\n", call, name ? name : "?", (int)r,
		text ? text : "?", line);
	exit(1);
}
#define CK(call) check((call), #call, __LINE__)

typedef CUresult (*alloc_fn)(CUdeviceptr *, size_t);
typedef CUresult (*free_fn)(CUdeviceptr);
typedef CUresult (*alloc_async_fn)(CUdeviceptr *, size_t, CUstream);
typedef CUresult (*free_async_fn)(CUdeviceptr, CUstream);

static unsigned long long live, peak;
static int allocs, frees;

static void counted_alloc(unsigned long long bytes)
{
	live += bytes;
	allocs++;
	if (live > peak)
		peak = live;
}

static void counted_free(unsigned long long bytes)
{
	live -= bytes;
	frees++;
}

static void expect_byte(CUdeviceptr p, unsigned char v, const char *what)
{
	unsigned char got = 0;
	CK(cuMemcpyDtoH(&got, p, 1));
	if (got != v) {
		fprintf(stderr, "vmm: %s holds 0x%02x, expected 0x%02x\n", what, got, v);
		exit(1);
	}
}

/* The driver's own function by name, asked the way the CUDA 12+ runtime asks. */
static void *proc_address(const char *name, int version)
{
	void *fn = NULL;
#if CUDA_VERSION >= 12000
	CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SUCCESS;
	CK(cuGetProcAddress(name, &fn, version, CU_GET_PROC_ADDRESS_DEFAULT, &status));
	if (status != CU_GET_PROC_ADDRESS_SUCCESS)
		fn = NULL;
#else
	CK(cuGetProcAddress(name, &fn, version, CU_GET_PROC_ADDRESS_DEFAULT));
#endif
	if (!fn) {
		fprintf(stderr, "vmm: cuGetProcAddress(%s, %d) found nothing\n", name, version);
		exit(1);
	}
	return fn;
}

int main(void)
{
	CUdevice dev;
	CUcontext ctx;
	char name[256] = "";
	CK(cuInit(0));
	CK(cuDeviceGet(&dev, 0));
	CK(cuDeviceGetName(name, sizeof(name), dev));
	CK(cuDevicePrimaryCtxRetain(&ctx, dev));
	CK(cuCtxSetCurrent(ctx));
	printf("device 0: %s\n", name);

	int vmm_supported = 0;
	CK(cuDeviceGetAttribute(&vmm_supported,
				CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, dev));
	if (!vmm_supported) {
		fprintf(stderr, "vmm: the device does not support virtual memory management\n");
		return 1;
	}

	CUmemAllocationProp prop = {0};
	prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
	prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	prop.location.id = (int)dev;
	size_t gran = 0;
	CK(cuMemGetAllocationGranularity(&gran, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
	if (!gran)
		gran = 2 * MiB;
	size_t size = (512 * MiB + gran - 1) / gran * gran;
	printf("granularity %zu bytes; handles of %zu bytes\n", gran, size);

	CUmemGenericAllocationHandle h1, h2;
	CK(cuMemCreate(&h1, size, &prop, 0));
	counted_alloc(size);
	CK(cuMemCreate(&h2, size, &prop, 0));
	counted_alloc(size);

	CUdeviceptr base;
	CK(cuMemAddressReserve(&base, 3 * size, 0, 0, 0));
	CUdeviceptr va1 = base, va2 = base + size, va3 = base + 2 * size;
	CK(cuMemMap(va1, size, 0, h1, 0));
	CK(cuMemMap(va2, size, 0, h1, 0));
	CK(cuMemMap(va3, size, 0, h2, 0));
	CUmemAccessDesc access = {0};
	access.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	access.location.id = (int)dev;
	access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
	CK(cuMemSetAccess(base, 3 * size, &access, 1));
	CK(cuMemsetD8(va1, 0xab, size));
	CK(cuMemsetD8(va3, 0xcd, size));
	CK(cuCtxSynchronize());
	expect_byte(va2 + size - 1, 0xab, "the second mapping of handle 1");
	expect_byte(va3 + size - 1, 0xcd, "handle 2");
	printf("cuMemCreate 2 x %zu bytes, handle 1 mapped twice, handle 2 once\n", size);

	/* Released while mapped twice, then unmapped once: still in use. */
	CK(cuMemRelease(h1));
	CK(cuMemUnmap(va1, size));
	expect_byte(va2, 0xab, "handle 1 after cuMemRelease");

	/* Directly: cuMemAlloc is cuMemAlloc_v2 in cuda.h. */
	CUdeviceptr d_direct;
	CK(cuMemAlloc(&d_direct, 32 * MiB));
	counted_alloc(32 * MiB);
	CK(cuMemsetD8(d_direct, 1, 32 * MiB));

	/* Through dlsym on the driver's handle. */
	void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
	if (!lib)
		lib = dlopen("libcuda.so.1", RTLD_NOW);
	if (!lib) {
		fprintf(stderr, "vmm: dlopen(libcuda.so.1): %s\n", dlerror());
		return 1;
	}
	alloc_fn dl_alloc = (alloc_fn)dlsym(lib, "cuMemAlloc_v2");
	free_fn dl_free = (free_fn)dlsym(lib, "cuMemFree_v2");
	if (!dl_alloc || !dl_free) {
		fprintf(stderr, "vmm: dlsym(cuMemAlloc_v2/cuMemFree_v2) found nothing\n");
		return 1;
	}
	CUdeviceptr d_dlsym;
	CK(dl_alloc(&d_dlsym, 32 * MiB));
	counted_alloc(32 * MiB);
	CK(cuMemsetD8(d_dlsym, 2, 32 * MiB));

	/* Through cuGetProcAddress, as the static runtime and frameworks do. */
	alloc_async_fn pa_alloc = (alloc_async_fn)proc_address("cuMemAllocAsync", 11020);
	free_async_fn pa_free = (free_async_fn)proc_address("cuMemFreeAsync", 11020);
	CUstream stream;
	CK(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
	CUdeviceptr d_async;
	CK(pa_alloc(&d_async, 256 * MiB, stream));
	counted_alloc(256 * MiB);
	CK(cuMemsetD8Async(d_async, 3, 256 * MiB, stream));
	CK(cuStreamSynchronize(stream));
	CK(cuCtxSynchronize());
	expect_byte(d_direct, 1, "cuMemAlloc buffer");
	expect_byte(d_dlsym, 2, "dlsym'd cuMemAlloc_v2 buffer");
	expect_byte(d_async, 3, "cuMemAllocAsync buffer");
	printf("cuMemAlloc 32 MiB direct, cuMemAlloc_v2 32 MiB via dlsym, "
	       "cuMemAllocAsync 256 MiB via cuGetProcAddress\n");

	size_t free_b = 0, total_b = 0;
	CK(cuMemGetInfo(&free_b, &total_b));
	printf("cuMemGetInfo at the peak: free %zu, total %zu (used %zu by all processes)\n", free_b,
	       total_b, total_b - free_b);

	CK(pa_free(d_async, stream));
	counted_free(256 * MiB);
	CK(cuStreamSynchronize(stream));
	CK(cuStreamDestroy(stream));
	CK(dl_free(d_dlsym));
	counted_free(32 * MiB);
	CK(cuMemFree(d_direct));
	counted_free(32 * MiB);

	CK(cuMemUnmap(va2, size)); /* handle 1's last mapping: its memory goes now */
	counted_free(size);
	CK(cuMemUnmap(va3, size));
	CK(cuMemRelease(h2));
	counted_free(size);
	CK(cuMemAddressFree(base, 3 * size));
	CK(cuCtxSynchronize());
	CK(cuDevicePrimaryCtxRelease(dev));

	if (live != 0) {
		fprintf(stderr, "vmm: bookkeeping error, %llu bytes left\n", live);
		return 1;
	}
	printf("CGCHECK expected_peak_bytes=%llu expected_device_allocs=%d expected_device_frees=%d\n",
	       peak, allocs, frees);
	return 0;
}

/* SPDX-License-Identifier: MIT */
/*
 * The CUDA driver reached the way frameworks reach it: dlopen("libcuda.so.1"),
 * dlsym("cuGetProcAddress"), and every other entry point through
 * cuGetProcAddress by base name, version and flags (XLA, the static runtime,
 * PyTorch's driver_api.cpp), plus one dlsym of a versioned name. Nothing
 * is linked against libcuda, so only a probe that interposes dlsym and
 * cuGetProcAddress can see these allocations.
 *
 * Output: cuda-prog.h's lines. `R proc NAME VERSION FLAGS RC STATUS` for each
 * lookup; OP in A/F lines is the driver symbol the lookup must have returned
 * (cuMemAlloc at 3020 is cuMemAlloc_v2, at 2000 the v1 cuMemAlloc with 32-bit
 * pointers; flag 2 selects cuMemAllocAsync_ptsz).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "fake-cuda.h"
#include "cuda-prog.h"

/* Pointer types from the prototypes: the program declares, never links. */
#define PFN(f) __typeof__(&f)

static PFN(cuGetProcAddress_v2) get_proc;
static PFN(cuInit) p_cuInit;
static PFN(cuDeviceGet) p_cuDeviceGet;
static PFN(cuDeviceGetCount) p_cuDeviceGetCount;
static PFN(cuDeviceGetName) p_cuDeviceGetName;
static PFN(cuDeviceGetUuid_v2) p_cuDeviceGetUuid;
static PFN(cuDeviceTotalMem_v2) p_cuDeviceTotalMem;
static PFN(cuDevicePrimaryCtxRetain) p_cuDevicePrimaryCtxRetain;
static PFN(cuDevicePrimaryCtxRelease_v2) p_cuDevicePrimaryCtxRelease;
static PFN(cuCtxCreate_v2) p_cuCtxCreate;
static PFN(cuCtxDestroy_v2) p_cuCtxDestroy;
static PFN(cuCtxSetCurrent) p_cuCtxSetCurrent;
static PFN(cuCtxGetDevice) p_cuCtxGetDevice;
static PFN(cuMemGetInfo_v2) p_cuMemGetInfo;
static PFN(cuMemAlloc_v2) p_cuMemAlloc;
static PFN(cuMemAlloc) p_cuMemAlloc_v1;
static PFN(cuMemFree_v2) p_cuMemFree;
static PFN(cuMemFree) p_cuMemFree_v1;
static PFN(cuMemAllocPitch_v2) p_cuMemAllocPitch;
static PFN(cuMemAllocManaged) p_cuMemAllocManaged;
static PFN(cuMemAllocHost_v2) p_cuMemAllocHost;
static PFN(cuMemHostAlloc) p_cuMemHostAlloc;
static PFN(cuMemFreeHost) p_cuMemFreeHost;
static PFN(cuMemAllocAsync) p_cuMemAllocAsync;
static PFN(cuMemAllocAsync_ptsz) p_cuMemAllocAsync_ptsz;
static PFN(cuMemFreeAsync) p_cuMemFreeAsync;
static PFN(cuMemFreeAsync_ptsz) p_cuMemFreeAsync_ptsz;
static PFN(cuDeviceGetDefaultMemPool) p_cuDeviceGetDefaultMemPool;
static PFN(cuMemAllocFromPoolAsync) p_cuMemAllocFromPoolAsync;
static PFN(cuMemcpyHtoD_v2) p_cuMemcpyHtoD;
static PFN(cuMemcpyDtoH_v2) p_cuMemcpyDtoH;
static PFN(cuMemGetAllocationGranularity) p_cuMemGetAllocationGranularity;
static PFN(cuMemCreate) p_cuMemCreate;
static PFN(cuMemRelease) p_cuMemRelease;
static PFN(cuMemAddressReserve) p_cuMemAddressReserve;
static PFN(cuMemAddressFree) p_cuMemAddressFree;
static PFN(cuMemMap) p_cuMemMap;
static PFN(cuMemUnmap) p_cuMemUnmap;
static PFN(cuMemSetAccess) p_cuMemSetAccess;

#define SENTINEL 0x5e17ull

static void resolve(void *out, const char *name, int version, unsigned long long flags)
{
	CUdriverProcAddressQueryResult status = (CUdriverProcAddressQueryResult)-1;
	void *fn = NULL;
	CUresult rc = get_proc(name, &fn, version, flags, &status);
	say("R proc %s %d %llu %d %d", name, version, flags, (int)rc, (int)status);
	if (rc != CUDA_SUCCESS || !fn)
		fail("cuGetProcAddress_v2(%s, %d, %llu): %d", name, version, flags, (int)rc);
	memcpy(out, &fn, sizeof(fn));
}

static void check(const char *what, CUresult rc)
{
	if (rc != CUDA_SUCCESS)
		fail("%s: %d", what, (int)rc);
}

/* The outcome of an allocation: an A line, or an E line when memory ran out. */
static CUdeviceptr got(const char *op, CUresult rc, CUdeviceptr p, size_t bytes, const char *at,
                       const char *extra)
{
	char buf[32];
	if (rc == CUDA_SUCCESS) {
		say("A %s %s %zu %s%s%s", op, hex(p, buf), bytes, at, extra[0] ? " " : "", extra);
		return p;
	}
	say("E %s %zu %d %s", op, bytes, (int)rc, p == SENTINEL ? "untouched" : "clobbered");
	/* Whether the output was left alone is reported, not judged: the fake leaves it. */
	if (rc != CUDA_ERROR_OUT_OF_MEMORY)
		fail("%s: %d", op, (int)rc);
	return 0;
}

static void say_free(const char *op, CUdeviceptr p, size_t bytes, const char *at, const char *extra)
{
	char buf[32];
	say("F %s %s %zu %s%s%s", op, hex(p, buf), bytes, at, extra[0] ? " " : "", extra);
}

static void *no_context_thread(void *arg)
{
	(void)arg;
	CUdevice d = -7;
	CUresult rc = p_cuCtxGetDevice(&d);
	say("R thread cuCtxGetDevice %d %d", (int)rc, (int)d);
	CUdeviceptr p = SENTINEL;
	rc = p_cuMemAlloc(&p, 4096);
	say("R thread cuMemAlloc_v2 %d %s", (int)rc, p == SENTINEL ? "untouched" : "clobbered");
	if (rc == CUDA_SUCCESS)
		p_cuMemFree(p);
	size_t total = 0;
	rc = p_cuMemGetInfo(NULL, &total);
	say("R thread cuMemGetInfo_v2 %d", (int)rc);
	return NULL;
}

static void resolve_all(void)
{
	resolve(&p_cuInit, "cuInit", 2000, 0);
	resolve(&p_cuDeviceGet, "cuDeviceGet", 2000, 0);
	resolve(&p_cuDeviceGetCount, "cuDeviceGetCount", 2000, 0);
	resolve(&p_cuDeviceGetName, "cuDeviceGetName", 2000, 0);
	resolve(&p_cuDeviceGetUuid, "cuDeviceGetUuid", 11040, 0);
	resolve(&p_cuDeviceTotalMem, "cuDeviceTotalMem", 3020, 0);
	resolve(&p_cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain", 7000, 0);
	resolve(&p_cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease", 11000, 0);
	resolve(&p_cuCtxCreate, "cuCtxCreate", 3020, 0);
	resolve(&p_cuCtxDestroy, "cuCtxDestroy", 4000, 0);
	resolve(&p_cuCtxSetCurrent, "cuCtxSetCurrent", 4000, 0);
	resolve(&p_cuCtxGetDevice, "cuCtxGetDevice", 2000, 0);
	resolve(&p_cuMemGetInfo, "cuMemGetInfo", 3020, 0);
	resolve(&p_cuMemAlloc, "cuMemAlloc", 3020, 0);
	resolve(&p_cuMemAlloc_v1, "cuMemAlloc", 2000, 0);
	resolve(&p_cuMemFree, "cuMemFree", 3020, 0);
	resolve(&p_cuMemFree_v1, "cuMemFree", 2000, 0);
	resolve(&p_cuMemAllocPitch, "cuMemAllocPitch", 3020, 0);
	resolve(&p_cuMemAllocManaged, "cuMemAllocManaged", 6000, 0);
	resolve(&p_cuMemAllocHost, "cuMemAllocHost", 3020, 0);
	resolve(&p_cuMemHostAlloc, "cuMemHostAlloc", 2020, 0);
	resolve(&p_cuMemFreeHost, "cuMemFreeHost", 2000, 0);
	resolve(&p_cuMemAllocAsync, "cuMemAllocAsync", 11020, 0);
	resolve(&p_cuMemAllocAsync_ptsz, "cuMemAllocAsync", 11020,
	        CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM);
	resolve(&p_cuMemFreeAsync, "cuMemFreeAsync", 11020, 0);
	resolve(&p_cuMemFreeAsync_ptsz, "cuMemFreeAsync", 11020,
	        CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM);
	resolve(&p_cuDeviceGetDefaultMemPool, "cuDeviceGetDefaultMemPool", 11020, 0);
	resolve(&p_cuMemAllocFromPoolAsync, "cuMemAllocFromPoolAsync", 11020, 0);
	resolve(&p_cuMemcpyHtoD, "cuMemcpyHtoD", 3020, 0);
	resolve(&p_cuMemcpyDtoH, "cuMemcpyDtoH", 3020, 0);
	resolve(&p_cuMemGetAllocationGranularity, "cuMemGetAllocationGranularity", 10020, 0);
	resolve(&p_cuMemCreate, "cuMemCreate", 10020, 0);
	resolve(&p_cuMemRelease, "cuMemRelease", 10020, 0);
	resolve(&p_cuMemAddressReserve, "cuMemAddressReserve", 10020, 0);
	resolve(&p_cuMemAddressFree, "cuMemAddressFree", 10020, 0);
	resolve(&p_cuMemMap, "cuMemMap", 10020, 0);
	resolve(&p_cuMemUnmap, "cuMemUnmap", 10020, 0);
	resolve(&p_cuMemSetAccess, "cuMemSetAccess", 10020, 0);

	/* What a lookup that finds nothing says. */
	void *fn = (void *)&fn;
	CUdriverProcAddressQueryResult st = (CUdriverProcAddressQueryResult)-1;
	CUresult rc = get_proc("cuNoSuchFunction", &fn, 13000, 0, &st);
	say("R proc cuNoSuchFunction 13000 0 %d %d %s", (int)rc, (int)st, fn ? "non-null" : "null");
	fn = (void *)&fn;
	rc = get_proc("cuMemAllocAsync", &fn, 11000, 0, &st);
	say("R proc cuMemAllocAsync 11000 0 %d %d %s", (int)rc, (int)st, fn ? "non-null" : "null");
	/* Not an R line: a probe may hand out one wrapper per entry point or not. */
	say("S ptsz-differs %s",
	    (void *)p_cuMemAllocAsync != (void *)p_cuMemAllocAsync_ptsz ? "yes" : "no");
}

static void devices(void)
{
	int n = 0;
	check("cuDeviceGetCount", p_cuDeviceGetCount(&n));
	say("S devices %d", n);
	for (int i = 0; i < n; i++) {
		CUdevice d;
		char name[64];
		CUuuid u;
		size_t total = 0;
		check("cuDeviceGet", p_cuDeviceGet(&d, i));
		check("cuDeviceGetName", p_cuDeviceGetName(name, sizeof(name), d));
		check("cuDeviceGetUuid", p_cuDeviceGetUuid(&u, d));
		check("cuDeviceTotalMem", p_cuDeviceTotalMem(&total, d));
		const unsigned char *b = (const unsigned char *)u.bytes;
		say("S device %d "
		    "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x "
		    "%zu %s",
		    i, b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11],
		    b[12], b[13], b[14], b[15], total, name);
	}
}

static void plain(void)
{
	static const size_t sizes[] = {4096, 3 << 20};
	CUdeviceptr p[2];
	CUresult rc;
	for (int i = 0; i < 2; i++) {
		p[i] = SENTINEL;
		rc = p_cuMemAlloc(&p[i], sizes[i]);
		p[i] = got("cuMemAlloc_v2", rc, p[i], sizes[i], "cuda:0", "");
	}
	if (p[0]) {
		unsigned char in[256], out[256];
		for (int i = 0; i < 256; i++)
			in[i] = (unsigned char)i;
		memset(out, 0, sizeof(out));
		check("cuMemcpyHtoD", p_cuMemcpyHtoD(p[0], in, sizeof(in)));
		check("cuMemcpyDtoH", p_cuMemcpyDtoH(out, p[0], sizeof(out)));
		say("R copy %s", memcmp(in, out, sizeof(in)) ? "wrong" : "ok");
	}

	/* v1: 32-bit pointers, which a real driver may refuse to hand out. */
	CUdeviceptr_v1 v1 = (CUdeviceptr_v1)SENTINEL;
	rc = p_cuMemAlloc_v1(&v1, 8192);
	say("R cuMemAlloc(v1) %d", (int)rc);
	CUdeviceptr v1p = 0;
	if (rc == CUDA_SUCCESS)
		v1p = got("cuMemAlloc", rc, v1, 8192, "cuda:0", "");

	size_t pitch = 0;
	CUdeviceptr pp = SENTINEL;
	rc = p_cuMemAllocPitch(&pp, &pitch, 1000, 8, 4);
	char extra[64];
	snprintf(extra, sizeof(extra), "pitch=%zu width=1000 height=8", pitch);
	pp = got("cuMemAllocPitch_v2", rc, pp, pitch * 8, "cuda:0", extra);

	CUdeviceptr m = SENTINEL;
	rc = p_cuMemAllocManaged(&m, 16384, CU_MEM_ATTACH_GLOBAL);
	m = got("cuMemAllocManaged", rc, m, 16384, "cuda:0", "managed");

	if (m) {
		say_free("cuMemFree_v2", m, 16384, "cuda:0", "managed");
		check("cuMemFree_v2", p_cuMemFree(m));
	}
	if (pp) {
		say_free("cuMemFree_v2", pp, pitch * 8, "cuda:0", extra);
		check("cuMemFree_v2", p_cuMemFree(pp));
	}
	if (v1p) {
		say_free("cuMemFree", v1p, 8192, "cuda:0", "");
		check("cuMemFree", p_cuMemFree_v1(v1));
	}
	for (int i = 2; i-- > 0;) {
		if (!p[i])
			continue;
		say_free("cuMemFree_v2", p[i], sizes[i], "cuda:0", "");
		check("cuMemFree_v2", p_cuMemFree(p[i]));
	}
	check("cuMemFree_v2(0)", p_cuMemFree(0));
	say("R cuMemFree_v2(0) 0");
}

static void host(void)
{
	void *h = (void *)(uintptr_t)SENTINEL, *h2 = (void *)(uintptr_t)SENTINEL;
	CUresult rc = p_cuMemAllocHost(&h, 4096);
	got("cuMemAllocHost_v2", rc, (CUdeviceptr)(uintptr_t)h, 4096, "cpu", "pinned");
	rc = p_cuMemHostAlloc(&h2, 8192, CU_MEMHOSTALLOC_PORTABLE);
	got("cuMemHostAlloc", rc, (CUdeviceptr)(uintptr_t)h2, 8192, "cpu", "pinned");
	if (h2 != (void *)(uintptr_t)SENTINEL) {
		memset(h2, 1, 8192);
		say_free("cuMemFreeHost", (CUdeviceptr)(uintptr_t)h2, 8192, "cpu", "pinned");
		check("cuMemFreeHost", p_cuMemFreeHost(h2));
	}
	if (h != (void *)(uintptr_t)SENTINEL) {
		memset(h, 1, 4096);
		say_free("cuMemFreeHost", (CUdeviceptr)(uintptr_t)h, 4096, "cpu", "pinned");
		check("cuMemFreeHost", p_cuMemFreeHost(h));
	}
}

static void async(void)
{
	CUdeviceptr a = SENTINEL, b = SENTINEL, c = SENTINEL;
	CUresult rc = p_cuMemAllocAsync(&a, 65536, NULL);
	a = got("cuMemAllocAsync", rc, a, 65536, "cuda:0", "");
	rc = p_cuMemAllocAsync_ptsz(&b, 65536, CU_STREAM_PER_THREAD);
	b = got("cuMemAllocAsync_ptsz", rc, b, 65536, "cuda:0", "");
	CUmemoryPool pool;
	check("cuDeviceGetDefaultMemPool", p_cuDeviceGetDefaultMemPool(&pool, 0));
	rc = p_cuMemAllocFromPoolAsync(&c, 32768, pool, NULL);
	c = got("cuMemAllocFromPoolAsync", rc, c, 32768, "cuda:0", "");
	if (c) {
		say_free("cuMemFreeAsync", c, 32768, "cuda:0", "");
		check("cuMemFreeAsync", p_cuMemFreeAsync(c, NULL));
	}
	if (b) {
		say_free("cuMemFreeAsync_ptsz", b, 65536, "cuda:0", "");
		check("cuMemFreeAsync_ptsz", p_cuMemFreeAsync_ptsz(b, CU_STREAM_PER_THREAD));
	}
	if (a) {
		say_free("cuMemFreeAsync", a, 65536, "cuda:0", "");
		check("cuMemFreeAsync", p_cuMemFreeAsync(a, NULL));
	}
}

/* One cuMemAlloc_v2 and its cuMemFree_v2, through whichever pointers the caller resolved. */
static void alloc_then_free(PFN(cuMemAlloc_v2) alloc, PFN(cuMemFree_v2) release, size_t bytes,
			    const char *at)
{
	CUdeviceptr p = SENTINEL;
	CUresult rc = alloc(&p, bytes);
	p = got("cuMemAlloc_v2", rc, p, bytes, at, "");
	if (p) {
		say_free("cuMemFree_v2", p, bytes, at, "");
		check("cuMemFree_v2", release(p));
	}
}

/* A versioned name straight from dlsym, as XLA's trampolines do. */
static void direct(void *lib)
{
	PFN(cuMemAlloc_v2) alloc = (PFN(cuMemAlloc_v2))dlsym(lib, "cuMemAlloc_v2");
	PFN(cuMemFree_v2) release = (PFN(cuMemFree_v2))dlsym(lib, "cuMemFree_v2");
	say("R dlsym cuMemAlloc_v2 %s cuMemFree_v2 %s", alloc ? "found" : "missing",
	    release ? "found" : "missing");
	if (!alloc || !release) {
		fail("dlsym cuMemAlloc_v2");
		return;
	}
	alloc_then_free(alloc, release, 12345, "cuda:0");
}

static void info_and_oom(void)
{
	size_t f0 = 0, t0 = 0, f1 = 0, t1 = 0, t2 = 0;
	check("cuMemGetInfo_v2", p_cuMemGetInfo(&f0, &t0));
	CUdeviceptr p = SENTINEL;
	const size_t n = 16 << 20;
	CUresult rc = p_cuMemAlloc(&p, n);
	p = got("cuMemAlloc_v2", rc, p, n, "cuda:0", "");
	check("cuMemGetInfo_v2", p_cuMemGetInfo(&f1, &t1));
	/* OptiX asks for the total alone. */
	rc = p_cuMemGetInfo(NULL, &t2);
	say("R cuMemGetInfo_v2(NULL,&total) %d total-same=%s", (int)rc,
	    t0 == t2 && t1 == t0 ? "yes" : "no");
	say("S free_before %zu", f0);
	say("S free_after %zu", f1);
	say("S total %zu", t0);
	if (p) {
		say("R cuMemGetInfo_v2 dropped>=16MiB=%s", f0 >= f1 + n ? "yes" : "no");
		say_free("cuMemFree_v2", p, n, "cuda:0", "");
		check("cuMemFree_v2", p_cuMemFree(p));
	}

	const size_t huge = (size_t)1 << 50;
	p = SENTINEL;
	rc = p_cuMemAlloc(&p, huge);
	say("R oom cuMemAlloc_v2 %zu %d %s", huge, (int)rc,
	    p == SENTINEL ? "untouched" : "clobbered");
	if (rc == CUDA_SUCCESS) {
		fail("a 1 PiB cuMemAlloc succeeded");
		p_cuMemFree(p);
	} else {
		got("cuMemAlloc_v2", rc, p, huge, "cuda:0", "");
	}
}

/* Virtual memory management: one handle mapped at two addresses. */
static void vmm(void)
{
	CUmemAllocationProp prop;
	memset(&prop, 0, sizeof(prop));
	prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
	prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	prop.location.id = 0;
	size_t gran = 0;
	check("cuMemGetAllocationGranularity",
	      p_cuMemGetAllocationGranularity(&gran, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
	say("S granularity %zu", gran);
	if (!gran)
		return;
	char hb[32], pb[32];
	CUmemGenericAllocationHandle h = SENTINEL;
	CUresult rc = p_cuMemCreate(&h, gran, &prop, 0);
	if (rc != CUDA_SUCCESS) {
		say("E cuMemCreate %zu %d %s", gran, (int)rc,
		    h == SENTINEL ? "untouched" : "clobbered");
		if (rc != CUDA_ERROR_OUT_OF_MEMORY || h != SENTINEL)
			fail("cuMemCreate: %d", (int)rc);
		return;
	}
	say("V create %s %zu cuda:0", hex(h, hb), gran);
	CUdeviceptr va = 0;
	check("cuMemAddressReserve", p_cuMemAddressReserve(&va, 4 * gran, 0, 0, 0));
	say("V reserve %s %zu", hex(va, pb), 4 * gran);
	for (int i = 0; i < 2; i++) {
		check("cuMemMap", p_cuMemMap(va + i * gran, gran, 0, h, 0));
		say("V map %s %zu %s 0", hex(va + i * gran, pb), gran, hex(h, hb));
	}
	CUmemAccessDesc access;
	memset(&access, 0, sizeof(access));
	access.location = prop.location;
	access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
	check("cuMemSetAccess", p_cuMemSetAccess(va, 2 * gran, &access, 1));
	unsigned char in[64], out[64];
	memset(in, 0xa5, sizeof(in));
	memset(out, 0, sizeof(out));
	check("cuMemcpyHtoD", p_cuMemcpyHtoD(va, in, sizeof(in)));
	check("cuMemcpyDtoH", p_cuMemcpyDtoH(out, va + gran, sizeof(out)));
	say("R vmm alias %s", memcmp(in, out, sizeof(in)) ? "wrong" : "ok");

	size_t f_mapped = 0, f_released = 0, f_half = 0, f_unmapped = 0;
	p_cuMemGetInfo(&f_mapped, NULL);
	/* Released while mapped: the memory stays until the last unmap. */
	check("cuMemRelease", p_cuMemRelease(h));
	say("V release %s", hex(h, hb));
	p_cuMemGetInfo(&f_released, NULL);
	check("cuMemUnmap", p_cuMemUnmap(va, gran));
	say("V unmap %s %zu", hex(va, pb), gran);
	p_cuMemGetInfo(&f_half, NULL);
	check("cuMemUnmap", p_cuMemUnmap(va + gran, gran));
	say("V unmap %s %zu", hex(va + gran, pb), gran);
	p_cuMemGetInfo(&f_unmapped, NULL);
	check("cuMemAddressFree", p_cuMemAddressFree(va, 4 * gran));
	say("V free-va %s %zu", hex(va, pb), 4 * gran);
	say("S vmm free mapped=%zu released=%zu half-unmapped=%zu unmapped=%zu", f_mapped,
	    f_released, f_half, f_unmapped);
}

static void device1(void)
{
	int n = 0;
	p_cuDeviceGetCount(&n);
	if (n < 2) {
		say("S device1 skipped");
		return;
	}
	CUcontext ctx;
	check("cuCtxCreate_v2", p_cuCtxCreate(&ctx, 0, 1));
	CUdevice d = -1;
	check("cuCtxGetDevice", p_cuCtxGetDevice(&d));
	say("R device1 cuCtxGetDevice %d", (int)d);
	alloc_then_free(p_cuMemAlloc, p_cuMemFree, 4096, "cuda:1");
	check("cuCtxDestroy_v2", p_cuCtxDestroy(ctx));
}

int main(int argc, char **argv)
{
	(void)argc;
	prog_init(argv[0]);
	void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		say("R no libcuda.so.1");
		return 1;
	}
	PFN(cuGetProcAddress) gpa1 = (PFN(cuGetProcAddress))dlsym(lib, "cuGetProcAddress");
	if (!gpa1) {
		fail("dlsym cuGetProcAddress");
		return 1;
	}
	void *fn = NULL;
	CUresult rc = gpa1("cuGetProcAddress", &fn, 12000, 0);
	say("R proc-v1 cuGetProcAddress 12000 0 %d", (int)rc);
	if (rc != CUDA_SUCCESS || !fn) {
		fail("cuGetProcAddress v2");
		return 1;
	}
	memcpy(&get_proc, &fn, sizeof(fn));
	resolve_all();
	if (prog_failed)
		return 1;

	check("cuInit", p_cuInit(0));
	pthread_t t;
	if (pthread_create(&t, NULL, no_context_thread, NULL) == 0)
		pthread_join(t, NULL);
	devices();

	CUcontext primary;
	check("cuDevicePrimaryCtxRetain", p_cuDevicePrimaryCtxRetain(&primary, 0));
	check("cuCtxSetCurrent", p_cuCtxSetCurrent(primary));
	CUdevice d = -1;
	check("cuCtxGetDevice", p_cuCtxGetDevice(&d));
	say("R cuCtxGetDevice %d", (int)d);

	plain();
	host();
	async();
	direct(lib);
	info_and_oom();
	vmm();
	device1();

	check("cuCtxSetCurrent", p_cuCtxSetCurrent(NULL));
	check("cuDevicePrimaryCtxRelease", p_cuDevicePrimaryCtxRelease(0));
	say("R done %s", prog_failed ? "with failures" : "ok");
	return prog_failed;
}

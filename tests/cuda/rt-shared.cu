/* SPDX-License-Identifier: MIT */
/*
 * CUDA runtime allocations of every kind, for checking what cgprobe records
 * of a program linked with the shared runtime (libcudart.so.13). Built four
 * ways by tests/cuda/build.sh: by nvcc with `-cudart shared` (rt-shared),
 * the same with `-default-stream per-thread` (rt-shared-ptsz: the
 * stream-ordered calls become cudaMallocAsync_ptsz & co), and, so the suite
 * runs where nvcc is missing, by gcc as C against fake-cudart-api.h
 * (rt-shared-gcc, rt-shared-gcc-ptsz). The kernel is in the nvcc builds only.
 *
 * Usage: rt-shared [SECTION...]; no section runs all of them in this order:
 *   null sync pitch managed host async pool info oom device1 kernel
 * Output: cuda-prog.h's lines; OP is the symbol called, so the per-thread
 * builds print cudaMallocAsync_ptsz. Also meant to run on a GPU with the real
 * runtime: the checks that make it exit 1 hold there too.
 */
#ifdef __CUDACC__
#include <cuda_runtime.h>
#else
#include "fake-cudart-api.h"
#endif

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cuda-prog.h"

/* The name a call compiles to: cudaMallocAsync_ptsz in a per-thread build. */
#define SYM(f) SYM_(f)
#define SYM_(f) #f

/* What an output variable holds before the call: a failed call must leave it. */
#define SENTINEL ((void *)(uintptr_t)0x5e17)

static int device;
static char where[16] = "cuda:0";

static void set_where(void)
{
	if (cudaGetDevice(&device) != cudaSuccess)
		fail("cudaGetDevice");
	snprintf(where, sizeof(where), "cuda:%d", device);
}

/*
 * The outcome of an allocation call: an A line and the block, or an E line
 * and NULL when the memory ran out; anything else is a failure.
 */
static void *got(const char *op, cudaError_t e, void *p, size_t bytes, const char *at,
                 const char *extra)
{
	if (e == cudaSuccess) {
		if (p == SENTINEL || (!p && bytes))
			fail("%s returned success and no block", op);
		if (p)
			say("A %s %p %zu %s%s%s", op, p, bytes, at, extra[0] ? " " : "", extra);
		return p == SENTINEL ? NULL : p;
	}
	say("E %s %zu %d %s", op, bytes, (int)e, p == SENTINEL ? "untouched" : "clobbered");
	/* Whether the output was left alone is reported, not judged: the fakes leave it. */
	if (e != cudaErrorMemoryAllocation)
		fail("%s: error %d (%s)", op, (int)e, cudaGetErrorName(e));
	cudaGetLastError(); /* an expected failure: clear it */
	return NULL;
}

/* An F line, then the call; the line comes first as the probe records the free first. */
static void gone(const char *op, cudaError_t (*fn)(void *), void *p, size_t bytes, const char *at,
                 const char *extra)
{
	if (!p)
		return;
	say("F %s %p %zu %s%s%s", op, p, bytes, at, extra[0] ? " " : "", extra);
	cudaError_t e = fn(p);
	if (e != cudaSuccess)
		fail("%s(%p): error %d", op, p, (int)e);
}

static cudaError_t free_device(void *p)
{
	return cudaFree(p);
}

static cudaError_t free_host(void *p)
{
	return cudaFreeHost(p);
}

static void section_null(void)
{
	cudaError_t e = cudaFree(0);
	say("R cudaFree(0) %d", (int)e);
	e = cudaFree(NULL);
	say("R cudaFree(NULL) %d", (int)e);
	e = cudaFreeHost(NULL);
	say("R cudaFreeHost(NULL) %d", (int)e);
	void *p = SENTINEL;
	e = cudaMalloc(&p, 0);
	say("R cudaMalloc(0) %d %s", (int)e,
	    p ? (p == SENTINEL ? "untouched" : "non-null") : "null");
}

static void section_sync(void)
{
	static const size_t sizes[] = {1000, 1 << 20, 64 << 20};
	void *p[3];
	for (int i = 0; i < 3; i++) {
		p[i] = SENTINEL;
		cudaError_t e = cudaMalloc(&p[i], sizes[i]);
		p[i] = got(SYM(cudaMalloc), e, p[i], sizes[i], where, "");
	}
	if (p[0]) {
		unsigned char back[1000];
		memset(back, 0, sizeof(back));
		cudaError_t e1 = cudaMemset(p[0], 0x5a, 1000);
		cudaError_t e2 = cudaMemcpy(back, p[0], 1000, cudaMemcpyDeviceToHost);
		int same = 1;
		for (size_t i = 0; i < sizeof(back); i++)
			same &= back[i] == 0x5a;
		say("R memset+memcpy %d %d %s", (int)e1, (int)e2, same ? "ok" : "wrong");
		if (e1 || e2 || !same)
			fail("memset/memcpy");
	}
	for (int i = 3; i-- > 0;)
		gone("cudaFree", free_device, p[i], sizes[i], where, "");
}

static void section_pitch(void)
{
	void *p = SENTINEL;
	size_t pitch = 0;
	char extra[96];
	cudaError_t e = cudaMallocPitch(&p, &pitch, 1000, 10);
	snprintf(extra, sizeof(extra), "pitch=%zu width=1000 height=10", pitch);
	p = got("cudaMallocPitch", e, p, pitch * 10, where, extra);
	gone("cudaFree", free_device, p, pitch * 10, where, extra);

	struct cudaPitchedPtr pp;
	memset(&pp, 0, sizeof(pp));
	pp.ptr = SENTINEL;
	struct cudaExtent ext;
	ext.width = 100;
	ext.height = 4;
	ext.depth = 3;
	e = cudaMalloc3D(&pp, ext);
	snprintf(extra, sizeof(extra), "pitch=%zu width=100 height=4 depth=3", pp.pitch);
	p = got("cudaMalloc3D", e, pp.ptr, pp.pitch * 4 * 3, where, extra);
	gone("cudaFree", free_device, p, pp.pitch * 4 * 3, where, extra);
}

static void section_managed(void)
{
	void *p = SENTINEL;
	cudaError_t e = cudaMallocManaged(&p, 12288, cudaMemAttachGlobal);
	p = got("cudaMallocManaged", e, p, 12288, where, "managed");
	if (p) {
		if (cudaDeviceSynchronize() != cudaSuccess)
			fail("cudaDeviceSynchronize");
		memset(p, 7, 12288);
		say("R managed host write ok");
	}
	gone("cudaFree", free_device, p, 12288, where, "managed");
}

static void section_host(void)
{
	void *h = SENTINEL, *h2 = SENTINEL;
	cudaError_t e = cudaMallocHost(&h, 8192);
	h = got("cudaMallocHost", e, h, 8192, "cpu", "pinned");
	e = cudaHostAlloc(&h2, 12288, cudaHostAllocPortable);
	h2 = got("cudaHostAlloc", e, h2, 12288, "cpu", "pinned");
	if (h)
		memset(h, 1, 8192);
	if (h2)
		memset(h2, 2, 12288);
	gone("cudaFreeHost", free_host, h2, 12288, "cpu", "pinned");
	gone("cudaFreeHost", free_host, h, 8192, "cpu", "pinned");
}

static void section_async(void)
{
	cudaStream_t s;
	if (cudaStreamCreate(&s) != cudaSuccess) {
		fail("cudaStreamCreate");
		return;
	}
	void *p = SENTINEL;
	cudaError_t e = cudaMallocAsync(&p, 65536, s);
	p = got(SYM(cudaMallocAsync), e, p, 65536, where, "");
	if (p) {
		if (cudaMemsetAsync(p, 0, 65536, s) != cudaSuccess)
			fail("cudaMemsetAsync");
		say("F %s %p %d %s", SYM(cudaFreeAsync), p, 65536, where);
		e = cudaFreeAsync(p, s);
		if (e != cudaSuccess)
			fail("cudaFreeAsync: %d", (int)e);
	}
	if (cudaStreamSynchronize(s) != cudaSuccess)
		fail("cudaStreamSynchronize");
	if (cudaStreamDestroy(s) != cudaSuccess)
		fail("cudaStreamDestroy");
}

static void section_pool(void)
{
	cudaMemPool_t pool;
	cudaError_t e = cudaDeviceGetDefaultMemPool(&pool, device);
	if (e != cudaSuccess) {
		fail("cudaDeviceGetDefaultMemPool: %d", (int)e);
		return;
	}
	void *p = SENTINEL;
	e = cudaMallocFromPoolAsync(&p, 131072, pool, 0);
	p = got(SYM(cudaMallocFromPoolAsync), e, p, 131072, where, "");
	if (p) {
		say("F %s %p %d %s", SYM(cudaFreeAsync), p, 131072, where);
		e = cudaFreeAsync(p, 0);
		if (e != cudaSuccess)
			fail("cudaFreeAsync: %d", (int)e);
	}
	if (cudaDeviceSynchronize() != cudaSuccess)
		fail("cudaDeviceSynchronize");
}

static void section_info(void)
{
	size_t f0 = 0, t0 = 0, f1 = 0, t1 = 0;
	const size_t n = 32 << 20;
	cudaError_t e = cudaMemGetInfo(&f0, &t0);
	void *p = SENTINEL;
	cudaError_t ea = cudaMalloc(&p, n);
	p = got(SYM(cudaMalloc), ea, p, n, where, "");
	cudaError_t e1 = cudaMemGetInfo(&f1, &t1);
	say("S free_before %zu", f0);
	say("S free_after %zu", f1);
	say("S total %zu", t0);
	say("R cudaMemGetInfo %d %d total-same=%s", (int)e, (int)e1, t0 == t1 ? "yes" : "no");
	if (p)
		say("R cudaMemGetInfo dropped>=32MiB=%s", f0 >= f1 + n ? "yes" : "no");
	gone("cudaFree", free_device, p, n, where, "");
}

static void section_oom(void)
{
	/* More than any GPU has: fails on a real one and on the fake alike. */
	const size_t n = (size_t)1 << 50;
	void *p = SENTINEL;
	cudaError_t e = cudaMalloc(&p, n);
	say("R oom %s %zu %d %s", SYM(cudaMalloc), n, (int)e,
	    p == SENTINEL ? "untouched" : "clobbered");
	if (e == cudaSuccess) {
		fail("a 1 PiB cudaMalloc succeeded");
		cudaFree(p);
		return;
	}
	say("E %s %zu %d %s", SYM(cudaMalloc), n, (int)e,
	    p == SENTINEL ? "untouched" : "clobbered");
	if (e != cudaErrorMemoryAllocation)
		fail("oom: error %d", (int)e);
	cudaError_t last = cudaGetLastError(), again = cudaGetLastError();
	say("R cudaGetLastError %d then %d", (int)last, (int)again);
}

static void section_device1(void)
{
	int n = 0;
	if (cudaGetDeviceCount(&n) != cudaSuccess || n < 2) {
		say("S device1 skipped");
		return;
	}
	if (cudaSetDevice(1) != cudaSuccess) {
		fail("cudaSetDevice(1)");
		return;
	}
	set_where();
	void *p = SENTINEL;
	cudaError_t e = cudaMalloc(&p, 4096);
	p = got(SYM(cudaMalloc), e, p, 4096, where, "");
	gone("cudaFree", free_device, p, 4096, where, "");
	if (cudaSetDevice(0) != cudaSuccess)
		fail("cudaSetDevice(0)");
	set_where();
}

#ifdef __CUDACC__
__global__ void fill(int *p, int v)
{
	p[threadIdx.x] = v;
}
#endif

static void section_kernel(void)
{
#ifdef __CUDACC__
	void *p = SENTINEL;
	cudaError_t e = cudaMalloc(&p, 4096);
	p = got(SYM(cudaMalloc), e, p, 4096, where, "");
	if (p) {
		fill<<<1, 32>>>((int *)p, 3);
		cudaError_t launch = cudaGetLastError();
		cudaError_t sync = cudaDeviceSynchronize();
		say("R kernel %d %d", (int)launch, (int)sync);
		if (launch || sync)
			fail("kernel");
	}
	gone("cudaFree", free_device, p, 4096, where, "");
#else
	say("S kernel skipped");
#endif
}

static const struct {
	const char *name;
	void (*run)(void);
} sections[] = {
    {"null", section_null},       {"sync", section_sync},     {"pitch", section_pitch},
    {"managed", section_managed}, {"host", section_host},     {"async", section_async},
    {"pool", section_pool},       {"info", section_info},     {"oom", section_oom},
    {"device1", section_device1}, {"kernel", section_kernel},
};

int main(int argc, char **argv)
{
	prog_init(argv[0]);
	const size_t n_sections = sizeof(sections) / sizeof(sections[0]);
	set_where();
	if (argc < 2) {
		for (size_t i = 0; i < n_sections; i++)
			sections[i].run();
	}
	for (int a = 1; a < argc; a++) {
		size_t i;
		for (i = 0; i < n_sections && strcmp(argv[a], sections[i].name); i++)
			;
		if (i == n_sections) {
			fprintf(stderr, "%s: no section %s\n", prog_name, argv[a]);
			return 2;
		}
		sections[i].run();
	}
	say("R done %s", prog_failed ? "with failures" : "ok");
	return prog_failed;
}

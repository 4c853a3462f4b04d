/* SPDX-License-Identifier: MIT */
/*
 * libuses12.so (see uses12.h): built against fake-cudart-api.h and linked
 * with -l:libcudart.so.12, so its cuda* references are versioned
 * @libcudart.so.12 and bind to the second copy of the fake runtime, also
 * when the program that loads it links libcudart.so.13.
 */
#include "uses12.h"

#include "fake-cudart-api.h"

#include "cuda-prog.h"

#define EXPORT __attribute__((visibility("default")))
#define SENTINEL ((void *)(uintptr_t)0x5e17)

static int check(const char *what, cudaError_t e)
{
	if (e != cudaSuccess)
		fail("lib %s: %d", what, (int)e);
	return e != cudaSuccess;
}

EXPORT int uses12_alloc(const char *prog, int device, size_t bytes, void **out)
{
	prog_init(prog);
	int version = 0, dev = -1;
	if (check("cudaRuntimeGetVersion", cudaRuntimeGetVersion(&version)) ||
	    check("cudaSetDevice", cudaSetDevice(device)) ||
	    check("cudaGetDevice", cudaGetDevice(&dev)))
		return 1;
	say("R lib runtime %d device %d", version, dev);

	void *p = SENTINEL;
	if (check("cudaMalloc", cudaMalloc(&p, bytes)))
		return 1;
	say("A cudaMalloc %p %zu cuda:%d", p, bytes, dev);
	say("R lib block in %s", runtime_copy_of(p));
	*out = p;

	size_t f = 0, t = 0;
	if (check("cudaMemGetInfo", cudaMemGetInfo(&f, &t)))
		return 1;
	say("S meminfo cuda:%d %zu %zu", dev, f, t);
	say("R lib used %zu", t - f);

	void *q = SENTINEL;
	if (check("cudaMallocAsync", cudaMallocAsync(&q, 65536, NULL)))
		return 1;
	say("A cudaMallocAsync %p 65536 cuda:%d", q, dev);
	say("R lib async block in %s", runtime_copy_of(q));
	say("F cudaFreeAsync %p 65536 cuda:%d", q, dev);
	return check("cudaFreeAsync", cudaFreeAsync(q, NULL));
}

EXPORT int uses12_free(void *p, size_t bytes, int device)
{
	say("F cudaFree %p %zu cuda:%d", p, bytes, device);
	return check("cudaFree", cudaFree(p));
}

EXPORT void uses12_free_foreign(void *p)
{
	cudaError_t e = cudaFree(p);
	cudaError_t last = cudaGetLastError();
	say("R lib cudaFree(foreign) %d then %d", (int)e, (int)last);
}

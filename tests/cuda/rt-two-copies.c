/* SPDX-License-Identifier: MIT */
/*
 * Two copies of the runtime in one process: this program links
 * libcudart.so.13 and calls cudaMalloc itself, and calls into libuses12.so,
 * which links libcudart.so.12 (uses12.h). Each call must land in the copy its
 * caller links against: the addresses (fake-cudart.c's ranges), each copy's
 * cudaMemGetInfo and its refusal to free the other's block show which did.
 * Built twice by build.sh: rt-two-copies links libuses12.so, and
 * rt-two-copies-dlopen (USES12_DLOPEN) dlopens it (RTLD_LOCAL).
 *
 * The program's copy stays on device 0 while the library's moves to device
 * 1: each copy's current device is its own.
 *
 * Output: cuda-prog.h's lines; exits 1 when a call failed.
 */
#include "fake-cudart-api.h"

#ifdef USES12_DLOPEN
#include <dlfcn.h>
#endif
#include <stdint.h>

#include "cuda-prog.h"
#include "uses12.h"

#define SENTINEL ((void *)(uintptr_t)0x5e17)

int main(int argc, char **argv)
{
	(void)argc;
	prog_init(argv[0]);
#ifdef USES12_DLOPEN
	void *lib = dlopen("libuses12.so", RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		fail("dlopen libuses12.so: %s", dlerror());
		return 1;
	}
	uses12_alloc_fn lib_alloc = (uses12_alloc_fn)dlsym(lib, "uses12_alloc");
	uses12_free_fn lib_free = (uses12_free_fn)dlsym(lib, "uses12_free");
	uses12_free_foreign_fn lib_free_foreign =
	    (uses12_free_foreign_fn)dlsym(lib, "uses12_free_foreign");
	if (!lib_alloc || !lib_free || !lib_free_foreign) {
		fail("dlsym uses12_*");
		return 1;
	}
	say("R libuses12.so dlopen'ed");
#else
	uses12_alloc_fn lib_alloc = uses12_alloc;
	uses12_free_fn lib_free = uses12_free;
	uses12_free_foreign_fn lib_free_foreign = uses12_free_foreign;
	say("R libuses12.so linked");
#endif
	int version = 0, dev = -1;
	if (cudaRuntimeGetVersion(&version) || cudaGetDevice(&dev))
		fail("cudaRuntimeGetVersion/cudaGetDevice");
	say("R main runtime %d device %d", version, dev);

	void *a = SENTINEL;
	cudaError_t e = cudaMalloc(&a, 4096);
	if (e) {
		fail("cudaMalloc: %d", (int)e);
		return 1;
	}
	say("A cudaMalloc %p 4096 cuda:%d", a, dev);
	say("R main block in %s", runtime_copy_of(a));

	void *b = NULL;
	if (lib_alloc(prog_name, 1, 8192, &b) || !b) {
		fail("uses12_alloc");
		return 1;
	}

	/* Still device 0 here: the library moved its own copy's device only. */
	int now = -1;
	size_t f = 0, t = 0;
	if (cudaGetDevice(&now) || cudaMemGetInfo(&f, &t))
		fail("cudaGetDevice/cudaMemGetInfo");
	say("S meminfo cuda:%d %zu %zu", now, f, t);
	say("R main device %d used %zu", now, t - f);

	void *q = SENTINEL;
	e = cudaMallocAsync(&q, 32768, NULL);
	if (e) {
		fail("cudaMallocAsync: %d", (int)e);
		return 1;
	}
	say("A cudaMallocAsync %p 32768 cuda:%d", q, dev);
	say("R main async block in %s", runtime_copy_of(q));
	say("F cudaFreeAsync %p 32768 cuda:%d", q, dev);
	if (cudaFreeAsync(q, NULL))
		fail("cudaFreeAsync");

	/* Neither copy frees the other's block. */
	lib_free_foreign(a);
	e = cudaFree(b);
	cudaError_t last = cudaGetLastError();
	say("R main cudaFree(foreign) %d then %d", (int)e, (int)last);

	if (lib_free(b, 8192, 1))
		fail("uses12_free");
	say("F cudaFree %p 4096 cuda:%d", a, dev);
	if (cudaFree(a))
		fail("cudaFree");
	say("R done %s", prog_failed ? "with failures" : "ok");
	return prog_failed;
}

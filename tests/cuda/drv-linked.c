/* SPDX-License-Identifier: MIT */
/*
 * The CUDA driver called directly: linked with -lcuda, so the program
 * imports cuMemAlloc_v2 & co. by name and a preloaded definition binds
 * them. Built against the fake (tests/cuda/build.sh), run with
 * LD_LIBRARY_PATH pointing at it or at a real driver.
 *
 * Output: cuda-prog.h's lines.
 */
#include <string.h>

#include "fake-cuda.h"
#include "cuda-prog.h"

#define SENTINEL 0x5e17ull

static void check(const char *what, CUresult rc)
{
	if (rc != CUDA_SUCCESS)
		fail("%s: %d", what, (int)rc);
}

static CUdeviceptr alloc(size_t n)
{
	char buf[32];
	CUdeviceptr p = SENTINEL;
	CUresult rc = cuMemAlloc_v2(&p, n);
	if (rc == CUDA_SUCCESS) {
		say("A cuMemAlloc_v2 %s %zu cuda:0", hex(p, buf), n);
		return p;
	}
	say("E cuMemAlloc_v2 %zu %d %s", n, (int)rc, p == SENTINEL ? "untouched" : "clobbered");
	if (rc != CUDA_ERROR_OUT_OF_MEMORY || p != SENTINEL)
		fail("cuMemAlloc_v2(%zu): %d", n, (int)rc);
	return 0;
}

static void release(CUdeviceptr p, size_t n)
{
	char buf[32];
	if (!p)
		return;
	say("F cuMemFree_v2 %s %zu cuda:0", hex(p, buf), n);
	check("cuMemFree_v2", cuMemFree_v2(p));
}

int main(int argc, char **argv)
{
	(void)argc;
	prog_init(argv[0]);
	check("cuInit", cuInit(0));
	CUdevice dev;
	check("cuDeviceGet", cuDeviceGet(&dev, 0));
	CUcontext ctx;
	check("cuDevicePrimaryCtxRetain", cuDevicePrimaryCtxRetain(&ctx, dev));
	check("cuCtxSetCurrent", cuCtxSetCurrent(ctx));

	size_t f0 = 0, t0 = 0, f1 = 0, t1 = 0, t2 = 0;
	check("cuMemGetInfo_v2", cuMemGetInfo_v2(&f0, &t0));
	const size_t a_n = 1 << 20, b_n = 5000;
	CUdeviceptr a = alloc(a_n), b = alloc(b_n);
	check("cuMemGetInfo_v2", cuMemGetInfo_v2(&f1, &t1));
	CUresult rc = cuMemGetInfo_v2(NULL, &t2);
	say("R cuMemGetInfo_v2(NULL,&total) %d total-same=%s", (int)rc,
	    t0 == t1 && t1 == t2 ? "yes" : "no");
	if (a && b)
		say("R cuMemGetInfo_v2 dropped>=%zu=%s", a_n + b_n,
		    f0 >= f1 + a_n + b_n ? "yes" : "no");
	say("S free_before %zu", f0);
	say("S free_after %zu", f1);
	if (a) {
		CUresult e = cuMemsetD8_v2(a, 0x11, a_n);
		unsigned char back[16];
		memset(back, 0, sizeof(back));
		CUresult e2 = cuMemcpyDtoH_v2(back, a + a_n - sizeof(back), sizeof(back));
		say("R memset+copy %d %d %s", (int)e, (int)e2, back[15] == 0x11 ? "ok" : "wrong");
	}
	release(b, b_n);
	release(a, a_n);

	check("cuCtxSetCurrent", cuCtxSetCurrent(NULL));
	check("cuDevicePrimaryCtxRelease_v2", cuDevicePrimaryCtxRelease_v2(dev));
	say("R done %s", prog_failed ? "with failures" : "ok");
	return prog_failed;
}

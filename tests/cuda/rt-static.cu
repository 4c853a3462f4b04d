/* SPDX-License-Identifier: MIT */
/*
 * A program on nvcc's default, the static CUDA runtime: it imports no cuda*
 * symbol, dlopens libcuda.so.1 and reaches the driver through
 * cuGetProcAddress. On the fake driver the runtime cannot initialise (it
 * needs the driver's private export tables), so this program only has to
 * run unharmed under the probe: it prints the error it gets and exits 0.
 * On a GPU it allocates, and the driver-level allocation is what a probe
 * can see.
 *
 * Output: cuda-prog.h's lines; `R init ERR` is the same with and without
 * the probe, whatever ERR is.
 */
#include <cuda_runtime.h>

#include "cuda-prog.h"

int main(int argc, char **argv)
{
	(void)argc;
	prog_init(argv[0]);
	int count = -1;
	cudaError_t e = cudaGetDeviceCount(&count);
	say("R init %d %s", (int)e, cudaGetErrorName(e));
	say("S devices %d", count);
	void *p = NULL;
	const size_t n = 1 << 20;
	e = cudaMalloc(&p, n);
	say("R cudaMalloc %d %s", (int)e, cudaGetErrorName(e));
	if (e == cudaSuccess) {
		int dev = 0;
		cudaGetDevice(&dev);
		say("A cudaMalloc %p %zu cuda:%d", p, n, dev);
		say("F cudaFree %p %zu cuda:%d", p, n, dev);
		e = cudaFree(p);
		say("R cudaFree %d", (int)e);
	}
	say("R done ok");
	return 0;
}

/* SPDX-License-Identifier: MIT */
/*
 * One process of a two-process job on one GPU (tests/test-job-gpu.sh):
 * cudaMalloc's MIB MiB on device 0, creates MINE, waits until OTHER exists
 * (the other process made its allocation), holds a moment longer, frees.
 * Two of them started with each other's files hold their blocks at one
 * moment for certain, so the GPU's exact sum peaks at both sizes added.
 * No other device call allocates: the runtime's cudaMalloc and cudaFree
 * only. Linked with the fake runtime (-l:libcudart.so.13, tests/cuda/build.sh)
 * so a preloaded probe binds the calls, as with the runtime programs there.
 *
 *   gpu-hold MIB MINE OTHER
 *
 * Output: cuda-prog.h's lines (A and F of the block); exits 1 when a call
 * fails or OTHER does not appear within 30 s.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "../cuda/fake-cudart-api.h"
#include "../cuda/cuda-prog.h"

static void nap_ms(long ms)
{
	struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
	while (nanosleep(&t, &t) != 0 && errno == EINTR)
		;
}

int main(int argc, char **argv)
{
	prog_init(argv[0]);
	if (argc != 4) {
		say("R usage: gpu-hold MIB MINE OTHER");
		return 2;
	}
	size_t n = (size_t)strtoul(argv[1], NULL, 10) << 20;
	void *p = NULL;
	cudaError_t rc = cudaMalloc(&p, n);
	if (rc != cudaSuccess || !p) {
		fail("cudaMalloc(%zu): %d", n, (int)rc);
		return 1;
	}
	say("A cudaMalloc %p %zu cuda:0", p, n);
	int fd = open(argv[2], O_WRONLY | O_CREAT | O_EXCL, 0644);
	if (fd < 0) {
		fail("creating %s: %d", argv[2], errno);
		return 1;
	}
	close(fd);
	int waited = 0;
	while (access(argv[3], F_OK) != 0) {
		if (++waited > 3000) {
			fail("%s never appeared", argv[3]);
			return 1;
		}
		nap_ms(10);
	}
	/* Both blocks are live now; hold on a little so neither trace's
	 * times could be read as touching. */
	nap_ms(100);
	say("F cudaFree %p %zu cuda:0", p, n);
	rc = cudaFree(p);
	if (rc != cudaSuccess)
		fail("cudaFree: %d", (int)rc);
	return prog_failed;
}

/* SPDX-License-Identifier: MIT */
/*
 * The probe's live figures per device (include/cgprobe.h, cgprobe_memory_*)
 * on the fake runtime: blocks on cuda:0 and cuda:1 each count on their own
 * device only, exact at each call, with the peak since a mark per device;
 * the devices are listed as the trace names them. Prints "S peak N" (the
 * cuda:0 peak, which the trace's must be) and "R figures-cuda ok" and
 * exits 0, or says on stderr what differed and exits 1. Under the probe
 * only (tests/test-figures.c).
 */
#include "fake-cudart-api.h"

#define CGPROBE_OPTIONAL
#include <cgprobe.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#define PROG "figures-cuda"
#define SAY_NAME PROG
#include "../lib/prog-say.h"

static int failed;

static void check(int ok, int line, const char *what, unsigned long long a, unsigned long long b)
{
	if (!ok) {
		dprintf(2, "line %d: %s: %llu, %llu\n", line, what, a, b);
		failed = 1;
	}
}

static struct cgprobe_memory_figures now(const char *device)
{
	struct cgprobe_memory_figures f;
	memset(&f, 0, sizeof(f));
	int r = cgprobe_memory_now(device, &f, sizeof(f));
	check(r == 0, __LINE__, device, (unsigned long long)-r, 0);
	return f;
}

static void *dev_alloc(int device, size_t bytes)
{
	void *p = NULL;
	if (cudaSetDevice(device) != cudaSuccess || cudaMalloc(&p, bytes) != cudaSuccess) {
		dprintf(2, "cudaMalloc of %zu on %d failed\n", bytes, device);
		failed = 1;
	}
	return p;
}

int main(void)
{
	if (!cgprobe_memory_now) {
		dprintf(2, "no probe\n");
		return 1;
	}
	void *a = dev_alloc(0, 1 << 20);
	void *b = dev_alloc(0, 3 << 20);
	void *c = dev_alloc(1, 5 << 20);
	struct cgprobe_memory_figures host0 = now("cpu");
	cgprobe_memory_mark(NULL);
	struct cgprobe_memory_figures d0 = now("cuda:0"), d1 = now("cuda:1");
	check(d0.live_bytes == 4 << 20 && d0.live_count == 2, __LINE__, "cuda:0 live",
	      d0.live_bytes, d0.live_count);
	check(d1.live_bytes == 5 << 20 && d1.live_count == 1, __LINE__, "cuda:1 live",
	      d1.live_bytes, d1.live_count);
	check(d0.peak_bytes == d0.live_bytes && d0.mark_bytes == d0.live_bytes, __LINE__,
	      "cuda:0 at the mark", d0.peak_bytes, d0.mark_bytes);
	cudaSetDevice(0);
	cudaFree(b);
	void *e = dev_alloc(0, 6 << 20);
	cudaSetDevice(1);
	cudaFree(c);
	d0 = now("cuda:0");
	d1 = now("cuda:1");
	struct cgprobe_memory_figures host = now("cpu");
	check(d0.live_bytes == 7 << 20 && d0.peak_bytes == 7 << 20 &&
	          d0.peak_alloc_bytes == 6 << 20,
	      __LINE__, "cuda:0 after", d0.live_bytes, d0.peak_bytes);
	check(d1.live_bytes == 0 && d1.peak_bytes == 5 << 20 && d1.peak_alloc_bytes == 0, __LINE__,
	      "cuda:1 after", d1.live_bytes, d1.peak_bytes);
	/* Device memory is not the host's. */
	check(host.live_bytes < host0.live_bytes + (1 << 20), __LINE__, "cpu", host.live_bytes,
	      host0.live_bytes);
	char devices[256];
	int n = cgprobe_memory_devices(devices, sizeof(devices));
	check(n == 3 && strcmp(devices, "cpu,cuda:0,cuda:1") == 0, __LINE__, devices,
	      (unsigned long long)n, 0);
	say("S peak %llu", (unsigned long long)d0.peak_bytes);
	cudaSetDevice(0);
	cudaFree(a);
	cudaFree(e);
	if (!failed)
		say("R figures-cuda ok");
	return failed;
}

// SPDX-License-Identifier: MIT
//
// alloc.cu: CUDA runtime API allocations of known sizes, for scripts/gpu-check.sh.
//
// Built twice: with nvcc's default (static libcudart, which reaches the driver
// only through cuGetProcAddress) and with -cudart shared. Every device
// allocation below is alive at the peak, so a missed one moves the peak by
// more than 1%:
//
//   cudaMalloc 64 MiB + 256 MiB + 1 GiB, a kernel writes them;
//   cudaMallocManaged 32 MiB (left out of the figures when the device has no
//   managed memory), written on the device, read on the host;
//   cudaMallocAsync 128 MiB on a stream, written; cudaMemGetInfo at the peak;
//   cudaFreeAsync, then the rest freed; cudaMallocHost 16 MiB (pinned host
//   memory: recorded on "cpu", not in the device figures).
//
// The last line of stdout is
//   CGCHECK expected_peak_bytes=N expected_device_allocs=N expected_device_frees=N
// Exit status 0 on success, 1 on any CUDA error (printed on stderr).
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#define MiB (1024ull * 1024ull)

#define CK(call)                                                                            \
	do {                                                                                \
		cudaError_t e_ = (call);                                                    \
		if (e_ != cudaSuccess) {                                                    \
			fprintf(stderr, "alloc: %s failed: %s (%d) at line %d\n", #call,   \
				cudaGetErrorString(e_), (int)e_, __LINE__);                 \
			exit(1);                                                            \
		}                                                                           \
	} while (0)

__global__ void touch(unsigned char *p, size_t n, unsigned char v)
{
	size_t stride = (size_t)gridDim.x * blockDim.x;
	for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
		p[i] = v;
}

static unsigned long long live, peak;
static int allocs, frees;

static void counted_alloc(size_t bytes)
{
	live += bytes;
	allocs++;
	if (live > peak)
		peak = live;
}

static void counted_free(size_t bytes)
{
	live -= bytes;
	frees++;
}

static void fill(unsigned char *p, size_t n, unsigned char v, cudaStream_t s)
{
	touch<<<1024, 256, 0, s>>>(p, n, v);
	CK(cudaGetLastError());
}

static void expect_byte(const unsigned char *dev, size_t at, unsigned char v, const char *what)
{
	unsigned char got = 0;
	CK(cudaMemcpy(&got, dev + at, 1, cudaMemcpyDeviceToHost));
	if (got != v) {
		fprintf(stderr, "alloc: %s holds 0x%02x at %zu, expected 0x%02x\n", what, got, at, v);
		exit(1);
	}
}

int main(void)
{
	int dev = 0;
	CK(cudaFree(0)); // the usual way to create the context
	CK(cudaGetDevice(&dev));
	cudaDeviceProp prop;
	CK(cudaGetDeviceProperties(&prop, dev));
	printf("device %d: %s, %.1f GiB\n", dev, prop.name, prop.totalGlobalMem / (double)(1024 * MiB));

	// Three plain allocations, written by a kernel.
	const size_t sizes[3] = {64 * MiB, 256 * MiB, 1024 * MiB};
	unsigned char *buf[3];
	for (int i = 0; i < 3; i++) {
		CK(cudaMalloc((void **)&buf[i], sizes[i]));
		counted_alloc(sizes[i]);
		fill(buf[i], sizes[i], (unsigned char)(0x11 * (i + 1)), 0);
	}
	CK(cudaDeviceSynchronize());
	for (int i = 0; i < 3; i++)
		expect_byte(buf[i], sizes[i] - 1, (unsigned char)(0x11 * (i + 1)), "cudaMalloc buffer");
	printf("cudaMalloc: 64 MiB, 256 MiB, 1 GiB\n");

	// Managed memory, small, written on the device and read on the host.
	const size_t managed_size = 32 * MiB;
	unsigned char *managed = NULL;
	int has_managed = 0;
	CK(cudaDeviceGetAttribute(&has_managed, cudaDevAttrManagedMemory, dev));
	if (has_managed) {
		cudaError_t e = cudaMallocManaged((void **)&managed, managed_size, cudaMemAttachGlobal);
		if (e == cudaSuccess) {
			counted_alloc(managed_size);
			fill(managed, managed_size, 0x5a, 0);
			CK(cudaDeviceSynchronize());
			if (managed[managed_size - 1] != 0x5a) {
				fprintf(stderr, "alloc: managed memory not written\n");
				return 1;
			}
			printf("cudaMallocManaged: 32 MiB\n");
		} else {
			(void)cudaGetLastError();
			managed = NULL;
			printf("cudaMallocManaged: failed (%s), left out\n", cudaGetErrorString(e));
		}
	} else {
		printf("cudaMallocManaged: device has no managed memory, left out\n");
	}

	// Stream-ordered allocation, alive at the peak.
	cudaStream_t s;
	CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	const size_t async_size = 128 * MiB;
	unsigned char *async_buf = NULL;
	CK(cudaMallocAsync((void **)&async_buf, async_size, s));
	counted_alloc(async_size);
	fill(async_buf, async_size, 0x77, s);
	CK(cudaStreamSynchronize(s));
	expect_byte(async_buf, async_size - 1, 0x77, "cudaMallocAsync buffer");
	printf("cudaMallocAsync: 128 MiB\n");

	// The peak: a checkpoint.
	size_t free_b = 0, total_b = 0;
	CK(cudaMemGetInfo(&free_b, &total_b));
	printf("cudaMemGetInfo at the peak: free %zu, total %zu (used %zu by all processes)\n", free_b,
	       total_b, total_b - free_b);

	CK(cudaFreeAsync(async_buf, s));
	counted_free(async_size);
	CK(cudaStreamSynchronize(s));
	CK(cudaStreamDestroy(s));

	if (managed) {
		CK(cudaFree(managed));
		counted_free(managed_size);
	}

	// Pinned host memory: on "cpu" in the trace, not in the device figures.
	const size_t host_size = 16 * MiB;
	unsigned char *host = NULL;
	CK(cudaMallocHost((void **)&host, host_size));
	memset(host, 0x3c, host_size);
	CK(cudaMemcpy(buf[0], host, host_size, cudaMemcpyHostToDevice));
	expect_byte(buf[0], host_size - 1, 0x3c, "copy from pinned memory");
	CK(cudaFreeHost(host));
	printf("cudaMallocHost: 16 MiB (host)\n");

	CK(cudaFree(NULL)); // a no-op, never recorded
	for (int i = 2; i >= 0; i--) {
		CK(cudaFree(buf[i]));
		counted_free(sizes[i]);
	}
	CK(cudaDeviceSynchronize());

	if (live != 0) {
		fprintf(stderr, "alloc: bookkeeping error, %llu bytes left\n", live);
		return 1;
	}
	printf("CGCHECK expected_peak_bytes=%llu expected_device_allocs=%d expected_device_frees=%d\n",
	       peak, allocs, frees);
	return 0;
}

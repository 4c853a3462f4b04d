/* SPDX-License-Identifier: MIT */
/*
 * The live figures of include/cgprobe.h (cgprobe_memory_*), checked by the
 * program itself against what it allocated: live bytes and count exact at
 * each call, with no wait before it; the peak since a mark the exact
 * highest, with the allocation it is put down to (the largest that
 * raised it, until freed); a second mark starting the peak again;
 * another thread's block, made and freed before the call, in the peak;
 * devices and an unknown one; no Python site in a C program.
 * Prints the first peak ("S peak N", which the trace's peak must be) and
 * "R figures ok" and exits 0, or says on stderr what differed and exits 1.
 */
#define PROG "figures"
#define CGPROBE_OPTIONAL
#include <cgprobe.h>
#include <pthread.h>
#include <stdlib.h>

#include "prog.h"

static int failed;

#define CHECK(cond, ...)                                                                           \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			dprintf(2, "line %d: %s\n", __LINE__, #cond);                              \
			dprintf(2, __VA_ARGS__);                                                   \
			dprintf(2, "\n");                                                          \
			failed = 1;                                                                \
		}                                                                                  \
	} while (0)

static struct cgprobe_memory_figures now(void)
{
	struct cgprobe_memory_figures f;
	memset(&f, 0xff, sizeof(f));
	int r = cgprobe_memory_now("cpu", &f, sizeof(f));
	CHECK(r == 0, "memory_now %d", r);
	return f;
}

static void *other_thread(void *arg)
{
	(void)arg;
	void *p = malloc(2000000);
	free(p);
	return NULL;
}

int main(void)
{
	if (!cgprobe_memory_now) {
		dprintf(2, "no probe\n");
		return 1;
	}
	uint64_t m1 = 0, m2 = 0;
	CHECK(cgprobe_memory_mark(&m1) == 0 && m1 >= 1, "mark %llu", (unsigned long long)m1);
	struct cgprobe_memory_figures f0 = now();
	CHECK(f0.mark == m1 && f0.peak_bytes == f0.live_bytes && f0.mark_bytes == f0.live_bytes &&
	          f0.peak_alloc_bytes == 0,
	      "at the mark: mark %llu live %llu peak %llu at mark %llu",
	      (unsigned long long)f0.mark, (unsigned long long)f0.live_bytes,
	      (unsigned long long)f0.peak_bytes, (unsigned long long)f0.mark_bytes);
	uint64_t base = f0.live_bytes, n0 = f0.live_count;

	void *a = malloc(1000000);
	void *b = malloc(3000000);
	free(a);
	void *c = malloc(500000);
	struct cgprobe_memory_figures f = now();
	CHECK(f.live_bytes == base + 3500000 && f.live_count == n0 + 2,
	      "live %llu (%llu allocations), not base %llu + 3500000",
	      (unsigned long long)f.live_bytes, (unsigned long long)f.live_count,
	      (unsigned long long)base);
	CHECK(f.peak_bytes == base + 4000000 && f.mark_bytes == base && f.mark == m1 &&
	          f.peak_alloc_bytes == 3000000,
	      "peak %llu, not base + 4000000; at mark %llu, raised by %llu",
	      (unsigned long long)f.peak_bytes, (unsigned long long)f.mark_bytes,
	      (unsigned long long)f.peak_alloc_bytes);
	say("S peak %llu", (unsigned long long)f.peak_bytes);

	/* A second mark: the peak starts again from what is live. */
	CHECK(cgprobe_memory_mark(&m2) == 0 && m2 == m1 + 1, "second mark %llu",
	      (unsigned long long)m2);
	free(b);
	void *d = calloc(1, 200000);
	d = realloc(d, 300000);
	f = now();
	CHECK(f.live_bytes == base + 800000 && f.peak_bytes == base + 3500000 &&
	          f.mark_bytes == base + 3500000 && f.mark == m2 && f.peak_alloc_bytes == 0,
	      "after the second mark: live %llu peak %llu at mark %llu raised by %llu",
	      (unsigned long long)f.live_bytes, (unsigned long long)f.peak_bytes,
	      (unsigned long long)f.mark_bytes, (unsigned long long)f.peak_alloc_bytes);

	/* Another thread's block, made and freed before the call: in the peak, not live. */
	pthread_t t;
	cgprobe_memory_mark(NULL);
	pthread_create(&t, NULL, other_thread, NULL);
	pthread_join(t, NULL);
	f = now();
	/* pthread_create's own allocation (the thread's TLS) may stay: at least the block. */
	CHECK(f.peak_bytes >= f.mark_bytes + 2000000 && f.peak_bytes < f.mark_bytes + 2100000 &&
	          f.peak_alloc_bytes == 2000000,
	      "another thread: peak %llu, at mark %llu, raised by %llu",
	      (unsigned long long)f.peak_bytes, (unsigned long long)f.mark_bytes,
	      (unsigned long long)f.peak_alloc_bytes);

	/*
	 * The peak is put down to the largest block that raised it, not the
	 * small one after it; once that block is freed, to the next that does.
	 */
	cgprobe_memory_mark(NULL);
	void *big = malloc(1000000), *small = malloc(1000);
	f = now();
	CHECK(f.peak_alloc_bytes == 1000000 && f.peak_bytes == f.mark_bytes + 1001000 &&
	          f.kept_alloc_bytes == 1000000,
	      "after a small block: put down to %llu, peak %llu over the mark, kept %llu",
	      (unsigned long long)f.peak_alloc_bytes,
	      (unsigned long long)(f.peak_bytes - f.mark_bytes),
	      (unsigned long long)f.kept_alloc_bytes);
	free(big);
	void *x = malloc(600000), *y = malloc(500000);
	f = now();
	/* The kept allocation: the largest made since the last kept one was freed. */
	CHECK(f.peak_alloc_bytes == 500000 && f.peak_bytes == f.mark_bytes + 1101000 &&
	          f.kept_alloc_bytes == 600000,
	      "after the largest was freed: put down to %llu, peak %llu over the mark, kept %llu",
	      (unsigned long long)f.peak_alloc_bytes,
	      (unsigned long long)(f.peak_bytes - f.mark_bytes),
	      (unsigned long long)f.kept_alloc_bytes);
	free(small);
	free(x);
	free(y);
	f = now();
	CHECK(f.kept_alloc_bytes == 0 && f.live_bytes == f.mark_bytes,
	      "all freed: kept %llu, live %llu over the mark", (unsigned long long)f.kept_alloc_bytes,
	      (unsigned long long)(f.live_bytes - f.mark_bytes));

	char devices[256];
	int n = cgprobe_memory_devices(devices, sizeof(devices));
	CHECK(n == 1 && strcmp(devices, "cpu") == 0, "devices %d '%s'", n, n >= 0 ? devices : "");
	CHECK(cgprobe_memory_devices(devices, 3) == -ENOSPC, "devices in 3 bytes");
	struct cgprobe_memory_figures z;
	memset(&z, 0xff, sizeof(z));
	int r = cgprobe_memory_now("cuda:7", &z, sizeof(z));
	CHECK(r == -ENOENT && z.live_bytes == 0 && z.peak_bytes == 0, "cuda:7: %d, live %llu", r,
	      (unsigned long long)z.live_bytes);
	/* An older caller's smaller struct: only its fields are written. */
	uint64_t two[3] = {0, 0, 12345};
	f = now();
	r = cgprobe_memory_now("cpu", (struct cgprobe_memory_figures *)(void *)two,
	                       2 * sizeof(uint64_t));
	CHECK(r == 0 && two[0] == f.live_bytes && two[1] == f.live_count && two[2] == 12345,
	      "a 16-byte struct: %d %llu %llu", r, (unsigned long long)two[0],
	      (unsigned long long)two[2]);
	struct cgprobe_memory_site s;
	r = cgprobe_memory_site("cpu", &s, sizeof(s));
	CHECK(r == -ENOENT, "site of a C program: %d", r);
	CHECK(cgprobe_memory_now(NULL, &f, sizeof(f)) == -EINVAL, "NULL device");

	free(c);
	free(d);
	if (!failed)
		say("R figures ok");
	return failed;
}

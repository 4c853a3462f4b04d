/* SPDX-License-Identifier: MIT */
/*
 * agree: a deterministic, single-threaded heap workload with a known shape,
 * for tests/heaptrack-agree.sh to run under both cgprobe and heaptrack.
 *
 * Build with -O1 -fno-builtin so the compiler keeps every call (it may
 * otherwise fold malloc/free pairs away).  The program does no stdio (whose
 * buffers would be allocations of its own) and touches nothing else that
 * allocates, so the calls below are all the heap traffic main makes.
 *
 *   phase 1  2,500 blocks (every third calloc), 1,000 of them realloc'd,
 *            all freed;
 *   churn    1,500 malloc/free pairs of one live block each;
 *   phase 2  4,500 blocks, 1,500 of them realloc'd -- the peak, above
 *            phase 1's -- all freed, in reverse order.
 *
 * That is 11,000 allocation calls (malloc + calloc + realloc) and 8,500
 * frees: 19,500 calls.  Sizes are 16..4111 bytes from a fixed LCG, so the
 * peak is about 9 MB.  On exit it prints, on one line to stdout,
 *   agree allocs=N reallocs=N frees=N peak=N final=N
 * where allocs counts every malloc, calloc and realloc (each realloc is a
 * free plus an allocation to both profilers), and peak is the largest sum
 * of requested sizes live at once, updated after each call completes.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PHASE1 2500
#define PHASE1_REALLOC 1000
#define CHURN 1500
#define PHASE2 4500
#define PHASE2_REALLOC 1500
#define MAX_BLOCKS 4500

static uint32_t seed = 12345;

static size_t next_size(void)
{
	seed = seed * 1103515245u + 12345u;
	return 16 + ((seed >> 8) % 4096);
}

static void *block[MAX_BLOCKS];
static size_t size_of[MAX_BLOCKS];
static uint64_t live, peak, n_alloc, n_realloc, n_free;

static void grew(size_t add, size_t gone)
{
	live = live - gone + add;
	if (live > peak)
		peak = live;
}

static void die(const char *what)
{
	static const char msg[] = "agree: out of memory in ";
	(void)!write(STDERR_FILENO, msg, sizeof(msg) - 1);
	(void)!write(STDERR_FILENO, what, strlen(what));
	(void)!write(STDERR_FILENO, "\n", 1);
	_exit(2);
}

static void fill(int n)
{
	for (int i = 0; i < n; i++) {
		size_t sz = next_size();
		void *p;
		if (i % 3 == 0) {
			/* calloc(count, size): count * size bytes. */
			size_t count = sz / 8;
			sz = count * 8;
			p = calloc(count, 8);
		} else {
			p = malloc(sz);
		}
		if (!p)
			die("fill");
		((volatile char *)p)[0] = (char)i;
		block[i] = p;
		size_of[i] = sz;
		n_alloc++;
		grew(sz, 0);
	}
}

static void resize(int n, int stride)
{
	for (int k = 0, i = 0; k < n; k++, i += stride) {
		size_t sz = next_size();
		void *p = realloc(block[i], sz);
		if (!p)
			die("resize");
		block[i] = p;
		n_alloc++;
		n_realloc++;
		grew(sz, size_of[i]);
		size_of[i] = sz;
	}
}

static void drain(int n, int reverse)
{
	for (int k = 0; k < n; k++) {
		int i = reverse ? n - 1 - k : k;
		free(block[i]);
		n_free++;
		grew(0, size_of[i]);
		block[i] = NULL;
	}
}

int main(void)
{
	fill(PHASE1);
	resize(PHASE1_REALLOC, 2);
	drain(PHASE1, 0);

	for (int i = 0; i < CHURN; i++) {
		size_t sz = next_size();
		void *p = malloc(sz);
		if (!p)
			die("churn");
		((volatile char *)p)[0] = 1;
		n_alloc++;
		grew(sz, 0);
		free(p);
		n_free++;
		grew(0, sz);
	}

	fill(PHASE2);
	resize(PHASE2_REALLOC, 3);
	drain(PHASE2, 1);

	char line[160];
	int len = snprintf(line, sizeof(line),
			   "agree allocs=%llu reallocs=%llu frees=%llu peak=%llu final=%llu\n",
			   (unsigned long long)n_alloc, (unsigned long long)n_realloc,
			   (unsigned long long)n_free, (unsigned long long)peak,
			   (unsigned long long)live);
	if (len > 0 && (size_t)len < sizeof(line))
		(void)!write(STDOUT_FILENO, line, (size_t)len);
	return 0;
}

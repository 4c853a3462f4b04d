/* SPDX-License-Identifier: MIT */
/*
 * An allocation-heavy workload for the probe benchmark: each thread runs
 * OPS malloc/free/realloc calls of mixed sizes (16 B to 16 KiB, log-uniform)
 * over a working set of 1024 blocks, from DEPTH nested calls down (default
 * 1; real programs allocate 10 to 30 frames deep, which is what a stack
 * unwinding profiler pays for). Prints a checksum so nothing is elided.
 *
 *   alloc-bench THREADS OPS_PER_THREAD [DEPTH]
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xorshift.h"

#define SLOTS 1024

/*
 * A cache line each: the loop stores its seed before every call, and two
 * workers sharing a line made the native run twice as slow in about half
 * the runs (wherever ASLR put main's stack), which swung every ratio
 * taken against it.
 */
struct worker {
	_Alignas(64) pthread_t thread;
	uint64_t ops, seed, sum;
	int depth;
};

static uint64_t next(uint64_t *s)
{
	return xorshift64(s);
}

static size_t size_of(uint64_t r)
{
	return (size_t)16 << (r % 11) | (r >> 8) % 16;
}

static void loop(struct worker *w)
{
	void *slot[SLOTS] = {0};
	for (uint64_t i = 0; i < w->ops; i++) {
		uint64_t r = next(&w->seed);
		size_t k = (r >> 20) % SLOTS;
		if (!slot[k]) {
			slot[k] = malloc(size_of(r));
			*(volatile char *)slot[k] = (char)r;
		} else if (r % 8 == 0) {
			void *p = realloc(slot[k], size_of(r >> 4));
			if (p)
				slot[k] = p;
		} else {
			w->sum += (uintptr_t)slot[k] & 0xff0;
			free(slot[k]);
			slot[k] = NULL;
		}
	}
	for (size_t k = 0; k < SLOTS; k++)
		free(slot[k]);
}

/* noinline and a use after the call keep every frame on the stack. */
__attribute__((noinline)) static void descend(struct worker *w, int depth)
{
	if (depth <= 1)
		loop(w);
	else
		descend(w, depth - 1);
	__asm__ volatile("" ::: "memory");
}

static void *work(void *arg)
{
	struct worker *w = arg;
	descend(w, w->depth);
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 3 && argc != 4) {
		fprintf(stderr, "usage: alloc-bench THREADS OPS_PER_THREAD [DEPTH]\n");
		return 2;
	}
	int n = atoi(argv[1]);
	int depth = argc == 4 ? atoi(argv[3]) : 1;
	uint64_t ops = strtoull(argv[2], NULL, 10);
	if (n < 1 || n > 64)
		return 2;
	struct worker w[64];
	for (int i = 0; i < n; i++) {
		w[i] = (struct worker){.ops = ops,
				       .seed = 0x9e3779b97f4a7c15ull * (uint64_t)(i + 1),
				       .depth = depth < 1 ? 1 : depth};
		pthread_create(&w[i].thread, NULL, work, &w[i]);
	}
	uint64_t sum = 0;
	for (int i = 0; i < n; i++) {
		pthread_join(w[i].thread, NULL);
		sum += w[i].sum;
	}
	printf("%d thread(s) x %llu ops, checksum %llu\n", n, (unsigned long long)ops,
	       (unsigned long long)sum);
	return 0;
}

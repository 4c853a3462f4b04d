/* SPDX-License-Identifier: MIT */
/*
 * Eight threads allocate, reallocate and free at once, each from its own
 * pseudo-random sequence, and free everything before they end. Every block
 * is an A line and every end an F line; S lines give each thread's own peak
 * of live bytes, a lower bound for the process's.
 * Usage: threads [THREADS [ITERATIONS]]
 */
#define PROG "threads"
#include <pthread.h>
#include <stdlib.h>

#include "prog.h"

#define SLOTS 16

struct worker {
	pthread_t thread;
	int id;
	int iterations;
	uint32_t seed;
	uint64_t live, max_live;
};

static pthread_barrier_t start;

static uint32_t next(uint32_t *s)
{
	*s = *s * 1103515245u + 12345u;
	return *s >> 8;
}

static void *work(void *arg)
{
	struct worker *w = arg;
	char *slot[SLOTS] = {0};
	size_t size[SLOTS] = {0};

	pthread_barrier_wait(&start);
	for (int i = 0; i < w->iterations; i++) {
		int k = (int)(next(&w->seed) % SLOTS);
		size_t n = 1 + next(&w->seed) % 4000;
		if (slot[k] && next(&w->seed) % 4 == 0) {
			gone("realloc", slot[k], size[k]);
			char *q = realloc(slot[k], n);
			if (!q)
				abort();
			w->live -= size[k];
			slot[k] = got("realloc", q, n);
		} else {
			if (slot[k]) {
				gone("free", slot[k], size[k]);
				free(slot[k]);
				w->live -= size[k];
			}
			slot[k] = got("malloc", malloc(n), n);
			if (!slot[k])
				abort();
		}
		size[k] = n;
		slot[k][0] = (char)w->id;
		slot[k][n - 1] = (char)i;
		w->live += n;
		if (w->live > w->max_live)
			w->max_live = w->live;
	}
	for (int k = 0; k < SLOTS; k++) {
		gone("free", slot[k], size[k]);
		free(slot[k]);
	}
	say("S max_live %llu", (unsigned long long)w->max_live);
	return NULL;
}

int main(int argc, char **argv)
{
	static struct worker w[64];
	int threads = argc > 1 ? atoi(argv[1]) : 8;
	int iterations = argc > 2 ? atoi(argv[2]) : 2000;
	if (threads < 1 || threads > 64)
		return 2;
	pthread_barrier_init(&start, NULL, (unsigned)threads);
	for (int t = 0; t < threads; t++) {
		w[t] = (struct worker){.id = t, .iterations = iterations};
		w[t].seed = 77u + (uint32_t)t;
		if (pthread_create(&w[t].thread, NULL, work, &w[t]))
			return 3;
	}
	for (int t = 0; t < threads; t++)
		pthread_join(w[t].thread, NULL);
	say("R threads=%d iterations=%d done", threads, iterations);
	return 0;
}

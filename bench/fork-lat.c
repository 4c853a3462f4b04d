/* SPDX-License-Identifier: MIT */
/*
 * Fork latency while other threads allocate flat out: the time each fork()
 * takes to return in the parent, over N forks, with T threads doing
 * malloc/free pairs meanwhile. Each child does free(malloc(100)) and
 * _exit(0); the parent reaps it before the next fork. Prints
 * "forks N threads T p50_us X p99_us Y max_us Z allocs A" on stdout.
 * Usage: fork-lat [FORKS] [THREADS]
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static atomic_int stop;
static atomic_ullong allocs;

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void *churn(void *arg)
{
	void *slots[64] = {0};
	uint64_t n = 0;
	(void)arg;
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		unsigned i = (unsigned)(n % 64);
		free(slots[i]);
		slots[i] = malloc(32 + n % 512);
		n++;
	}
	for (unsigned i = 0; i < 64; i++)
		free(slots[i]);
	atomic_fetch_add(&allocs, n);
	return NULL;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	long forks = argc > 1 ? atol(argv[1]) : 1000;
	long threads = argc > 2 ? atol(argv[2]) : 2;
	if (forks < 1 || threads < 0 || threads > 64) {
		fprintf(stderr, "usage: fork-lat [FORKS] [THREADS (0-64)]\n");
		return 2;
	}
	pthread_t t[64];
	for (long i = 0; i < threads; i++)
		if (pthread_create(&t[i], NULL, churn, NULL))
			return 1;
	uint64_t *lat = malloc((size_t)forks * sizeof(*lat));
	if (!lat)
		return 1;
	/* Let the threads get going before the first fork. */
	struct timespec ms = {0, 20000000};
	nanosleep(&ms, NULL);
	for (long i = 0; i < forks; i++) {
		uint64_t t0 = now_ns();
		pid_t pid = fork();
		if (pid == 0) {
			free(malloc(100));
			_exit(0);
		}
		lat[i] = now_ns() - t0;
		if (pid < 0)
			return 1;
		int status;
		if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status))
			return 1;
	}
	atomic_store(&stop, 1);
	for (long i = 0; i < threads; i++)
		pthread_join(t[i], NULL);
	qsort(lat, (size_t)forks, sizeof(*lat), cmp_u64);
	size_t p99 = (size_t)((forks * 99 + 99) / 100) - 1;
	printf("forks %ld threads %ld p50_us %.1f p99_us %.1f max_us %.1f allocs %llu\n", forks,
	       threads, (double)lat[forks / 2] / 1e3, (double)lat[p99] / 1e3,
	       (double)lat[forks - 1] / 1e3, (unsigned long long)atomic_load(&allocs));
	free(lat);
	return 0;
}

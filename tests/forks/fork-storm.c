/* SPDX-License-Identifier: MIT */
/*
 * Forks while other threads allocate flat out, for tests/test-forks.py.
 *
 * THREADS threads each keep 64 blocks live in slots of their own, of
 * sizes no other code here uses (5000 + 64 * thread + slot), replacing one
 * after another: a slot is emptied before its block is freed and filled
 * after the new one is made, so at any instant the slots hold only live
 * blocks. The main thread holds a marker block of 777777 bytes and forks
 * FORKS times. Each child makes an allocation of its own (its trace
 * starts with what it inherited), frees every block it finds in the
 * slots, and says how many: "C PID FREED". With GRAND set, every tenth
 * child first forks a grandchild that does the same ("G PID FREED").
 * At the end the parent says "P PID ALLOCS": the blocks its threads made.
 * Usage: fork-storm FORKS THREADS [GRAND]
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define SLOTS 64
#define MAX_THREADS 8
#define MARKER 777777

static _Atomic(void *) slots[MAX_THREADS][SLOTS];
static atomic_ullong made[MAX_THREADS];
static atomic_int stop;
static long threads;

static void *churn(void *arg)
{
	long t = (long)arg;
	unsigned long long n = 0;
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		unsigned i = (unsigned)(n++ % SLOTS);
		free(atomic_exchange(&slots[t][i], NULL));
		void *p = malloc(5000 + SLOTS * (size_t)t + i);
		if (!p)
			abort();
		atomic_store(&slots[t][i], p);
	}
	atomic_store(&made[t], n);
	return NULL;
}

/* One line in one write: children's lines never mix. */
static void say(char kind, long a, long b)
{
	char line[64];
	int n = snprintf(line, sizeof(line), "%c %ld %ld\n", kind, a, b);
	if (n > 0 && write(STDOUT_FILENO, line, (size_t)n) != n)
		_exit(3);
}

/* In a child: an allocation of its own, then every block the slots hold freed. */
static void child(char kind)
{
	free(malloc(100));
	long freed = 0;
	for (long t = 0; t < threads; t++)
		for (unsigned i = 0; i < SLOTS; i++) {
			void *p = atomic_load(&slots[t][i]);
			if (p) {
				free(p);
				freed++;
			}
		}
	say(kind, (long)getpid(), freed);
}

static int reap(pid_t pid)
{
	int status;
	return waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

int main(int argc, char **argv)
{
	long forks = argc > 1 ? atol(argv[1]) : 100;
	threads = argc > 2 ? atol(argv[2]) : 2;
	int grand = argc > 3 && strcmp(argv[3], "GRAND") == 0;
	if (forks < 1 || threads < 1 || threads > MAX_THREADS) {
		fprintf(stderr, "usage: fork-storm FORKS THREADS(1-%d) [GRAND]\n", MAX_THREADS);
		return 2;
	}
	char *marker = malloc(MARKER);
	pthread_t tid[MAX_THREADS];
	for (long t = 0; t < threads; t++)
		if (pthread_create(&tid[t], NULL, churn, (void *)t))
			return 1;
	for (long k = 0; k < forks; k++) {
		pid_t pid = fork();
		if (pid < 0)
			return 1;
		if (pid == 0) {
			if (grand && k % 10 == 0) {
				pid_t g = fork();
				if (g == 0) {
					child('G');
					_exit(0);
				}
				if (g < 0 || !reap(g))
					_exit(4);
			}
			child('C');
			_exit(0);
		}
		if (!reap(pid))
			return 5;
	}
	atomic_store(&stop, 1);
	unsigned long long total = 0;
	for (long t = 0; t < threads; t++) {
		pthread_join(tid[t], NULL);
		total += atomic_load(&made[t]);
		for (unsigned i = 0; i < SLOTS; i++)
			free(atomic_load(&slots[t][i]));
	}
	free(marker);
	say('P', (long)getpid(), (long)total);
	return 0;
}

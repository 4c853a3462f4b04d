/* SPDX-License-Identifier: MIT */
/*
 * What an event's stamp costs, by the clocks the probe could read
 * (docs/recording-cost.md, "The clock"): ITERS reads of each, timed, one
 * line a clock, with the kernel's clocksource first:
 *
 *   clocksource NAME
 *   CLOCK NS_PER_READ
 *
 * monotonic is clock_gettime(CLOCK_MONOTONIC), what the hooks read where
 * the kernel does not use the TSC; lfence-rdtsc what they read where it
 * does; rdtsc and coarse (CLOCK_MONOTONIC_COARSE, milliseconds apart) for
 * scale only.
 *
 *   clock-bench [ITERS]      (default 5000000)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#if defined(__x86_64__)
#include <x86intrin.h>
#endif

static volatile uint64_t sink;

static double now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static uint64_t read_clock(clockid_t id)
{
	struct timespec t;
	clock_gettime(id, &t);
	return (uint64_t)t.tv_nsec;
}

enum which { MONOTONIC, COARSE, LFENCE_RDTSC, RDTSC };

static double per_read(enum which w, long iters)
{
	uint64_t s = 0;
	double t0 = now_ns();
	for (long i = 0; i < iters; i++) {
		switch (w) {
		case MONOTONIC: s += read_clock(CLOCK_MONOTONIC); break;
		case COARSE: s += read_clock(CLOCK_MONOTONIC_COARSE); break;
#if defined(__x86_64__)
		case LFENCE_RDTSC: _mm_lfence(); s += __rdtsc(); break;
		case RDTSC: s += __rdtsc(); break;
#else
		default: break;
#endif
		}
	}
	sink = s;
	return (now_ns() - t0) / (double)iters;
}

int main(int argc, char **argv)
{
	long iters = argc > 1 ? strtol(argv[1], NULL, 10) : 5000000;
	if (iters <= 0) {
		fprintf(stderr, "clock-bench: ITERS must be a positive integer\n");
		return 2;
	}
	char src[64] = "unknown";
	FILE *f = fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource", "r");
	if (f) {
		if (fgets(src, sizeof(src), f))
			src[strcspn(src, "\n")] = '\0';
		fclose(f);
	}
	printf("clocksource %s\n", src);
	printf("monotonic %.1f\n", per_read(MONOTONIC, iters));
	printf("coarse %.1f\n", per_read(COARSE, iters));
#if defined(__x86_64__)
	printf("lfence-rdtsc %.1f\n", per_read(LFENCE_RDTSC, iters));
	printf("rdtsc %.1f\n", per_read(RDTSC, iters));
#endif
	return 0;
}

/* SPDX-License-Identifier: MIT */
/*
 * Allocations and spans bracketed by CLOCK_MONOTONIC reads, for the test
 * of a job's time axis (tests/test-job-clock.py): each block has a size
 * no other block has, each span a name of its own, and a line says when
 * each was made,
 *   "PID clock-marks M SIZE BEFORE_NS AFTER_NS",
 *   "PID clock-marks S NAME BEFORE_NS AFTER_NS",
 * so that the record's time (timestamp_ns, start_ns) plus the trace's
 * cgprobe_clock_monotonic_ns must fall between the two reads. In this process, in a fork child, and,
 * with the argument "update", inside a training update (a capture
 * window's trace counts from the window's begin). With "many N", N more
 * blocks (sizes from 200000 up), a nap every 100, told the same way: the
 * test counts how many records fall outside their reads.
 * Usage: clock-marks [update | many N]
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

#include "cgprobe.h"

#define SAY_NAME "clock-marks"
#include "../lib/prog-say.h"

static uint64_t mono_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static void nap_ms(long ms)
{
	struct timespec t = {0, ms * 1000000};
	nanosleep(&t, NULL);
}

/* A span opened between two reads, told as "S NAME BEFORE AFTER", and ended. */
static void span_mark(const char *name)
{
	uint64_t before = mono_ns();
	uint64_t id = cgprobe_span_begin_opt(name, CGPROBE_STEP_NONE);
	uint64_t after = mono_ns();
	say("S %s %llu %llu", name, (unsigned long long)before, (unsigned long long)after);
	cgprobe_span_end_opt(id);
}

/* A block of size bytes, bracketed, told, kept (a leak is fine here). */
static void mark(size_t size)
{
	uint64_t before = mono_ns();
	char *p = malloc(size);
	uint64_t after = mono_ns();
	if (!p)
		exit(99);
	memset(p, 1, size);
	say("M %zu %llu %llu", size, (unsigned long long)before, (unsigned long long)after);
}

int main(int argc, char **argv)
{
	bool update = argc > 1 && !strcmp(argv[1], "update");
	long many = argc > 2 && !strcmp(argv[1], "many") ? atol(argv[2]) : 0;
	/* Time passes before the first mark: the record's time is not merely 0. */
	nap_ms(30);
	if (update) {
		cgprobe_update_begin_opt();
		nap_ms(10);
	}
	mark(123451);
	span_mark("parent-span");
	pid_t pid = fork();
	if (pid == 0) {
		nap_ms(20);
		mark(123452);
		span_mark("child-span");
		mark(123453);
		exit(0);
	}
	int status;
	waitpid(pid, &status, 0);
	nap_ms(10);
	mark(123454);
	/* Naps let the writer drain and anchor its clock between the groups. */
	for (long i = 0; i < many; i++) {
		if (i % 100 == 0)
			nap_ms(1);
		mark(200000 + (size_t)i);
	}
	if (update)
		cgprobe_update_end_opt();
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

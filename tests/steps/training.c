/* SPDX-License-Identifier: MIT */
/*
 * What a training loop tells the probe through the header's _opt forms,
 * read back by tests/test-steps.c: updates (each a span carrying its
 * number), phases other than the three steps, and parameter marks (at
 * addresses no allocation takes), run whole or as the capture window of
 * update 2. Prints "key value" lines for the test.
 */
#include <cgprobe.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void say(const char *key, long long v)
{
	printf("%s %lld\n", key, v);
	fflush(stdout);
}

/* A span whose start and end the test can find inside an update's. */
static void marker(const char *name)
{
	cgprobe_span_end_opt(cgprobe_span_begin_opt(name, CGPROBE_STEP_NONE));
}

/* Update 2 ends on another thread: an update's span may. */
static void *ender(void *arg)
{
	(void)arg;
	say("update-2-end", cgprobe_update_end_opt());
	return NULL;
}

/* A span with CGPROBE_SPAN_PHASE: its id, printed as key. */
static uint64_t phase(const char *key, const char *name, enum cgprobe_step step)
{
	uint64_t id =
	    cgprobe_span_begin_ex_opt(name, step, CGPROBE_KIND_FUNCTION, CGPROBE_SPAN_PHASE);
	say(key, (long long)id);
	return id;
}

static void phases(void)
{
	uint64_t d = phase("phase-data", "data", CGPROBE_STEP_NONE);
	void *p = malloc(4001); /* a phase is no step: other */
	memset(p, 1, 16);
	cgprobe_span_end_opt(d);
	free(p);
	/* A step set: the flag is ignored. */
	cgprobe_span_end_opt(phase("phase-stepped", "fwd", CGPROBE_STEP_FORWARD));
	/* A step's name is the step, none no phase. */
	cgprobe_span_end_opt(phase("phase-backward", "backward", CGPROBE_STEP_NONE));
	cgprobe_span_end_opt(phase("phase-none", "none", CGPROBE_STEP_NONE));
	/* Names that are no phase's: not opened. */
	phase("phase-space", "load batch", CGPROBE_STEP_NONE);
	phase("phase-long", "a-phase-name-of-thirty-two-bytes", CGPROBE_STEP_NONE);
	phase("phase-empty", "", CGPROBE_STEP_NONE);
	cgprobe_span_end_opt(
	    phase("phase-longest", "a-phase-name-of-thirty-one-byte", CGPROBE_STEP_NONE));
}

#define ADDR(a) ((const void *)(uintptr_t)(a))

/* Marks inside update 2, under a span "load"; and arguments refused, recording nothing. */
static void marks(void)
{
	uint64_t load = cgprobe_span_begin_opt("load", CGPROBE_STEP_NONE);
	say("load", (long long)load);
	say("mark-one", cgprobe_mark_parameters_opt(ADDR(0x2000), 0x40));
	cgprobe_span_end_opt(load);
	const void *ptrs[] = {ADDR(0x3000), ADDR(0x5000), ADDR(0x4000)};
	uint64_t bytes[] = {0x10, 0x20, 0x30};
	say("mark-n", cgprobe_mark_parameters_n_opt(ptrs, bytes, 3));

	say("mark-null-ptrs", cgprobe_mark_parameters_n_opt(NULL, bytes, 1));
	say("mark-null-bytes", cgprobe_mark_parameters_n_opt(ptrs, NULL, 1));
	say("mark-none", cgprobe_mark_parameters_n_opt(ptrs, bytes, 0));
	const void *bad[] = {ADDR(0x6000), ADDR(UINTPTR_MAX - 0xf)};
	uint64_t empty[] = {0x10, 0}, wraps[] = {0x10, 0x20};
	say("mark-n-empty", cgprobe_mark_parameters_n_opt(bad, empty, 2));
	say("mark-n-wraps", cgprobe_mark_parameters_n_opt(bad, wraps, 2));
	say("mark-empty", cgprobe_mark_parameters_opt(ADDR(0x9000), 0));
	say("mark-wraps", cgprobe_mark_parameters_opt(ADDR(UINTPTR_MAX - 0xf), 0x20));
}

/*
 * n disjoint ranges from 0x100000, 0x10 bytes every 0x20: past the
 * table's room at 65536 (the span holds them all), too many at 65537.
 */
static int mark_many(size_t n)
{
	const void **ptrs = malloc(n * sizeof(*ptrs));
	uint64_t *bytes = malloc(n * sizeof(*bytes));
	if (!ptrs || !bytes)
		exit(3);
	for (size_t i = 0; i < n; i++) {
		ptrs[i] = ADDR(0x100000 + 0x20 * i);
		bytes[i] = 0x10;
	}
	int r = cgprobe_mark_parameters_n_opt(ptrs, bytes, n);
	free(ptrs);
	free(bytes);
	return r;
}

int main(void)
{
	/* Before update 1: outside update 2's window. */
	say("mark-early", cgprobe_mark_parameters_opt(ADDR(0x1000), 0x100));
	say("update-1", (long long)cgprobe_update_begin_opt());
	marker("in-1");
	phases();
	/* A begin while update 1 is open ends it first. */
	say("update-2", (long long)cgprobe_update_begin_opt());
	marker("in-2");
	marks();
	pthread_t t;
	if (pthread_create(&t, NULL, ender, NULL) || pthread_join(t, NULL))
		return 3;
	marker("between");
	/* Update 3 opens under the thread's innermost span. */
	uint64_t epoch = cgprobe_span_begin_opt("epoch", CGPROBE_STEP_NONE);
	say("epoch", (long long)epoch);
	say("update-3", (long long)cgprobe_update_begin_opt());
	marker("in-3");
	say("update-3-end", cgprobe_update_end_opt());
	cgprobe_span_end_opt(epoch);
	say("update-end-none", cgprobe_update_end_opt());
	say("mark-big", mark_many(65537));
	say("mark-max", mark_many(65536));
	say("mark-full", cgprobe_mark_parameters_opt(ADDR(0x8000000), 0x10));
	/* Left open at exit, as a loop of next_update() leaves its last: its span ends with the
	 * trace. */
	say("update-4", (long long)cgprobe_update_begin_opt());
	say("done", 0);
	return 0;
}

/* SPDX-License-Identifier: MIT */
/*
 * What a training loop tells the probe through the header's _opt forms,
 * read back by tests/test-steps.c: updates (each a span carrying its
 * number) and phases other than the three steps, run whole or as the
 * capture window of update 2. Prints "key value" lines for the test.
 */
#include <cgprobe.h>
#include <pthread.h>
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
	uint64_t id = cgprobe_span_begin_ex_opt(name, step, CGPROBE_KIND_FUNCTION,
	                                        CGPROBE_SPAN_PHASE);
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
	cgprobe_span_end_opt(phase("phase-longest", "a-phase-name-of-thirty-one-byte", CGPROBE_STEP_NONE));
}

int main(void)
{
	say("update-1", (long long)cgprobe_update_begin_opt());
	marker("in-1");
	phases();
	/* A begin while update 1 is open ends it first. */
	say("update-2", (long long)cgprobe_update_begin_opt());
	marker("in-2");
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
	say("done", 0);
	return 0;
}

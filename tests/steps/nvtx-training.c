/* SPDX-License-Identifier: MIT */
/*
 * Updates marked by NVTX ranges (CGPROBE_UPDATE_RANGE's default names) and
 * by the API together, nested as a profiler's steps around cgprobe.torch's
 * updates are: each update counted once; ranges that are phases
 * (CGPROBE_STEPS), as PyTorch names its DataLoader's (tests/test-steps.c).
 * Prints "key value" lines for the test.
 */
#include <cgprobe.h>
#include <nvtx3/nvToolsExt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static nvtxRangeId_t to_end;

static void say(const char *key, long long v)
{
	printf("%s %lld\n", key, v);
	fflush(stdout);
}

static void marker(const char *name)
{
	cgprobe_span_end_opt(cgprobe_span_begin_opt(name, CGPROBE_STEP_NONE));
}

static void *ender(void *arg)
{
	(void)arg;
	nvtxRangeEnd(to_end);
	return NULL;
}

int main(void)
{
	/* 1: a profiler step around the API's update: the API joins the range's. */
	nvtxRangePushA("ProfilerStep#1");
	say("api-in-1", (long long)cgprobe_update_begin_opt());
	marker("in-1");
	say("api-in-1-end", cgprobe_update_end_opt());
	nvtxRangePop();
	/* 2: update ranges nested: the inner one joins the outer's. */
	nvtxRangePushA("ProfilerStep#2");
	nvtxRangePushA("train_step");
	marker("in-2");
	nvtxRangePop();
	nvtxRangePop();
	/* 3: the API's update around a range: the range joins it. */
	say("api-3", (long long)cgprobe_update_begin_opt());
	nvtxRangeEnd(nvtxRangeStartA("optimizer_step"));
	say("api-3-end", cgprobe_update_end_opt());
	/* 4: a start/end range alone, ended on another thread. */
	to_end = nvtxRangeStartA("train_batch");
	marker("in-4");
	pthread_t t;
	if (pthread_create(&t, NULL, ender, NULL) || pthread_join(t, NULL))
		return 3;
	/* Phases: the default's data, and one CGPROBE_STEPS may name. */
	nvtxRangePushA("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__");
	void *p = malloc(5001); /* a phase is no step: other */
	memset(p, 1, 16);
	nvtxRangePop();
	free(p);
	nvtxRangeEnd(nvtxRangeStartA("load.batch"));
	/* 5: the API's own again. */
	say("api-5", (long long)cgprobe_update_begin_opt());
	say("api-5-end", cgprobe_update_end_opt());
	say("api-end-none", cgprobe_update_end_opt());
	say("done", 0);
	return 0;
}

/* SPDX-License-Identifier: MIT */
/*
 * The annotation API through the header's _opt forms only: no link
 * dependency on the probe, so the program runs unchanged without it.
 * Blocks of distinct sizes mark where each record must land; threads are
 * made before any step opens (their own blocks would land in it) and
 * sequenced by semaphores. Prints "key value" lines for the test.
 */
#include <cgprobe.h>
#include <math.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static sem_t go_worker, worker_done, go_autograd, autograd_done;
static void *blocks[16];

static void say(const char *key, long long v)
{
	printf("%s %lld\n", key, v);
	fflush(stdout);
}

/* Runs while main has forward open: the step applies here too. */
static void *worker(void *arg)
{
	(void)arg;
	cgprobe_thread_name_opt("loader");
	sem_wait(&go_worker);
	blocks[3] = malloc(1003); /* activation, s1 */
	uint64_t w = cgprobe_span_begin_opt("work", CGPROBE_STEP_NONE);
	say("work", (long long)w);
	blocks[4] = malloc(1004); /* activation, work */
	cgprobe_span_end_opt(w);
	sem_post(&worker_done);
	return NULL;
}

/* Autograd's own thread: backward open on main, none here. */
static void *autograd(void *arg)
{
	(void)arg;
	sem_wait(&go_autograd);
	blocks[5] = malloc(1005); /* gradient, s1 */
	sem_post(&autograd_done);
	return NULL;
}

/* Spans opened on several threads at once: their ids must follow their starts. */
static void *racer(void *arg)
{
	(void)arg;
	for (int i = 0; i < 2000; i++)
		cgprobe_span_end_opt(cgprobe_span_begin_opt("race", CGPROBE_STEP_NONE));
	return NULL;
}

int main(void)
{
	pthread_t tw, ta;
	sem_init(&go_worker, 0, 0);
	sem_init(&worker_done, 0, 0);
	sem_init(&go_autograd, 0, 0);
	sem_init(&autograd_done, 0, 0);
	if (pthread_create(&tw, NULL, worker, NULL) || pthread_create(&ta, NULL, autograd, NULL))
		return 3;
	say("thread-name", cgprobe_thread_name_opt("trainer"));
	say("update", (long long)cgprobe_update_begin_opt());

	uint64_t f =
	    cgprobe_span_begin_ex_opt("forward", CGPROBE_STEP_FORWARD, CGPROBE_KIND_MODULE, 0);
	say("forward", (long long)f);
	blocks[1] = malloc(1001); /* activation, forward */
	uint64_t in = cgprobe_span_begin_ex_opt("linear", CGPROBE_STEP_NONE, CGPROBE_KIND_OP, 0);
	say("linear", (long long)in);
	blocks[2] = malloc(1002); /* activation, linear */
	sem_post(&go_worker);
	sem_wait(&worker_done);
	free(blocks[2]);
	blocks[2] = NULL;
	cgprobe_span_end_opt(in);
	cgprobe_span_end_opt(f);

	uint64_t b = cgprobe_span_begin_opt("backward", CGPROBE_STEP_BACKWARD);
	say("backward", (long long)b);
	blocks[7] = malloc(1007); /* gradient, backward: activations retained then: 3008 */
	sem_post(&go_autograd);
	sem_wait(&autograd_done);
	free(blocks[1]);
	blocks[1] = NULL;
	cgprobe_span_end_opt(b);

	uint64_t o = cgprobe_span_begin_opt("optimizer", CGPROBE_STEP_OPTIMIZER);
	say("optimizer", (long long)o);
	blocks[6] = malloc(1006); /* optimizer */
	cgprobe_span_end_opt(o);
	blocks[8] = malloc(1008); /* other, s1 */

	say("gradient", cgprobe_gradient_opt("model", "w1", CGPROBE_GRAD_PRESENT, 1.5));
	say("gradient-none", cgprobe_gradient_opt("model", "w2", CGPROBE_GRAD_MISSING, NAN));
	say("checkpoint", cgprobe_device_checkpoint_opt("cuda:0", 100, 900, 500, 300));
	say("checkpoint-bare",
	    cgprobe_device_checkpoint_opt("cuda:1", 7, 8, UINT64_MAX, UINT64_MAX));

	/* An end that is not the innermost: an error, warned once, never a crash. */
	uint64_t x = cgprobe_span_begin_opt("outer", CGPROBE_STEP_NONE);
	uint64_t y = cgprobe_span_begin_opt("inner", CGPROBE_STEP_NONE);
	say("end-outer-first", cgprobe_span_end_opt(x));
	say("end-outer-again", cgprobe_span_end_opt(x));
	say("end-inner", cgprobe_span_end_opt(y));
	say("end-outer", cgprobe_span_end_opt(x));
	say("end-none", cgprobe_span_end_opt(x));

	uint64_t m = cgprobe_span_begin_ex_opt("measured", CGPROBE_STEP_NONE, CGPROBE_KIND_FUNCTION,
	                                       CGPROBE_SPAN_MEASURED);
	say("measured", (long long)m);
	cgprobe_span_end_opt(m);
	say("update-end", cgprobe_update_end_opt());
	say("update-end-again", cgprobe_update_end_opt());
	say("update-2", (long long)cgprobe_update_begin_opt());
	say("update-2-end", cgprobe_update_end_opt());

	/*
	 * Parameters: the heap grows upward, so blocks made after marking
	 * 64 MiB from a small block on lie inside the range.
	 */
	blocks[9] = malloc(16);
	say("mark", cgprobe_mark_parameters_opt(blocks[9], 64u << 20));
	say("mark-empty", cgprobe_mark_parameters_opt(blocks[9], 0));
	blocks[10] = malloc(1010); /* parameter */
	say("flush", cgprobe_flush_opt());
	pthread_t racers[4];
	for (int i = 0; i < 4; i++)
		if (pthread_create(&racers[i], NULL, racer, NULL))
			return 3;
	for (int i = 0; i < 4; i++)
		pthread_join(racers[i], NULL);
	pthread_join(tw, NULL);
	pthread_join(ta, NULL);
	for (int i = 0; i < 16; i++)
		free(blocks[i]);
	say("done", 0);
	return 0;
}

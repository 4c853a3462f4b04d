/* SPDX-License-Identifier: MIT */
/* The threads that read a job's traces, and the order their answers are folded in. */
#include "cli-pool.h"

#include <pthread.h>
#include <stdlib.h>

struct pool {
	const struct cli_pool_ops *ops;
	void *user;
	size_t n;
	pthread_mutex_t lock;
	pthread_cond_t turn;
	size_t next_read, next_fold; /* under lock */
};

/*
 * Takes items until none is left. A thread holds one item's state at a
 * time and waits with it for the item's turn: the item folded last is
 * always the lowest one not yet folded, which a thread is reading or
 * holding, so the wait ends.
 */
static void *worker(void *arg)
{
	struct pool *p = arg;
	for (;;) {
		pthread_mutex_lock(&p->lock);
		size_t i = p->next_read < p->n ? p->next_read++ : p->n;
		pthread_mutex_unlock(&p->lock);
		if (i == p->n)
			return NULL;
		void *state = NULL;
		int status = p->ops->read(p->user, i, &state);
		pthread_mutex_lock(&p->lock);
		while (p->next_fold != i)
			pthread_cond_wait(&p->turn, &p->lock);
		pthread_mutex_unlock(&p->lock);
		p->ops->fold(p->user, i, state, status);
		pthread_mutex_lock(&p->lock);
		p->next_fold++;
		pthread_cond_broadcast(&p->turn);
		pthread_mutex_unlock(&p->lock);
	}
}

void cli_pool_run(size_t n, size_t threads, const struct cli_pool_ops *ops, void *user)
{
	struct pool p = {.ops = ops, .user = user, .n = n};
	pthread_t *t = threads > 1 && n > 1 ? calloc(threads < n ? threads : n, sizeof(*t)) : NULL;
	size_t started = 0;
	pthread_mutex_init(&p.lock, NULL);
	pthread_cond_init(&p.turn, NULL);
	while (t && started < threads && started < n &&
	       pthread_create(&t[started], NULL, worker, &p) == 0)
		started++;
	/* Fewer threads than asked still read every item; none at all, this one does. */
	if (!started)
		worker(&p);
	for (size_t k = 0; k < started; k++)
		pthread_join(t[k], NULL);
	pthread_cond_destroy(&p.turn);
	pthread_mutex_destroy(&p.lock);
	free(t);
}

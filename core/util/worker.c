/* SPDX-License-Identifier: MIT */
#include "worker.h"

#include <signal.h>

void cg_thread_start(struct cg_thread *t, void *(*fn)(void *), void *arg)
{
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	t->started = pthread_create(&t->tid, NULL, fn, arg) == 0;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

void cg_thread_join(struct cg_thread *t)
{
	if (t->started)
		pthread_join(t->tid, NULL);
}

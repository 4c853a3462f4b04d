/* SPDX-License-Identifier: MIT */
/*
 * A worker thread of the library's own (a read's producer): started with
 * every signal blocked, so that the signals meant for the application are
 * never delivered to it.
 */
#ifndef CG_WORKER_H
#define CG_WORKER_H

#include <pthread.h>
#include <stdbool.h>

struct cg_thread {
	pthread_t tid;
	bool started; /* false: none could be made, the caller does the work itself */
};

void cg_thread_start(struct cg_thread *t, void *(*fn)(void *), void *arg);
/* Waits for the thread's end, when one was started. */
void cg_thread_join(struct cg_thread *t);

#endif

/* SPDX-License-Identifier: MIT */
/*
 * The traces of a job read on several threads, answered in order: each
 * item is read on whichever thread is free (its document, its rows), then
 * folded into the answer strictly in item order, one at a time, so the
 * output and its errors are the same whatever --jobs says.
 */
#ifndef CLI_POOL_H
#define CLI_POOL_H

#include <stddef.h>

struct cli_pool_ops {
	/*
	 * Item i read, on any thread, at most `threads` at once: *state is
	 * what fold gets. Returns the item's status (the fold sees it).
	 */
	int (*read)(void *user, size_t i, void **state);
	/* Item i, in order i = 0, 1, ... on one thread at a time: frees state. */
	void (*fold)(void *user, size_t i, void *state, int status);
};

/*
 * Every item of n through ops, on up to threads threads (0, 1: this one;
 * where no thread starts, this one too); an item waits, read, for its
 * turn to fold, so at most `threads` states are held at once.
 */
void cli_pool_run(size_t n, size_t threads, const struct cli_pool_ops *ops, void *user);

#endif

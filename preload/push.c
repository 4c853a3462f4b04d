/* SPDX-License-Identifier: MIT */
#include "push.h"

#include <errno.h>

#include "state.h"

bool cg_push_keep_waiting(void)
{
	return cg_recording();
}

/* errno is kept across the ring's mmap. */
__attribute__((noinline)) bool cg_push_claim(void)
{
	int saved = errno;
	cg_self.ring = cg_ring_claim();
	errno = saved;
	return cg_self.ring != NULL;
}

struct cg_ring *cg_push_ring(void)
{
	if (__builtin_expect(!cg_self.ring, 0) && !cg_push_claim())
		return NULL;
	return cg_self.ring;
}

bool cg_push_n(const struct cg_event *ev, unsigned n)
{
	struct cg_ring *r = cg_push_ring();
	return r && cg_ring_push_n(r, ev, n, cg_push_keep_waiting);
}

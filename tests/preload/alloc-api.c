/* SPDX-License-Identifier: MIT */
/*
 * Every wrapped allocation function, on its success and error paths. What
 * each call returned, and errno, is an R line: the probe must change none
 * of it. The blocks it gets and ends are A and F lines; one block stays live.
 */
#define PROG "alloc-api"
#include <malloc.h>
#include <stdlib.h>

#include "prog.h"

static void failed(const char *what, const void *p, int err)
{
	say("R %s %s errno=%d", what, p ? "non-null" : "null", err);
}

static void aligned(const char *what, const void *p, size_t align)
{
	say("R %s aligned=%d", what, p && ((uintptr_t)p % align) == 0);
}

static void error_paths(char *keep, size_t keep_size)
{
	size_t huge = opaque(SIZE_MAX - 4096);
	void *p, *q;
	int r;

	errno = 0;
	p = malloc(huge);
	failed("malloc-huge", p, errno);

	errno = 0;
	p = calloc(opaque(SIZE_MAX / 2), 4);
	failed("calloc-overflow", p, errno);

	errno = 0;
	p = calloc(opaque(1) << 62, 1);
	failed("calloc-huge", p, errno);

	/*
	 * A failed realloc leaves the block live: its free later must still be
	 * recorded. (opaque_ptr: gcc's -Wuse-after-free cannot know they fail.)
	 */
	errno = 0;
	p = realloc(opaque_ptr(keep), huge);
	failed("realloc-huge", p, errno);
	say("R realloc-huge kept=%d", keep[0] == 'k' && keep[keep_size - 1] == 'k');

	errno = 0;
	p = reallocarray(opaque_ptr(keep), opaque(SIZE_MAX / 2), 3);
	failed("reallocarray-overflow", p, errno);

	errno = 0;
	p = reallocarray(NULL, opaque(SIZE_MAX / 4), 8);
	failed("reallocarray-null-overflow", p, errno);

	errno = 0;
	q = (void *)&errno;
	r = posix_memalign(&q, 3, 16);
	say("R posix_memalign-align3 r=%d untouched=%d errno=%d", r, q == (void *)&errno, errno);

	errno = 0;
	q = (void *)&errno;
	r = posix_memalign(&q, 24, 16);
	say("R posix_memalign-align24 r=%d untouched=%d errno=%d", r, q == (void *)&errno, errno);

	errno = 0;
	q = (void *)&errno;
	r = posix_memalign(&q, 64, huge);
	say("R posix_memalign-huge r=%d untouched=%d errno=%d", r, q == (void *)&errno, errno);

	errno = 0;
	p = aligned_alloc(64, huge);
	failed("aligned_alloc-huge", p, errno);

	errno = 0;
	p = memalign(64, huge);
	failed("memalign-huge", p, errno);

	errno = 0;
	p = valloc(huge);
	failed("valloc-huge", p, errno);

	errno = 0;
	p = pvalloc(huge);
	failed("pvalloc-huge", p, errno);

	/* Nothing to record, nothing to change. */
	errno = 1234;
	free(NULL);
	say("R free-null errno=%d", errno);
}

int main(void)
{
	char *a0, *a1, *a2, *a, *b, *c, *d, *e, *f, *g, *h, *i, *j, *k, *s;
	void *v = NULL;

	/* A successful call leaves errno alone, with or without the probe. */
	errno = 4321;
	a0 = got("malloc", malloc(100), 100);
	say("R malloc errno=%d", errno);
	memset(a0, 'a', 100);

	b = got("calloc", calloc(10, 30), 300);
	say("R calloc zeroed=%d", b && b[0] == 0 && b[299] == 0);

	gone("realloc", a0, 100);
	a1 = got("realloc", realloc(a0, 5000), 5000);
	say("R realloc-grow kept=%d", a1 && a1[0] == 'a' && a1[99] == 'a');

	gone("realloc", a1, 5000);
	a2 = got("realloc", realloc(a1, 40), 40);
	say("R realloc-shrink kept=%d", a2 && a2[0] == 'a' && a2[39] == 'a');

	gone("reallocarray", a2, 40);
	a = got("reallocarray", reallocarray(a2, 7, 9), 63);

	c = got("realloc", realloc(NULL, 50), 50);
	d = got("reallocarray", reallocarray(NULL, 3, 5), 15);

	int r = posix_memalign(&v, 64, 200);
	say("R posix_memalign r=%d", r);
	e = got("posix_memalign", v, 200);
	aligned("posix_memalign", e, 64);

	f = got("aligned_alloc", aligned_alloc(32, 64), 64);
	aligned("aligned_alloc", f, 32);
	g = got("memalign", memalign(128, 100), 100);
	aligned("memalign", g, 128);
	h = got("valloc", valloc(100), 100);
	aligned("valloc", h, 4096);
	i = got("pvalloc", pvalloc(100), 100);
	aligned("pvalloc", i, 4096);

	/* Zero bytes is still an allocation glibc hands out. */
	j = got("malloc", malloc(0), 0);
	say("R malloc-zero %s", j ? "non-null" : "null");

	/* libc's own calls to malloc are the program's too. */
	s = strdup("abcdef");
	got("malloc", s, 7);

	k = got("malloc", malloc(64), 64);
	memset(k, 'k', 64);
	error_paths(k, 64);

	/* realloc to zero frees: one record, no new block. */
	gone("realloc", c, 50);
	errno = 0;
	void *z = realloc(c, 0);
	say("R realloc-zero %s errno=%d", z ? "non-null" : "null", errno);
	got("realloc", z, 0);

	char *blocks[] = {a, b, d, e, f, g, h, i, j, s, k};
	size_t sizes[] = {63, 300, 15, 200, 64, 100, 100, 100, 0, 7, 64};
	for (size_t n = 0; n < sizeof(blocks) / sizeof(blocks[0]); n++) {
		gone("free", blocks[n], sizes[n]);
		free(blocks[n]);
	}

	/* Left live at exit on purpose. */
	got("malloc", malloc(4242), 4242);
	return 0;
}

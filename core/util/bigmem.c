/* SPDX-License-Identifier: MIT */
#include "bigmem.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define BIG (2u << 20)

static void *map(size_t n)
{
	void *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	madvise(p, n, MADV_HUGEPAGE);
	return p;
}

static size_t round_big(size_t n)
{
	return (n + BIG - 1) & ~(size_t)(BIG - 1);
}

void *cg_big_realloc(void *p, size_t old, size_t n)
{
	if (n < BIG)
		return realloc(p, n);
	if (old < BIG) {
		void *q = map(round_big(n));
		if (q && p)
			memcpy(q, p, old);
		if (q)
			free(p);
		return q;
	}
	if (round_big(old) >= round_big(n))
		return p;
	void *q = mremap(p, round_big(old), round_big(n), MREMAP_MAYMOVE);
	if (q == MAP_FAILED)
		return NULL;
	madvise(q, round_big(n), MADV_HUGEPAGE);
	return q;
}

void cg_big_free(void *p, size_t size)
{
	if (!p)
		return;
	if (size < BIG)
		free(p);
	else
		munmap(p, round_big(size));
}

/* SPDX-License-Identifier: MIT */
/*
 * A known call chain for cgtrace top under the probe (test-sites-probe.sh):
 * make_buf() calls malloc at one line, reached from two callers, and
 * keep_one() leaks. The lines the frames must resolve to go to stderr:
 *	lines MALLOC_IN_MAKE_BUF CALL_IN_FIRST CALL_IN_SECOND MALLOC_IN_KEEP
 */
#include <stdio.h>
#include <stdlib.h>

#define FRAME __attribute__((noinline))
#define KEEP(p) __asm__ volatile("" : : "r"(p) : "memory")

static int l_malloc, l_first, l_second, l_keep;

FRAME void *make_buf(size_t n);
FRAME void *first_caller(void);
FRAME void *second_caller(void);
FRAME void *keep_one(void);

FRAME void *make_buf(size_t n)
{
	l_malloc = __LINE__ + 1;
	void *p = malloc(n);
	KEEP(p);
	return p;
}

FRAME void *first_caller(void)
{
	l_first = __LINE__ + 1;
	void *p = make_buf(70000);
	KEEP(p);
	return p;
}

FRAME void *second_caller(void)
{
	l_second = __LINE__ + 1;
	void *p = make_buf(30000);
	KEEP(p);
	return p;
}

FRAME void *keep_one(void)
{
	l_keep = __LINE__ + 1;
	void *p = malloc(4321);
	KEEP(p);
	return p;
}

int main(void)
{
	void *a = first_caller();
	void *b = second_caller();
	static void *leak;
	leak = keep_one();
	KEEP(leak);
	free(a);
	free(b);
	fprintf(stderr, "lines %d %d %d %d\n", l_malloc, l_first, l_second, l_keep);
	return 0;
}

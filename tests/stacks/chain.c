/* SPDX-License-Identifier: MIT */
/*
 * Known call chains for the stacks suite (test-probe-stacks.c): 4242 bytes
 * (run without arguments) through main -> a_outer -> b_middle -> c_inner -> malloc, twice from one
 * call site (one stack), and 4343 bytes reaching c_inner through d_other
 * instead (a second stack for the same site). Built -O1 -g, each function
 * noinline and using its callee's result after the call, so every frame
 * stays a frame.
 */
#include <stdlib.h>

#define FRAME __attribute__((noinline))
#define KEEP(p) __asm__ volatile("" : : "r"(p) : "memory")

FRAME void *c_inner(size_t n)
{
	void *p = malloc(n);
	KEEP(p);
	return p;
}

FRAME void *b_middle(size_t n)
{
	void *p = c_inner(n);
	KEEP(p);
	return p;
}

FRAME void *a_outer(size_t n)
{
	void *p = b_middle(n);
	KEEP(p);
	return p;
}

FRAME void *d_other(size_t n)
{
	void *p = c_inner(n);
	KEEP(p);
	return p;
}

int main(int argc, char **argv)
{
	(void)argv;
	void *keep[3];
	/* A loop the compiler cannot unroll into two call sites. */
	for (int i = 0; i < argc + 1; i++)
		keep[i] = a_outer(4242);
	keep[2] = d_other(4343);
	for (int i = 0; i < 3; i++)
		free(keep[i]);
	return 0;
}

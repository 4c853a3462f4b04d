/* SPDX-License-Identifier: MIT */
/*
 * Opened by dlopen.c: its constructor allocates 7171 bytes from lib_ctor
 * while dlopen runs (the loader's lock held), lib_alloc 7272 after.
 */
#include <stdlib.h>

#define FRAME __attribute__((noinline))
#define KEEP(p) __asm__ volatile("" : : "r"(p) : "memory")

void *lib_kept;

FRAME __attribute__((constructor)) static void lib_ctor(void)
{
	lib_kept = malloc(7171);
	KEEP(lib_kept);
}

FRAME void *lib_alloc(void)
{
	void *p = malloc(7272);
	KEEP(p);
	return p;
}

/* SPDX-License-Identifier: MIT */
/*
 * A library opened, used, closed and opened again (most likely at the same
 * addresses): lib_alloc's 7272 bytes each time, through the same frames.
 *
 *   stacks-reload LIB
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) static int use(const char *lib)
{
	void *h = dlopen(lib, RTLD_NOW);
	if (!h) {
		fprintf(stderr, "%s\n", dlerror());
		return 1;
	}
	void *(*lib_alloc)(void) = (void *(*)(void))dlsym(h, "lib_alloc");
	void **kept = (void **)dlsym(h, "lib_kept");
	if (!lib_alloc || !kept)
		return 1;
	free(lib_alloc());
	free(*kept);
	printf("%p\n", (void *)lib_alloc);
	return dlclose(h) != 0;
}

int main(int argc, char **argv)
{
	if (argc != 2)
		return 2;
	/* One call site for both uses (a count the compiler cannot peel): the same frames. */
	volatile int uses = 2;
	for (int i = 0; i < uses; i++)
		if (use(argv[1]))
			return 1;
	return 0;
}

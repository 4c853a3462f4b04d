/* SPDX-License-Identifier: MIT */
/*
 * Allocations called back from libraries built without frame pointers:
 * 8181 bytes through libstacks-nofp (unwind tables), 8282 through
 * libstacks-nounwind (none), both from cb_site.
 *
 *   stacks-nofp NOFP_LIB NOUNWIND_LIB
 */
#include <dlfcn.h>
#include <stdlib.h>

__attribute__((noinline)) void *cb_site(size_t n)
{
	void *p = malloc(n);
	__asm__ volatile("" : : "r"(p) : "memory");
	return p;
}

static void *through(const char *lib, size_t n)
{
	void *h = dlopen(lib, RTLD_NOW);
	void *(*call)(void *(*)(size_t), size_t) =
	    h ? (void *(*)(void *(*)(size_t), size_t))dlsym(h, "nofp_call") : NULL;
	return call ? call(cb_site, n) : NULL;
}

int main(int argc, char **argv)
{
	if (argc != 3)
		return 2;
	void *a = through(argv[1], 8181), *b = through(argv[2], 8282);
	free(a);
	free(b);
	return a && b ? 0 : 1;
}

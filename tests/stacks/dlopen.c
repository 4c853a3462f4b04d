/* SPDX-License-Identifier: MIT */
/*
 * dlopen LIB while a second thread allocates without pause: the library's
 * constructor allocates under the loader's lock, the thread's hooks unwind
 * (and may look up new addresses) at the same time. Then lib_alloc.
 *
 *   stacks-dlopen LIB
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

static atomic_int done;

static void *churn(void *arg)
{
	(void)arg;
	while (!atomic_load(&done)) {
		void *p = malloc(100);
		__asm__ volatile("" : : "r"(p) : "memory");
		free(p);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 2)
		return 2;
	pthread_t t;
	if (pthread_create(&t, NULL, churn, NULL) != 0)
		return 1;
	void *h = dlopen(argv[1], RTLD_NOW);
	if (!h) {
		fprintf(stderr, "%s\n", dlerror());
		return 1;
	}
	void *(*lib_alloc)(void) = (void *(*)(void))dlsym(h, "lib_alloc");
	free(lib_alloc ? lib_alloc() : NULL);
	atomic_store(&done, 1);
	pthread_join(t, NULL);
	return lib_alloc ? 0 : 1;
}

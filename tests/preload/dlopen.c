/* SPDX-License-Identifier: MIT */
/*
 * Loads tests/preload/dlopen-lib.c and lets it allocate: in its constructor,
 * through malloc and through strdup. MODE deepbind loads it twice with
 * RTLD_DEEPBIND (the probe warns once).
 * Usage: dlopen plain|deepbind LIBRARY
 */
#define PROG "dlopen"
#include <dlfcn.h>
#include <stdlib.h>

#include "prog.h"

int main(int argc, char **argv)
{
	if (argc < 3)
		return 2;
	int deep = !strcmp(argv[1], "deepbind");
	int flags = RTLD_NOW | RTLD_LOCAL | (deep ? RTLD_DEEPBIND : 0);
	void *h = dlopen(argv[2], flags);
	say("R loaded %d", h != NULL);
	if (!h)
		return 3;
	if (deep) {
		void *again = dlopen(argv[2], flags);
		say("R loaded-again same=%d", again == h);
		if (again)
			dlclose(again);
	}
	void **state = dlsym(h, "lib_state");
	size_t *state_size = dlsym(h, "lib_state_size");
	void *(*lib_alloc)(size_t) = (void *(*)(size_t))dlsym(h, "lib_alloc");
	char *(*lib_dup)(const char *) = (char *(*)(const char *))dlsym(h, "lib_dup");
	void (*lib_free)(void *) = (void (*)(void *))dlsym(h, "lib_free");
	if (!state || !state_size || !lib_alloc || !lib_dup || !lib_free)
		return 4;

	got("malloc", *state, *state_size);
	char *p = got("malloc", lib_alloc(5555), 5555);
	char *s = got("malloc", lib_dup("library"), 8);
	say("R dup %s", s ? s : "(null)");
	gone("free", p, 5555);
	lib_free(p);
	gone("free", s, 8);
	lib_free(s);
	gone("free", *state, *state_size);
	lib_free(*state);
	*state = NULL;
	return 0;
}

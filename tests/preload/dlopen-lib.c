/* SPDX-License-Identifier: MIT */
/*
 * A library loaded with dlopen that allocates: in its constructor and in
 * the functions the program calls. With RTLD_DEEPBIND its calls to malloc
 * would bind to libc past the probe, unless the probe drops the flag.
 */
#include <stdlib.h>
#include <string.h>

#define LIB_EXPORT __attribute__((visibility("default")))

LIB_EXPORT void *lib_state;
LIB_EXPORT size_t lib_state_size = 6666;

LIB_EXPORT void *lib_alloc(size_t n);
LIB_EXPORT char *lib_dup(const char *s);
LIB_EXPORT void lib_free(void *p);

__attribute__((constructor)) static void lib_init(void)
{
	lib_state = malloc(lib_state_size);
	if (lib_state)
		memset(lib_state, 0, lib_state_size);
}

void *lib_alloc(size_t n)
{
	return malloc(n);
}

char *lib_dup(const char *s)
{
	return strdup(s);
}

void lib_free(void *p)
{
	free(p);
}

/* SPDX-License-Identifier: MIT */
/*
 * The smallest traced program: one block allocated and freed. The target of
 * exec and posix_spawn, and the subject of the option and fault tests.
 * Usage: hello [EXIT_STATUS]
 */
#define PROG "hello"
#include <stdlib.h>

#include "prog.h"

int main(int argc, char **argv)
{
	char *p = got("malloc", malloc(4321), 4321);
	if (!p)
		return 99;
	memset(p, 'h', 4321);
	say("R hello argc=%d sum=%d", argc, p[0] + p[4320]);
	gone("free", p, 4321);
	free(p);
	return argc > 1 ? atoi(argv[1]) : 0;
}

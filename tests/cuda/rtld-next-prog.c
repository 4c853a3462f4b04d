/* SPDX-License-Identifier: MIT */
/*
 * The program under rtld-next-lib.so: N mallocs (default 10) of 1000 + i
 * bytes, each freed, so the library's count and the probe's records can be
 * checked against known calls. Usage: rtld-next-prog [N]
 *
 * Output: cuda-prog.h's lines (A/F with WHERE `cpu`).
 */
#include <stdlib.h>

#include "cuda-prog.h"

int main(int argc, char **argv)
{
	prog_init(argv[0]);
	int n = argc > 1 ? atoi(argv[1]) : 10;
	for (int i = 0; i < n; i++) {
		size_t bytes = 1000 + (size_t)i;
		void *volatile p = malloc(bytes);
		if (!p) {
			fail("malloc(%zu)", bytes);
			continue;
		}
		say("A malloc %p %zu cpu", p, bytes);
		memset(p, i, bytes);
		say("F free %p %zu cpu", p, bytes);
		free(p);
	}
	say("R mallocs %d", n);
	say("R done %s", prog_failed ? "with failures" : "ok");
	return prog_failed;
}

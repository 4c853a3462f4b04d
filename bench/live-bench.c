/* SPDX-License-Identifier: MIT */
/*
 * Many allocations live at once, the case that stresses a profiler's
 * table of live blocks: N small blocks (16 to 63 bytes) are allocated,
 * then freed in random order, as an interpreter or a parser tearing down
 * a large structure does. Prints a checksum so nothing is elided.
 *
 *   live-bench [N]   (default 2000000)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "xorshift.h"

static uint64_t next(uint64_t *s)
{
	return xorshift64(s);
}

int main(int argc, char **argv)
{
	size_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 2000000;
	uint64_t seed = 88172645463325252ull, sum = 0;
	void **blocks = malloc(n * sizeof(*blocks));
	if (!blocks)
		return 1;
	for (size_t i = 0; i < n; i++) {
		blocks[i] = malloc(16 + next(&seed) % 48);
		if (!blocks[i])
			return 1;
		*(volatile char *)blocks[i] = (char)i;
	}
	for (size_t i = n; i > 1; i--) {
		size_t j = next(&seed) % i;
		void *t = blocks[i - 1];
		blocks[i - 1] = blocks[j];
		blocks[j] = t;
	}
	for (size_t i = 0; i < n; i++) {
		sum += (uintptr_t)blocks[i] & 0xff0;
		free(blocks[i]);
	}
	free(blocks);
	printf("%zu blocks, checksum %llu\n", n, (unsigned long long)sum);
	return 0;
}

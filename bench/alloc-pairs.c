/* SPDX-License-Identifier: MIT */
/*
 * Peer workload for the reader benchmark: PAIRS malloc+free pairs of mixed
 * sizes (16..4096 bytes, deterministic PRNG) over a ring of live blocks, so
 * that a heap profiler such as heaptrack records 2 * PAIRS allocation events
 * (PAIRS allocations and PAIRS frees) and the frees are not immediate.
 *
 *   alloc-pairs PAIRS
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xorshift.h"

enum { LIVE = 4096 };

static uint64_t rng = XORSHIFT_SEED;

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: alloc-pairs PAIRS\n");
		return 2;
	}
	char *end;
	uint64_t pairs = strtoull(argv[1], &end, 10);
	if (*argv[1] == '\0' || *end != '\0') {
		fprintf(stderr, "alloc-pairs: bad PAIRS '%s'\n", argv[1]);
		return 2;
	}
	static unsigned char *live[LIVE];
	uint64_t sum = 0, frees = 0;
	for (uint64_t i = 0; i < pairs; i++) {
		size_t k = (size_t)(xorshift64(&rng) % LIVE);
		if (live[k]) {
			sum += live[k][0];
			free(live[k]);
			frees++;
		}
		size_t n = 16 + (size_t)(xorshift64(&rng) % (4096 - 16 + 1));
		unsigned char *p = malloc(n);
		if (!p) {
			fprintf(stderr, "alloc-pairs: out of memory\n");
			return 1;
		}
		/* Touch the block and fold its address in, so neither the
		 * allocation nor the free can be elided. */
		p[0] = (unsigned char)i;
		p[n - 1] = (unsigned char)(n >> 4);
		sum += (uintptr_t)p >> 4;
		live[k] = p;
	}
	for (size_t k = 0; k < LIVE; k++) {
		if (live[k]) {
			sum += live[k][0];
			free(live[k]);
			frees++;
		}
	}
	printf("%" PRIu64 " allocs, %" PRIu64 " frees, checksum %016" PRIx64 "\n", pairs, frees, sum);
	return frees == pairs ? 0 : 1;
}

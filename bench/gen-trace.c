/* SPDX-License-Identifier: MIT */
/*
 * Writes a synthetic heap trace through the public session API: N memory
 * records from a small set of call sites, addresses reused the way malloc
 * reuses them, sizes mixed, with a steady working set. Used by the reader
 * benchmark and as a large-trace smoke test.
 *
 *   gen-trace OUT RECORDS [THREADS_INTERLEAVED]
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cgtrace.h"
#include "xorshift.h"

static uint64_t rng = XORSHIFT_SEED;

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: gen-trace OUT RECORDS\n");
		return 2;
	}
	uint64_t records = strtoull(argv[2], NULL, 10);
	struct cgtrace_run run = {
		.entrypoint = "bench",
		.capture_step = 1,
		.device = "cpu",
	};
	struct cgtrace_session *s;
	int r = cgtrace_session_open(&s, argv[1], &run);
	if (r < 0) {
		fprintf(stderr, "%s: %s\n", argv[1], strerror(-r));
		return 1;
	}
	/* A working set of 4096 live blocks; each step frees one and allocates one. */
	enum { LIVE = 4096 };
	static uint64_t addr[LIVE], size[LIVE];
	static const char *const ops[] = {"malloc", "calloc", "realloc", "posix_memalign"};
	uint64_t next_addr = 0x55d0c8a2b000ull, ts = 0;
	char id[32];
	uint64_t written = 0;
	for (size_t i = 0; i < LIVE && written < records; i++, written++) {
		addr[i] = next_addr;
		size[i] = 16 + xorshift64(&rng) % 4096;
		next_addr += (size[i] + 31) & ~15ull;
		snprintf(id, sizeof(id), "0x%" PRIx64, addr[i]);
		struct cgtrace_memory_record m = {
			.tensor_id = id, .op_name = ops[i % 4], .device = "cpu",
			.bytes = size[i], .shape = &size[i], .ndim = 1, .dtype = "u8",
			.category = CGTRACE_CAT_OTHER, .has_timestamp = true, .timestamp_ns = ts += 37,
		};
		cgtrace_session_record_alloc(s, 1, &m);
	}
	while (written + 2 <= records) {
		size_t k = xorshift64(&rng) % LIVE;
		snprintf(id, sizeof(id), "0x%" PRIx64, addr[k]);
		struct cgtrace_memory_record m = {
			.tensor_id = id, .op_name = "free", .device = "cpu",
			.bytes = size[k], .shape = &size[k], .ndim = 1, .dtype = "u8",
			.category = CGTRACE_CAT_OTHER, .has_timestamp = true, .timestamp_ns = ts += 41,
		};
		cgtrace_session_record_free(s, 1, &m);
		/* Freed blocks are reused half of the time, as a size-class allocator does. */
		if (xorshift64(&rng) % 2) {
			addr[k] = next_addr;
			next_addr += 4096;
		}
		size[k] = 16 + xorshift64(&rng) % 4096;
		snprintf(id, sizeof(id), "0x%" PRIx64, addr[k]);
		m.op_name = ops[xorshift64(&rng) % 4];
		m.bytes = size[k];
		m.shape = &size[k];
		m.timestamp_ns = ts += 29;
		cgtrace_session_record_alloc(s, 1, &m);
		written += 2;
	}
	r = cgtrace_session_finish(s);
	if (r < 0) {
		fprintf(stderr, "%s: %s\n", argv[1], strerror(-r));
		return 1;
	}
	return 0;
}

/* SPDX-License-Identifier: MIT */
/*
 * Writes a synthetic training trace (JSONL) of UPDATES marked updates for
 * steps-bench.sh: each update a span with cgprobe_update, a data phase
 * (one batch), a forward step (four activations), a backward step (four
 * gradients made, the activations freed), an optimizer step (the
 * gradients and the batch freed), every allocation with one of a few call
 * stacks; one update in 100 keeps a small block to the end (the growth
 * steps --growth finds). 18 memory records and 10 span records an update.
 *
 *   gen-steps UPDATES > trace.jsonl
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

static uint64_t span_id = 1;

static uint64_t span_start(uint64_t ts, const char *name, const char *extra)
{
	uint64_t id = ++span_id;
	printf("{\"kind\":\"span_start\",\"id\":\"s%" PRIu64 "\",\"parent_id\":\"s1\",\"name\":\"%s\","
	       "\"start_ns\":%" PRIu64 ",\"span_kind\":\"function\",\"measured\":false%s}\n",
	       id, name, ts, extra);
	return id;
}

static void span_end(uint64_t id, uint64_t start, uint64_t ts)
{
	printf("{\"kind\":\"span_end\",\"id\":\"s%" PRIu64 "\",\"duration_ns\":%" PRIu64 "}\n", id,
	       ts - start);
}

static uint64_t stacks_defined; /* a bit per stack id */

static void mem(uint64_t ts, uint64_t addr, uint64_t bytes, int alloc, const char *cat,
		uint64_t stack)
{
	printf("{\"kind\":\"memory\",\"timestamp_ns\":%" PRIu64 ",\"tensor_id\":\"0x%" PRIx64 "\","
	       "\"span_id\":\"s1\",\"device\":\"cpu\",\"bytes\":%" PRIu64 ",\"action\":\"%s\","
	       "\"dtype\":\"u8\",\"category\":\"%s\"",
	       ts, addr, bytes, alloc ? "alloc" : "free", cat);
	if (alloc) {
		printf(",\"cgprobe_stack\":%" PRIu64, stack);
		if (!(stacks_defined >> stack & 1)) {
			printf(",\"cgprobe_stack_frames\":[\"0x%" PRIx64 "\"]", 0x401000 + stack * 0x40);
			stacks_defined |= 1ull << stack;
		}
	}
	fputs("}\n", stdout);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: gen-steps UPDATES > trace.jsonl\n");
		return 2;
	}
	uint64_t updates = strtoull(argv[1], NULL, 10);
	printf("{\"kind\":\"meta\",\"schema\":\"candle-graph/trace/6\",\"run_id\":\"bench\","
	       "\"correlation_id\":\"bench/update-1\",\"entrypoint\":\"bench\",\"phase\":\"train\","
	       "\"timestamp\":\"2026-12-07T00:00:00.000Z\",\"capture_step\":1,\"warmup_steps\":0,"
	       "\"device\":\"cpu\",\"timing_mode\":\"host\",\"tags\":{\"cgprobe_capture\":\"all\"}}\n");
	printf("{\"kind\":\"span_start\",\"id\":\"s1\",\"name\":\"bench\",\"start_ns\":0,"
	       "\"span_kind\":\"function\",\"measured\":false}\n");
	uint64_t ts = 1000, base = 0x7f0000000000ull;
	for (uint64_t u = 1; u <= updates; u++) {
		char extra[48];
		snprintf(extra, sizeof(extra), ",\"cgprobe_update\":%" PRIu64, u);
		uint64_t t0 = ts, up = span_start(ts, "update", extra);
		uint64_t d = span_start(ts += 10, "next_batch", ",\"cgprobe_phase\":\"data\"");
		mem(ts += 10, base, 1 << 20, 1, "other", 1);
		span_end(d, ts - 10, ts + 10);
		uint64_t f = span_start(ts += 20, "forward", ",\"step\":\"forward\""), fs = ts;
		for (uint64_t k = 0; k < 4; k++)
			mem(ts += 100, base + 0x100000 * (k + 1), (k + 1) << 18, 1, "activation", 2 + k);
		if (u % 100 == 0)
			mem(ts += 10, base + 0x10000000 + u * 0x1000, 4096, 1, "activation", 6);
		span_end(f, fs, ts += 10);
		uint64_t b = span_start(ts += 10, "backward", ",\"step\":\"backward\""), bs = ts;
		for (uint64_t k = 0; k < 4; k++) {
			mem(ts += 100, base + 0x1000000 + 0x100000 * k, (k + 1) << 18, 1, "gradient",
			    7 + k);
			mem(ts += 10, base + 0x100000 * (4 - k), (4 - k) << 18, 0, "activation", 0);
		}
		span_end(b, bs, ts += 10);
		uint64_t o = span_start(ts += 10, "optimizer", ",\"step\":\"optimizer\""), os = ts;
		for (uint64_t k = 0; k < 4; k++)
			mem(ts += 50, base + 0x1000000 + 0x100000 * k, (k + 1) << 18, 0, "gradient", 0);
		mem(ts += 10, base, 1 << 20, 0, "other", 0);
		span_end(o, os, ts += 10);
		span_end(up, t0, ts += 10);
		ts += 100;
	}
	printf("{\"kind\":\"span_end\",\"id\":\"s1\",\"duration_ns\":%" PRIu64 "}\n", ts);
	return fflush(stdout) ? 1 : 0;
}

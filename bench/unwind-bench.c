/* SPDX-License-Identifier: MIT */
/*
 * What a call stack costs, by the ways of taking one the probe weighed
 * (docs/probe.md, "Call stacks"): ITERS captures from DEPTH nested calls
 * down, timed, one line out:
 *
 *   MODE DEPTH FRAMES NS_PER_CAPTURE
 *
 * Modes: backtrace (libunwind's unw_backtrace, default caching),
 * backtrace-none (UNW_CACHE_NONE, the probe's choice), backtrace-thread
 * (UNW_CACHE_PER_THREAD), probe (backtrace-none plus what the probe does
 * next: the hash and the frame-by-frame check against a per-thread cache
 * of stacks sent), cfi (the probe's fast unwinder, preload/unwind.c: each
 * frame stepped by its call-frame rule, the rules kept per address),
 * step (an unw_step loop), fp (the rbp chain: a reference
 * only, wrong through code without frame pointers). Built with frame
 * pointers so that fp has a chain to walk. The caching policy is the
 * process's: one mode per run.
 *
 *   unwind-bench MODE DEPTH ITERS
 */
#define UNW_LOCAL_ONLY
#include <libunwind.h>
#include <stdint.h>
#include <sys/mman.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "unwind.h"

#define MAX 256

enum mode { BACKTRACE, BACKTRACE_NONE, BACKTRACE_THREAD, PROBE, STEP, FP, CFI };
static const char *const names[] = {"backtrace", "backtrace-none", "backtrace-thread",
				    "probe",     "step",           "fp", "cfi"};
static struct cg_unwind_cache *rules;

static enum mode mode;
static long iters;
static void *frames[MAX];
static uint64_t cached[MAX];
static uint64_t cached_hash;
static int cached_n = -1;

static __attribute__((noinline)) int fp_walk(void **out, int max)
{
	void **fp = __builtin_frame_address(0);
	int n = 0;
	while (fp && n < max) {
		out[n++] = fp[1];
		void **next = fp[0];
		if (next <= fp)
			break;
		fp = next;
	}
	return n;
}

static int step_walk(void **out, int max)
{
	unw_context_t uc;
	unw_cursor_t c;
	unw_getcontext(&uc);
	unw_init_local(&c, &uc);
	int n = 0;
	while (n < max && unw_step(&c) > 0) {
		unw_word_t ip;
		unw_get_reg(&c, UNW_REG_IP, &ip);
		out[n++] = (void *)ip;
	}
	return n;
}

/*
 * The probe's hash (preload/stack.c: a constant of each position per frame,
 * on the unwinder's buffer as it is) and its check against the last stack
 * (memcmp, every frame).
 */
static uint64_t mult[MAX];

static void mult_setup(void)
{
	uint64_t x = 0x9e3779b97f4a7c15ull;
	for (int i = 0; i < MAX; i++) {
		uint64_t z = (x += 0x9e3779b97f4a7c15ull);
		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
		z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
		mult[i] = (z ^ (z >> 31)) | 1;
	}
}

static int checked(void **out, int max)
{
	int n = unw_backtrace(out, max);
	uint64_t h = (uint64_t)n;
	for (int i = 0; i < n; i++)
		h += (uint64_t)(uintptr_t)out[i] * mult[i];
	h ^= h >> 29;
	h *= 0xbf58476d1ce4e5b9ull;
	h ^= h >> 32;
	if (h != cached_hash || n != cached_n || memcmp(cached, out, (size_t)n * 8) != 0) {
		memcpy(cached, out, (size_t)n * 8);
		cached_hash = h;
		cached_n = n;
	}
	return n;
}

static __attribute__((noinline)) int capture(void)
{
	switch (mode) {
	case FP:
		return fp_walk(frames, MAX);
	case STEP:
		return step_walk(frames, MAX);
	case PROBE:
		return checked(frames, MAX);
	case CFI:
		return cg_unwind(frames, MAX, rules, 1);
	default:
		return unw_backtrace(frames, MAX);
	}
}

static __attribute__((noinline)) int descend(int depth)
{
	int n = 0;
	if (depth <= 1)
		for (long i = 0; i < iters; i++)
			n = capture();
	else
		n = descend(depth - 1);
	__asm__ volatile("" ::: "memory");
	return n;
}

static double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

int main(int argc, char **argv)
{
	int m = -1;
	for (int i = 0; argc == 4 && i < (int)(sizeof(names) / sizeof(names[0])); i++)
		if (strcmp(argv[1], names[i]) == 0)
			m = i;
	if (m < 0) {
		fprintf(stderr, "usage: unwind-bench backtrace|backtrace-none|backtrace-thread|probe|"
				"step|fp|cfi DEPTH ITERS\n");
		return 2;
	}
	mode = (enum mode)m;
	int depth = atoi(argv[2]);
	long want = atol(argv[3]);
	mult_setup();
	rules = mmap(NULL, sizeof(*rules), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (rules == MAP_FAILED)
		return 1;
	if (mode == BACKTRACE_NONE || mode == PROBE)
		unw_set_caching_policy(unw_local_addr_space, UNW_CACHE_NONE);
	if (mode == BACKTRACE_THREAD)
		unw_set_caching_policy(unw_local_addr_space, UNW_CACHE_PER_THREAD);
	/* A warm-up round: every address seen once, as in a long-running program. */
	iters = 100;
	descend(depth);
	iters = want;
	double t = now_ns();
	int n = descend(depth);
	double ns = (now_ns() - t) / (double)want;
	printf("%s %d %d %.1f\n", names[m], depth, n, ns);
	return 0;
}

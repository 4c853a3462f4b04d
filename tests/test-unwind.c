/* SPDX-License-Identifier: MIT */
/*
 * The fast unwinder (preload/unwind.c, preload/cfi.c) against libunwind,
 * on the stacks a program's hooks meet: plain calls at many depths, frames
 * whose CFA is rbp (alloca), two call paths whose frames sit at the same
 * addresses with different callers (the kept walk must not be taken for
 * the other path), the same where only the rbp the inner frames carry
 * tells the callers apart, a signal handler's stack, stacks changing under the
 * kept walk, and a new generation of rules. Every result is compared
 * frame by frame with unw_backtrace's from the same function.
 */
#define UNW_LOCAL_ONLY
#include <check.h>
#include <libunwind.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#include "cfi.h"
#include "test-main.h"
#include "unwind.h"

#define MAX 64

static struct cg_unwind_cache *cache;
static uint32_t epoch = 1;
static int taken; /* stacks the fast unwinder took itself */

static void cache_setup(void)
{
	cache =
	    mmap(NULL, sizeof(*cache), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ck_assert_ptr_ne(cache, MAP_FAILED);
	taken = 0;
}

static void cache_teardown(void)
{
	munmap(cache, sizeof(*cache));
}

/*
 * Both unwinders from here: the first frame is each call's own return
 * address in this function, so the comparison starts at the second.
 * Returns the fast unwinder's count (-1: it declined).
 */
static __attribute__((noinline)) int compare_here(int max)
{
	void *fast[MAX], *ref[MAX];
	int n = cg_unwind(fast, max, cache, epoch);
	int m = unw_backtrace(ref, max);
	if (n < 0)
		return n;
	taken++;
	ck_assert_int_eq(n, m);
	ck_assert_int_gt(n, 1);
	for (int i = 1; i < n; i++)
		ck_assert_msg(fast[i] == ref[i], "frame %d: %p, libunwind %p", i, fast[i], ref[i]);
	return n;
}

static __attribute__((noinline)) int nest(int depth, int max)
{
	int n = depth <= 1 ? compare_here(max) : nest(depth - 1, max);
	__asm__ volatile("" ::: "memory");
	return n;
}

#if CG_CFI_FAST
START_TEST(plain_depths)
{
	for (int round = 0; round < 3; round++)
		for (int d = 1; d <= 40; d++)
			ck_assert_int_gt(nest(d, MAX), 0);
	/* Cut at max, at every max: the same frames as libunwind's first ones. */
	for (int max = 2; max < 12; max++)
		ck_assert_int_eq(nest(20, max), max);
}
END_TEST

/* alloca makes the frame's CFA rbp + offset: the rbp chain is followed by rule. */
static __attribute__((noinline)) int with_alloca(int depth, size_t len)
{
	volatile char *p = __builtin_alloca(len);
	p[0] = (char)depth;
	int n = depth <= 1 ? compare_here(MAX) : with_alloca(depth - 1, len + 48);
	__asm__ volatile("" ::: "memory");
	return n + p[0] - (char)depth;
}

START_TEST(rbp_frames)
{
	for (int round = 0; round < 4; round++)
		for (int d = 1; d <= 12; d++)
			ck_assert_int_gt(with_alloca(d, 16 + (size_t)round * 200), 0);
	ck_assert_int_gt(taken, 0);
}
END_TEST

/*
 * Two callers of the same size: leaf's frames sit at the same addresses
 * with the same return addresses on both paths, and only the callers'
 * return addresses differ. Alternating, the kept walk of one path matches
 * the other's inner frames: its outer words must be found changed.
 */
static __attribute__((noinline)) int leaf(void)
{
	return compare_here(MAX);
}

static __attribute__((noinline)) int mid(void)
{
	int n = leaf();
	__asm__ volatile("" ::: "memory");
	return n;
}

static __attribute__((noinline)) int path_a(void)
{
	int n = mid();
	__asm__ volatile("" ::: "memory");
	return n + 1;
}

static __attribute__((noinline)) int path_b(void)
{
	int n = mid();
	__asm__ volatile("" ::: "memory");
	return n + 2;
}

START_TEST(same_frames_other_callers)
{
	for (int i = 0; i < 200; i++)
		ck_assert_int_gt(i % 2 ? path_a() : path_b(), 0);
	/* And deeper, where the paths meet further out. */
	for (int i = 0; i < 100; i++)
		ck_assert_int_gt(i % 3 ? nest(5 + i % 4, MAX) : path_a(), 0);
	ck_assert_int_eq(taken, 300);
}
END_TEST

START_TEST(kept_walk_reused)
{
	/* The same stack again: the second walk takes its outer frames from the first, checked. */
	for (int i = 0; i < 50; i++)
		ck_assert_int_gt(nest(10, MAX), 0);
	ck_assert_uint_gt(cache->walk[cache->last].n, 10);
	ck_assert_uint_eq(cache->gen % 2, 0);
}
END_TEST

/*
 * An rbp frame (alloca) reached from two callers of different sizes, its
 * alloca sized so that the frames inside it sit at the same addresses on
 * both paths: only the rbp the inner frames carry tells where its return
 * address is. A kept walk matched on the inner frames alone would read
 * the other path's slot.
 */
static uintptr_t inner_at; /* where the innermost frame's local was, last call */

static __attribute__((noinline)) int marked_leaf(bool compare)
{
	volatile char here = 0;
	inner_at = (uintptr_t)&here;
	int n = compare ? compare_here(MAX) : 1;
	return n + here;
}

static __attribute__((noinline)) int rbp_frame(size_t len, bool compare)
{
	volatile char *p = __builtin_alloca(len);
	p[0] = 0;
	int n = marked_leaf(compare);
	__asm__ volatile("" ::: "memory");
	return n + p[0];
}

static __attribute__((noinline)) int near_caller(size_t len, bool compare)
{
	int n = rbp_frame(len, compare);
	__asm__ volatile("" ::: "memory");
	return n;
}

static __attribute__((noinline)) int far_caller(size_t len, bool compare)
{
	volatile char pad[512];
	pad[0] = 0;
	int n = rbp_frame(len, compare);
	__asm__ volatile("" ::: "memory");
	return n + pad[0];
}

START_TEST(rbp_decides_the_caller)
{
	/* One call site for both callers: their frames, and what returns from them, coincide. */
	int (*volatile call)(size_t, bool) = far_caller;
	call(64, false);
	uintptr_t far_at = inner_at;
	size_t near_len = 0;
	call = near_caller;
	for (size_t len = 64; len < 4096 && !near_len; len += 16) {
		call(len, false);
		if (inner_at == far_at)
			near_len = len;
	}
	ck_assert_msg(near_len != 0, "no alloca puts the frames at the same place");
	for (int i = 0; i < 40; i++) {
		call = i % 2 ? far_caller : near_caller;
		ck_assert_int_gt(call(i % 2 ? 64 : near_len, true), 0);
	}
	ck_assert_int_eq(taken, 40);
}
END_TEST

static volatile int in_handler;

static void on_signal(int sig)
{
	(void)sig;
	/* Declined (the signal frame's rule is an expression) or the same frames. */
	in_handler = compare_here(MAX);
}

START_TEST(signal_frame)
{
	ck_assert_int_gt(nest(3, MAX), 0);
	struct sigaction sa = {.sa_handler = on_signal};
	sigaction(SIGUSR1, &sa, NULL);
	raise(SIGUSR1);
	ck_assert_int_ne(in_handler, 0);
	/* The kept walk is still sound after it. */
	ck_assert_int_gt(nest(3, MAX), 0);
}
END_TEST

START_TEST(new_generation)
{
	ck_assert_int_gt(nest(6, MAX), 0);
	ck_assert_uint_ne(cache->walk[cache->last].n, 0);
	epoch++;
	ck_assert_int_gt(nest(6, MAX), 0);
	ck_assert_uint_eq(cache->epoch, epoch);
}
END_TEST

START_TEST(rules)
{
	struct cg_cfi_rule r;
	cg_cfi_rule((uintptr_t)&leaf + 1, &r);
	ck_assert_int_eq(r.kind, CG_CFI_STEP);
	ck_assert_int_gt(r.cfa_off, 0);
	/* Data is no code: no FDE. */
	static const char data[64] = "not code";
	cg_cfi_rule((uintptr_t)data + 8, &r);
	ck_assert_int_eq(r.kind, CG_CFI_OTHER);
	cg_cfi_rule(16, &r);
	ck_assert_int_eq(r.kind, CG_CFI_OTHER);
}
END_TEST
#else
START_TEST(declines_everywhere)
{
	void *f[8];
	ck_assert_int_eq(cg_unwind(f, 8, cache, epoch), -1);
}
END_TEST
#endif

TEST_SUITE(unwind_suite, "unwind")
{
#if CG_CFI_FAST
	TCase *tc =
	    test_case(s, "unwind:as-libunwind", 60, plain_depths, rbp_frames,
	              same_frames_other_callers, rbp_decides_the_caller, kept_walk_reused,
	              signal_frame, new_generation);
	tcase_add_checked_fixture(tc, cache_setup, cache_teardown);
	test_case(s, "unwind:rules", 30, rules);
#else
	TCase *tc = test_case(s, "unwind:declines", 30, declines_everywhere);
	tcase_add_checked_fixture(tc, cache_setup, cache_teardown);
#endif
}

TEST_MAIN(unwind_suite);

/* SPDX-License-Identifier: MIT */
/* The probe's parameter ranges (preload/params.c): merging, the containment rule, lock-free reads.
 */
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "params.h"
#include "test-main.h"

START_TEST(test_params_contains)
{
	cg_params_clear();
	ck_assert(!cg_params_contains(0x1000, 16));
	ck_assert_int_eq(cg_params_mark(0x1000, 0x100), 0);
	/* Inside, at either end, and the allocation the range starts (larger than it). */
	ck_assert(cg_params_contains(0x1000, 0x100));
	ck_assert(cg_params_contains(0x1080, 0x80));
	ck_assert(cg_params_contains(0x1000, 0x1000));
	/* Overlapping without lying inside, or outside. */
	ck_assert(!cg_params_contains(0x10f0, 0x20));
	ck_assert(!cg_params_contains(0xff0, 0x20));
	ck_assert(!cg_params_contains(0x1100, 0x10));
	ck_assert_int_eq(cg_params_mark(0x1000, 0), -EINVAL);
	ck_assert_int_eq(cg_params_mark(UINT64_MAX - 4, 16), -EINVAL);
}
END_TEST

START_TEST(test_params_merge)
{
	cg_params_clear();
	/* Out of order, touching and overlapping: one range [0x1000, 0x4000) at the end. */
	ck_assert_int_eq(cg_params_mark(0x3000, 0x1000), 0);
	ck_assert_int_eq(cg_params_mark(0x1000, 0x1000), 0);
	ck_assert(!cg_params_contains(0x2000, 0x100));
	ck_assert_int_eq(cg_params_mark(0x1800, 0x1800), 0);
	ck_assert(cg_params_contains(0x1000, 0x3000));
	ck_assert(cg_params_contains(0x2f00, 0x200));
	ck_assert(!cg_params_contains(0x3f00, 0x200));
	/* A separate range further on, and one before. */
	ck_assert_int_eq(cg_params_mark(0x9000, 0x10), 0);
	ck_assert_int_eq(cg_params_mark(0x10, 0x10), 0);
	ck_assert(cg_params_contains(0x9000, 0x10));
	ck_assert(cg_params_contains(0x10, 0x8));
	ck_assert(!cg_params_contains(0x8ff0, 0x10));
	ck_assert(cg_params_contains(0x1000, 0x3000));
}
END_TEST

static atomic_int stop;
static atomic_long wrong;

/* Range 0 stays marked while others arrive: a reader must never miss it. */
static void *reader(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop))
		if (!cg_params_contains(0x100, 0x10))
			atomic_fetch_add(&wrong, 1);
	return NULL;
}

START_TEST(test_params_concurrent_reads)
{
	pthread_t t[2];
	cg_params_clear();
	ck_assert_int_eq(cg_params_mark(0x100, 0x100), 0);
	for (int i = 0; i < 2; i++)
		ck_assert_int_eq(pthread_create(&t[i], NULL, reader, NULL), 0);
	/* Ranges before and after it, which move it in the table. */
	for (uint64_t i = 0; i < 4000; i++)
		ck_assert_int_eq(cg_params_mark(i % 2 ? 0x100000 + i * 0x100 : 0x10 + (i % 8), 1),
		                 0);
	atomic_store(&stop, 1);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	ck_assert_int_eq(atomic_load(&wrong), 0);
}
END_TEST

TEST_SUITE(params_suite, "params")
{
	test_case(s, "params", 4, test_params_contains, test_params_merge,
	          test_params_concurrent_reads);
}

TEST_MAIN(params_suite);

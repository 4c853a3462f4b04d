/* SPDX-License-Identifier: MIT */
/*
 * The one main of the Check programs. A program defines its suites and
 * names them once:
 *
 *	TEST_MAIN(json_scan_suite);
 *
 * and links tests/lib/test-main.c, whose main runs them all. Test cases are
 * named `area:behaviour` (`scan:strings`); `PROGRAM CASE` runs one case
 * only, as CK_RUN_CASE=CASE does, and CK_RUN_SUITE, CK_VERBOSITY and
 * CK_FORK work as Check documents them.
 *
 * A program that needs its environment read before any suite is built
 * (the paths meson passes, or argv for a mode of its own) names a setup
 * function first:
 *
 *	TEST_MAIN_SETUP(preload_setup, preload_suite);
 *
 * setup(argc, argv) returns TEST_GO_ON to run the suites, or the status
 * main exits with (77: skipped).
 */
#ifndef CG_TEST_MAIN_H
#define CG_TEST_MAIN_H

#include <check.h>

#define TEST_GO_ON (-1)

/*
 * An assertion inside a loop over a trace's records. Check's ck_assert
 * writes its location to Check's pipe on every pass, one system call: a
 * loop over the 2 M records of a busy program's trace spent most of a
 * test's time there, and more as the machine got slower. This one calls
 * Check only to fail, with the message given.
 */
#define assert_each(expr, ...)                                                                     \
	do {                                                                                       \
		if (__builtin_expect(!(expr), 0))                                                  \
			ck_abort_msg(__VA_ARGS__);                                                 \
	} while (0)

typedef Suite *(*test_suite_fn)(void);
typedef int (*test_setup_fn)(int argc, char **argv);

/* NULL-terminated; defined by TEST_MAIN in the test program. */
extern const test_suite_fn test_suites[];
/* NULL when the program has none. */
extern const test_setup_fn test_setup;

#define TEST_MAIN_SETUP(setup, ...)                                                                \
	const test_setup_fn test_setup = (setup);                                                  \
	const test_suite_fn test_suites[] = {__VA_ARGS__, NULL}

#define TEST_MAIN(...) TEST_MAIN_SETUP(NULL, __VA_ARGS__)

/*
 * A suite function, fn, of the suite named name: the block that follows
 * adds its cases to s.
 *
 *	TEST_SUITE(json_scan_suite, "json_scan")
 *	{
 *		test_case(s, "scan:accept", 4, test_good);
 *	}
 */
#define TEST_SUITE(fn, name)                                                                       \
	static void fn##_cases(Suite *s);                                                          \
	static Suite *fn(void)                                                                     \
	{                                                                                          \
		Suite *s = suite_create(name);                                                     \
		fn##_cases(s);                                                                     \
		return s;                                                                          \
	}                                                                                          \
	static void fn##_cases(Suite *s)

/* A test case added to s, with a timeout for suites that run programs. */
TCase *test_tcase(Suite *s, const char *name, double timeout_s);

/*
 * Adds the tests named, in order, to tc: a case's tests are listed once,
 * as one list, rather than one tcase_add_test line each.
 */
#define test_add(tc, ...) test_add_list((tc), (const TTest *const[]){__VA_ARGS__, NULL})
void test_add_list(TCase *tc, const TTest *const *tests);

/*
 * A test case of the tests named, in order: test_tcase and test_add in
 * one, a line a case. Returns the case, for a fixture or loop tests after.
 */
#define test_case(s, name, timeout_s, ...)                                                         \
	test_case_list((s), (name), (timeout_s), (const TTest *const[]){__VA_ARGS__, NULL})
TCase *test_case_list(Suite *s, const char *name, double timeout_s, const TTest *const *tests);

/* A test case of one loop test, run for each _i in [0, n). */
TCase *test_loop(Suite *s, const char *name, double timeout_s, const TTest *test, int n);

/* The same for each _i in [start, end): a case of some rows of a table. */
TCase *test_rows(Suite *s, const char *name, double timeout_s, const TTest *test, int start,
                 int end);

#endif

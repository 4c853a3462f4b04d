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
 */
#ifndef CG_TEST_MAIN_H
#define CG_TEST_MAIN_H

#include <check.h>

typedef Suite *(*test_suite_fn)(void);

/* NULL-terminated; defined by TEST_MAIN in the test program. */
extern const test_suite_fn test_suites[];

#define TEST_MAIN(...) const test_suite_fn test_suites[] = {__VA_ARGS__, NULL}

#endif

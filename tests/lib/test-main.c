/* SPDX-License-Identifier: MIT */
#include "test-main.h"

#include <stdio.h>
#include <stdlib.h>

TCase *test_tcase(Suite *s, const char *name, double timeout_s)
{
	TCase *tc = tcase_create(name);
	tcase_set_timeout(tc, timeout_s);
	suite_add_tcase(s, tc);
	return tc;
}

void test_add_list(TCase *tc, const TTest *const *tests)
{
	for (; *tests; tests++)
		tcase_add_test(tc, *tests);
}

TCase *test_case_list(Suite *s, const char *name, double timeout_s, const TTest *const *tests)
{
	TCase *tc = test_tcase(s, name, timeout_s);
	test_add_list(tc, tests);
	return tc;
}

TCase *test_rows(Suite *s, const char *name, double timeout_s, const TTest *test, int start,
		 int end)
{
	TCase *tc = test_tcase(s, name, timeout_s);
	tcase_add_loop_test(tc, test, start, end);
	return tc;
}

TCase *test_loop(Suite *s, const char *name, double timeout_s, const TTest *test, int n)
{
	return test_rows(s, name, timeout_s, test, 0, n);
}

int main(int argc, char **argv)
{
	if (test_setup) {
		int status = test_setup(argc, argv);
		if (status != TEST_GO_ON)
			return status;
	}
	if (argc > 2) {
		fprintf(stderr, "usage: %s [TEST_CASE]\n", argv[0]);
		return EXIT_FAILURE;
	}
	SRunner *sr = srunner_create(NULL);
	for (size_t i = 0; test_suites[i]; i++)
		srunner_add_suite(sr, test_suites[i]());
	srunner_run(sr, NULL, argc == 2 ? argv[1] : NULL, CK_ENV);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

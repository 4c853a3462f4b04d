/* SPDX-License-Identifier: MIT */
/*
 * cgtrace check --format junit (check-junit.c): the results as a JUnit
 * XML report, which CI systems show as tests: one testcase per limit and
 * process (device, GPU), a broken one with a failure holding its line,
 * an unmeasured one skipped, an unreadable trace an error.
 */
#ifndef CGTRACE_CHECK_JUNIT_H
#define CGTRACE_CHECK_JUNIT_H

#include <stdio.h>

#include "check-eval.h"

/* The report of c on f; name: the suite's name (the inputs as given). */
void cli_check_junit(FILE *f, const struct cli_check *c, const char *name);

#endif

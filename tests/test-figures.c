/* SPDX-License-Identifier: MIT */
/*
 * The probe's live figures (include/cgprobe.h, cgprobe_memory_*): the
 * program tests/preload/figures.c checks them against what it allocated
 * and freed, exact at each call (and says so); its first peak since a
 * mark is then the trace's own peak, as cgtrace_memory_analyze reads it,
 * in both encodings.
 *
 * Environment (tests/meson.build): FIGURES_TEST_PROBE, FIGURES_TEST_BIN.
 */
#include <check.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cgtrace.h"
#include "child.h"
#include "probe-run.h"
#include "test-main.h"

static const char *probe, *bin;

static void run_figures(const char *suffix)
{
	char *path = strf("%s/figures", bin);
	struct probe_run *r = probe_run(probe, path, NULL, suffix, NULL);
	ck_assert_msg(strstr(r->stdout_text, " R figures ok\n"), "figures said: %s%s",
		      r->stdout_text, r->stderr_text);
	const char *s = strstr(r->stdout_text, " S peak ");
	ck_assert_ptr_nonnull(s);
	uint64_t said = strtoull(s + strlen(" S peak "), NULL, 10);
	struct cgtrace_memory_report *rep;
	ck_assert_int_eq(cgtrace_memory_analyze(r->doc, &rep), 0);
	ck_assert_str_eq(rep->peak_device, "cpu");
	ck_assert_msg(rep->peak_bytes == said, "the trace's peak %" PRIu64 ", the figures' %" PRIu64,
		      rep->peak_bytes, said);
	cgtrace_memory_report_free(rep);
	probe_run_free(r);
	free(path);
}

START_TEST(figures_exact_compact)
{
	run_figures("cgt");
}
END_TEST

START_TEST(figures_exact_jsonl)
{
	run_figures("jsonl");
}
END_TEST

TEST_SUITE(suite, "figures")
{
	test_case(s, "figures:exact-as-the-trace", 60, figures_exact_compact, figures_exact_jsonl);
}

static int setup(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	probe = getenv("FIGURES_TEST_PROBE");
	bin = getenv("FIGURES_TEST_BIN");
	if (!probe || !bin) {
		fprintf(stderr, "FIGURES_TEST_PROBE and FIGURES_TEST_BIN must be set\n");
		return 1;
	}
	return TEST_GO_ON;
}

TEST_MAIN_SETUP(setup, suite);

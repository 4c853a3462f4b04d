/* SPDX-License-Identifier: MIT */
/*
 * The probe's live figures (include/cgprobe.h, cgprobe_memory_*): the
 * program tests/preload/figures.c checks them against what it allocated
 * and freed, exact at each call (and says so); its first peak since a
 * mark is then the trace's own peak, as cgtrace_memory_analyze reads it,
 * in both encodings. The same per device on the fake CUDA runtime
 * (tests/cuda/figures-cuda.c): two GPUs, each its own figures.
 *
 * Environment (tests/meson.build): FIGURES_TEST_PROBE, FIGURES_TEST_BIN,
 * FIGURES_TEST_CUDA (the CUDA fixtures' folder).
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

static const char *probe, *bin, *cuda;

/* Runs prog (dir/name) under the probe; its peak of device said must be the trace's. */
static void run_figures(const char *dir, const char *name, const char *suffix, const char *device,
                        const char *const *extra)
{
	char *path = strf("%s/%s", dir, name), *ok = strf(" R %s ok\n", name);
	struct probe_run *r = probe_run(probe, path, NULL, suffix, extra);
	ck_assert_msg(strstr(r->stdout_text, ok), "%s said: %s%s", name, r->stdout_text,
	              r->stderr_text);
	const char *s = strstr(r->stdout_text, " S peak ");
	ck_assert_ptr_nonnull(s);
	uint64_t said = strtoull(s + strlen(" S peak "), NULL, 10);
	struct cgtrace_memory_report *rep;
	ck_assert_int_eq(cgtrace_memory_analyze(r->doc, &rep), 0);
	const struct cgtrace_device_peak *d = NULL;
	for (size_t i = 0; i < rep->n_devices; i++)
		if (strcmp(rep->by_device[i].device, device) == 0)
			d = &rep->by_device[i];
	ck_assert_msg(d, "no %s in the trace", device);
	ck_assert_msg(d->peak_bytes == said,
	              "%s: the trace's peak %" PRIu64 ", the figures' %" PRIu64, device,
	              d->peak_bytes, said);
	cgtrace_memory_report_free(rep);
	probe_run_free(r);
	free(path);
	free(ok);
}

START_TEST(figures_exact_compact)
{
	run_figures(bin, "figures", "cgt", "cpu", NULL);
}
END_TEST

START_TEST(figures_exact_jsonl)
{
	run_figures(bin, "figures", "jsonl", "cpu", NULL);
}
END_TEST

START_TEST(figures_per_device)
{
	char *lib = strf("LD_LIBRARY_PATH=%s/lib", cuda);
	const char *extra[] = {lib, NULL};
	run_figures(cuda, "figures-cuda", "cgt", "cuda:0", extra);
	free(lib);
}
END_TEST

TEST_SUITE(suite, "figures")
{
	test_case(s, "figures:exact-as-the-trace", 60, figures_exact_compact, figures_exact_jsonl);
	test_case(s, "figures:per-device", 60, figures_per_device);
}

static int setup(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	probe = getenv("FIGURES_TEST_PROBE");
	bin = getenv("FIGURES_TEST_BIN");
	cuda = getenv("FIGURES_TEST_CUDA");
	if (!probe || !bin || !cuda) {
		fprintf(stderr,
		        "FIGURES_TEST_PROBE, FIGURES_TEST_BIN and FIGURES_TEST_CUDA must be set\n");
		return 1;
	}
	return TEST_GO_ON;
}

TEST_MAIN_SETUP(setup, suite);

/* SPDX-License-Identifier: MIT */
/*
 * cgtrace diff's and check's pieces (docs/compare.md), from cgtrace/'s
 * sources: sizes with their units, the rules of check (each kind's words,
 * the errors of a bad rule, a rules file's FILE:LINE), and the matching of
 * two sides: processes by rank, sites by name and device whatever else
 * differs, the largest changes first.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check-rules.h"
#include "cli-size.h"
#include "compare.h"
#include "test-main.h"

START_TEST(size_units)
{
	static const struct {
		const char *text;
		uint64_t bytes;
	} good[] = {
		{"0", 0},
		{"4096", 4096},
		{"12B", 12},
		{"1KiB", 1024},
		{"64MiB", 64ull << 20},
		{"1.5GiB", 3ull << 29},
		{"2TiB", 2ull << 40},
		{"1KB", 1000},
		{"64MB", 64000000},
		{"1.5GB", 1500000000},
		{"3TB", 3000000000000ull},
		{"512 KiB", 512 * 1024},
		{"0.5KiB", 512},
		{"18446744073709551615", UINT64_MAX},
	};
	static const char *const bad[] = {
		"",	 "MiB", "-1MiB", "1.MiB", ".5MiB", "1 MiB ", "12XB", "1kib", "1mb",
		"1 2", "16EiB", "18446744073709551616", "17179869184GiB", "1e6",
	};
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		uint64_t v = 1;
		ck_assert_msg(cli_size_parse(good[i].text, &v), "%s refused", good[i].text);
		ck_assert_msg(v == good[i].bytes, "%s: %llu", good[i].text, (unsigned long long)v);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		uint64_t v;
		ck_assert_msg(!cli_size_parse(bad[i], &v), "'%s' taken", bad[i]);
	}
}
END_TEST

START_TEST(rules_words)
{
	struct cli_limits ls = {0};
	char err[400];
	ck_assert(cli_limit_parse(&ls, "max-peak cuda:* 1.5GiB category=activation phase=forward rank=3",
				  "f:1", err, sizeof(err)));
	const struct cli_limit *l = &ls.v[0];
	ck_assert_int_eq(l->kind, CLI_LIMIT_PEAK);
	ck_assert_str_eq(l->device, "cuda:*");
	ck_assert_uint_eq(l->value, 3ull << 29);
	ck_assert_str_eq(cgtrace_category_name((enum cgtrace_category)l->category), "activation");
	ck_assert_str_eq(l->phase, "forward");
	ck_assert_int_eq(l->rank, 3);
	ck_assert_str_eq(l->text, "max-peak cuda:* 1.5GiB category=activation phase=forward rank=3");
	ck_assert_str_eq(l->origin, "f:1");
	ck_assert(cli_limit_parse(&ls, "  max-increase\t12.5%  device=gpu:*", "o", err, sizeof(err)));
	ck_assert_int_eq(ls.v[1].kind, CLI_LIMIT_INCREASE);
	ck_assert(fabs(ls.v[1].pct - 12.5) < 1e-9);
	ck_assert_str_eq(ls.v[1].device, "gpu:*");
	ck_assert_int_eq(ls.v[1].rank, -1);
	ck_assert_int_eq(ls.v[1].category, -1);
	ck_assert_str_eq(ls.v[1].text, "max-increase 12.5% device=gpu:*");
	ck_assert(cli_limit_parse(&ls, "max-allocs 1000000", "o", err, sizeof(err)));
	ck_assert_uint_eq(ls.v[2].value, 1000000);
	ck_assert_uint_eq(ls.n, 3);
	cli_limits_free(&ls);
}
END_TEST

START_TEST(rules_errors)
{
	static const struct {
		const char *line, *err;
	} bad[] = {
		{"max-pique cpu 1GiB", "'max-pique' is no limit"},
		{"max-peak 1GiB", "max-peak needs a value"},
		{"max-peak rank=1", "max-peak needs a DEVICE"},
		{"max-peak cpu 12XB", "'12XB' is not a size"},
		{"max-peak cpu 1GiB device=cpu", "'device=cpu' does not go with max-peak"},
		{"max-leaked 1GiB phase=forward", "'phase=forward' does not go with max-leaked"},
		{"max-peak cpu 1GiB category=weights", "'weights' is no category"},
		{"max-peak cpu 1GiB rank=-1", "'-1' is not a rank"},
		{"max-peak cpu 1GiB rank", "'rank': expected KEY=VALUE"},
		{"max-allocs 1.5", "'1.5' is not a count"},
		{"max-increase ten", "'ten' is not a percentage"},
		{"max-peak gpu:* 1GiB rank=0", "rank= does not go with gpu:*"},
		{"max-peak a b c d e f g h i", "more than 8 words"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct cli_limits ls = {0};
		char err[400] = "";
		ck_assert_msg(!cli_limit_parse(&ls, bad[i].line, "o", err, sizeof(err)), "%s taken",
			      bad[i].line);
		ck_assert_msg(strncmp(err, bad[i].err, strlen(bad[i].err)) == 0, "%s: %s", bad[i].line,
			      err);
		ck_assert_uint_eq(ls.n, 0);
		cli_limits_free(&ls);
	}
}
END_TEST

START_TEST(rules_file)
{
	char path[] = "/tmp/test-compare-XXXXXX", err[1024];
	int fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	const char *text = "# limits\n\nmax-peak cpu 64MiB   # the host\n  # indented comment\n"
			   "max-leaked 1MB rank=0\nmax-growth 1KiB\n";
	ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	struct cli_limits ls = {0};
	ck_assert(!cli_limits_read(&ls, path, err, sizeof(err)));
	char want[512];
	snprintf(want, sizeof(want), "%s:6: 'max-growth' is no limit", path);
	ck_assert_msg(strncmp(err, want, strlen(want)) == 0, "%s", err);
	/* The lines before the bad one were read, each with its origin. */
	ck_assert_uint_eq(ls.n, 2);
	snprintf(want, sizeof(want), "%s:3", path);
	ck_assert_str_eq(ls.v[0].origin, want);
	ck_assert_str_eq(ls.v[0].text, "max-peak cpu 64MiB");
	ck_assert_uint_eq(ls.v[1].value, 1000000);
	cli_limits_free(&ls);
	unlink(path);
	ck_assert(!cli_limits_read(&ls, path, err, sizeof(err)));
	snprintf(want, sizeof(want), "%s: No such file or directory", path);
	ck_assert_str_eq(err, want);
}
END_TEST

/* ---- matching ---- */

static struct cli_msite site(const char *name, const char *device, uint64_t peak)
{
	return (struct cli_msite){(char *)name, device, peak, 0, 1};
}

START_TEST(match_sites_by_name)
{
	/* The same lines in both, listed in another order; one new, one gone. */
	struct cli_msite a[] = {
		site("train (t.py:10)", "cpu", 8 << 20),
		site("load (t.py:3)", "cpu", 1 << 20),
		site("train (t.py:10)", "cuda:0", 4 << 20),
		site("gone (t.py:1)", "cpu", 100),
	};
	struct cli_msite b[] = {
		site("load (t.py:3)", "cpu", 1 << 20),
		site("extra (t.py:12)", "cpu", 32 << 20),
		site("train (t.py:10)", "cuda:0", 2 << 20),
		site("train (t.py:10)", "cpu", 8 << 20),
	};
	struct cli_mproc pa = {.sites = a, .n_sites = 4}, pb = {.sites = b, .n_sites = 4};
	struct cli_site_change *c;
	size_t n;
	ck_assert_int_eq(cli_site_changes(&pa, &pb, NULL, &c, &n), 0);
	/* Unchanged sites are left out; the largest change first, either way. */
	ck_assert_uint_eq(n, 3);
	ck_assert_str_eq(c[0].name, "extra (t.py:12)");
	ck_assert_uint_eq(c[0].base, 0);
	ck_assert_uint_eq(c[0].new, 32 << 20);
	ck_assert_str_eq(c[1].name, "train (t.py:10)");
	ck_assert_str_eq(c[1].device, "cuda:0");
	ck_assert(cli_change(c[1].base, c[1].new) == -(double)(2 << 20));
	ck_assert_str_eq(c[2].name, "gone (t.py:1)");
	ck_assert_uint_eq(c[2].new, 0);
	free(c);
	ck_assert_int_eq(cli_site_changes(&pa, &pb, "cuda:0", &c, &n), 0);
	ck_assert_uint_eq(n, 1);
	ck_assert_str_eq(c[0].device, "cuda:0");
	free(c);
	/* One side without the process at all. */
	ck_assert_int_eq(cli_site_changes(NULL, &pb, NULL, &c, &n), 0);
	ck_assert_uint_eq(n, 4);
	ck_assert_uint_eq(c[0].new, 32 << 20);
	free(c);
	ck_assert(isnan(cli_change_pct(0, 5)));
	ck_assert(fabs(cli_change_pct(200, 250) - 25.0) < 1e-9);
}
END_TEST

static struct cli_mproc proc(int64_t rank, const char *exe)
{
	return (struct cli_mproc){.rank = rank, .executable = (char *)exe, .read = true};
}

START_TEST(match_procs_by_rank)
{
	/* Paths in another order; a launcher without a rank on each side; rank 2 only in b. */
	struct cli_mproc a[] = {proc(1, "python3"), proc(-1, "python3"), proc(0, "python3"),
				proc(-1, "sh")};
	struct cli_mproc b[] = {proc(-1, "sh"), proc(0, "python3"), proc(1, "python3"),
				proc(2, "python3"), proc(-1, "python3")};
	struct cli_measure ma = {.procs = a, .n_procs = 4}, mb = {.procs = b, .n_procs = 5};
	struct cli_pair *p;
	size_t n;
	ck_assert_int_eq(cli_pair_procs(&ma, &mb, &p, &n), 0);
	ck_assert_uint_eq(n, 5);
	/* In the base's order, then the new side's own. */
	const struct cli_pair want[] = {{0, 2}, {1, 4}, {2, 1}, {3, 0}, {-1, 3}};
	for (size_t i = 0; i < n; i++)
		ck_assert_msg(p[i].base == want[i].base && p[i].new == want[i].new,
			      "pair %zu: %ld %ld", i, p[i].base, p[i].new);
	free(p);
	/* One process each: paired whatever they are. */
	ma.n_procs = 1;
	mb.n_procs = 1;
	ck_assert_int_eq(cli_pair_procs(&ma, &mb, &p, &n), 0);
	ck_assert_uint_eq(n, 1);
	ck_assert(p[0].base == 0 && p[0].new == 0);
	free(p);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("compare");
	TCase *tc = test_tcase(s, "sizes:units", 10);
	test_add(tc, size_units);
	tc = test_tcase(s, "rules:parse", 10);
	test_add(tc, rules_words, rules_errors, rules_file);
	tc = test_tcase(s, "match:sides", 10);
	test_add(tc, match_sites_by_name, match_procs_by_rank);
	return s;
}

TEST_MAIN(suite);

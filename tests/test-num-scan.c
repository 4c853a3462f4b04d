/* SPDX-License-Identifier: MIT */
#include <check.h>
#include <errno.h>
#include <float.h>
#include <locale.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "num_scan.h"
#include "test-main.h"

static int u64(const char *s, uint64_t *out)
{
	return cg_scan_u64(s, strlen(s), out);
}

static int f64(const char *s, double *out)
{
	return cg_scan_f64(s, strlen(s), out);
}

/* ---- u64 ---- */

static const struct {
	const char *s;
	uint64_t v;
} u64_good[] = {
    {"0", 0},
    {"1", 1},
    {"9", 9},
    {"10", 10},
    {"4294967296", 4294967296ull},
    {"9007199254740992", 9007199254740992ull},
    {"9007199254740993", 9007199254740993ull},
    {"12345678901234567890", 12345678901234567890ull},
    {"18446744073709551614", 18446744073709551614ull},
    {"18446744073709551615", UINT64_MAX},
};

START_TEST(test_u64_good)
{
	uint64_t v = 42;

	ck_assert_msg(u64(u64_good[_i].s, &v) == 0, "%s", u64_good[_i].s);
	ck_assert_uint_eq(v, u64_good[_i].v);
}
END_TEST

static const struct {
	const char *s;
	int err;
} u64_bad[] = {
    {"18446744073709551616", -ERANGE},
    {"18446744073709551620", -ERANGE},
    {"18446744073709551625", -ERANGE},
    {"99999999999999999999", -ERANGE},
    {"184467440737095516150", -ERANGE},
    {"100000000000000000000000000000000000000", -ERANGE},
    {"", -EINVAL},
    {"-0", -EINVAL},
    {"-1", -EINVAL},
    {"1.0", -EINVAL},
    {"1e3", -EINVAL},
    {"1E3", -EINVAL},
    {"01", -EINVAL},
    {"00", -EINVAL},
    {"+1", -EINVAL},
    {" 1", -EINVAL},
    {"1 ", -EINVAL},
    {"0x10", -EINVAL},
    {"1a", -EINVAL},
    {"-", -EINVAL},
    /* not an integer literal, however large */
    {"99999999999999999999.5", -EINVAL},
    {"18446744073709551616e0", -EINVAL},
};

START_TEST(test_u64_bad)
{
	uint64_t v = 42;

	ck_assert_msg(u64(u64_bad[_i].s, &v) == u64_bad[_i].err, "%s", u64_bad[_i].s);
	ck_assert_uint_eq(v, 42);
}
END_TEST

START_TEST(test_u64_not_terminated)
{
	static const char buf[] = "1234567";
	uint64_t v = 0;

	ck_assert_int_eq(cg_scan_u64(buf, 3, &v), 0);
	ck_assert_uint_eq(v, 123);
	ck_assert_int_eq(cg_scan_u64("184467440737095516159", 20, &v), 0);
	ck_assert_uint_eq(v, UINT64_MAX);
	ck_assert_int_eq(cg_scan_u64("0123", 1, &v), 0);
	ck_assert_uint_eq(v, 0);
}
END_TEST

/* ---- f64 ---- */

/* Exact comparison of bit patterns: -0.0 and 0.0 must differ. */
static void expect_f64(const char *s, double want)
{
	double v = 42.0;
	int r = f64(s, &v);

	ck_assert_msg(r == 0, "%s: %d", s, r);
	ck_assert_msg(memcmp(&v, &want, sizeof(v)) == 0, "%s: got %.17g, want %.17g", s, v, want);
}

/* Tensor ids the compact encoding packs, and near misses that stay strings. */
START_TEST(test_hex_id)
{
	static const struct {
		const char *s;
		bool ok, vmm;
		uint64_t v;
	} cases[] = {
		{"0x0", true, false, 0},
		{"0x7f12ab", true, false, 0x7f12ab},
		{"0xffffffffffffffff", true, false, UINT64_MAX},
		{"vmm:0x200000", true, true, 0x200000},
		{"0x00", false, false, 0},
		{"0x01", false, false, 0},
		{"0xAB", false, false, 0},
		{"0x", false, false, 0},
		{"0x10000000000000000", false, false, 0},
		{"x0", false, false, 0},
		{"vmm:", false, true, 0},
		{"vmm:0x0g", false, true, 0},
		{"t17", false, false, 0},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		bool vmm = !cases[i].vmm;
		uint64_t v = 12345;
		bool ok = cg_scan_hex_id(cases[i].s, strlen(cases[i].s), &vmm, &v);
		ck_assert_msg(ok == cases[i].ok, "%s", cases[i].s);
		if (ok) {
			ck_assert_uint_eq(v, cases[i].v);
			ck_assert(vmm == cases[i].vmm);
		}
	}
	bool vmm;
	uint64_t v;
	ck_assert(!cg_scan_hex_id(NULL, 0, &vmm, &v));
}
END_TEST

START_TEST(test_f64_good)
{
	char buf[512];

	expect_f64("0", 0.0);
	expect_f64("-0", -0.0);
	expect_f64("-0.0", -0.0);
	expect_f64("0.0", 0.0);
	expect_f64("0.1", 0.1);
	expect_f64("-0.1", -0.1);
	expect_f64("1E-7", 1e-7);
	expect_f64("1e-7", 1e-7);
	expect_f64("1.5e+3", 1500.0);
	expect_f64("1.5E3", 1500.0);
	expect_f64("123", 123.0);
	expect_f64("3.141592653589793", 3.141592653589793);
	expect_f64("9007199254740993", 9007199254740992.0);
	expect_f64("9007199254740995", 9007199254740996.0);
	expect_f64("18446744073709551615", 18446744073709551616.0);
	expect_f64("1.7976931348623157e308", DBL_MAX);
	expect_f64("-1.7976931348623157e308", -DBL_MAX);
	expect_f64("2.2250738585072014e-308", DBL_MIN);
	expect_f64("4.9406564584124654e-324", 4.9406564584124654e-324);
	expect_f64("2.2250738585072011e-308", 2.2250738585072011e-308);
	/* underflow is not an error: serde_json reads 1e-400 as 0 */
	expect_f64("1e-400", 0.0);
	expect_f64("-1e-400", -0.0);
	expect_f64("0e999999", 0.0);
	/* correct rounding needs every digit: just above a halfway point rounds up */
	expect_f64("9007199254740993.0000000000000000000000000000000000000000000000000000000000001",
	           9007199254740994.0);
	expect_f64("9007199254740993.0000000000000000000000000000000000000000000000000000000000000",
	           9007199254740992.0);
	/* longer than the inline buffer */
	memset(buf, '0', sizeof(buf));
	buf[0] = '1';
	snprintf(buf + 300, sizeof(buf) - 300, "e-299");
	expect_f64(buf, 1.0);
	expect_f64("0.1000000000000000055511151231257827021181583404541015625", 0.1);
}
END_TEST

static const struct {
	const char *s;
	int err;
} f64_bad[] = {
    {"1e400", -ERANGE},
    {"-1e400", -ERANGE},
    {"1.7976931348623159e308", -ERANGE},
    {"1e99999999999999999999", -ERANGE},
    {"", -EINVAL},
    {"-", -EINVAL},
    {"01", -EINVAL},
    {"-01", -EINVAL},
    {"1.", -EINVAL},
    {".5", -EINVAL},
    {"+1", -EINVAL},
    {"1e", -EINVAL},
    {"1e+", -EINVAL},
    {"1.e5", -EINVAL},
    {"NaN", -EINVAL},
    {"nan", -EINVAL},
    {"inf", -EINVAL},
    {"Infinity", -EINVAL},
    {"-Infinity", -EINVAL},
    {"0x10", -EINVAL},
    {"0x1p3", -EINVAL},
    {"1,5", -EINVAL},
    {" 1", -EINVAL},
    {"1 ", -EINVAL},
    {"1d", -EINVAL},
    {"1.5.5", -EINVAL},
};

START_TEST(test_f64_bad)
{
	double v = 42.0;

	ck_assert_msg(f64(f64_bad[_i].s, &v) == f64_bad[_i].err, "%s", f64_bad[_i].s);
	ck_assert(v == 42.0);
}
END_TEST

START_TEST(test_f64_not_terminated)
{
	double v = 0;

	ck_assert_int_eq(cg_scan_f64("1.5e3xyz", 5, &v), 0);
	ck_assert(v == 1500.0);
	ck_assert_int_eq(cg_scan_f64("1.25", 3, &v), 0);
	ck_assert(v == 1.2);
	/* digits right after the token must not be read */
	ck_assert_int_eq(cg_scan_f64("1e3999", 3, &v), 0);
	ck_assert(v == 1000.0);
}
END_TEST

/* An application locale with a `,` decimal point must not change the result. */
START_TEST(test_f64_locale)
{
	static const char *const names[] = {"de_DE.UTF-8", "de_DE.utf8", "fr_FR.UTF-8",
	                                    "ru_RU.UTF-8"};
	const char *set = NULL;
	double v = 0;

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]) && !set; i++)
		set = setlocale(LC_NUMERIC, names[i]);
	if (!set)
		set = setlocale(LC_NUMERIC, "C");
	ck_assert_int_eq(cg_scan_f64("2.5", 3, &v), 0);
	ck_assert(v == 2.5);
	ck_assert_int_eq(cg_scan_f64("2,5", 3, &v), -EINVAL);
	setlocale(LC_NUMERIC, "C");
}
END_TEST

static void *f64_worker(void *arg)
{
	double v;

	(void)arg;
	for (int i = 0; i < 20000; i++) {
		if (cg_scan_f64("0.1", 3, &v) || v != 0.1)
			return (void *)1;
	}
	return NULL;
}

START_TEST(test_f64_threads)
{
	pthread_t t[8];
	void *res;

	for (int i = 0; i < 8; i++)
		ck_assert_int_eq(pthread_create(&t[i], NULL, f64_worker, NULL), 0);
	for (int i = 0; i < 8; i++) {
		ck_assert_int_eq(pthread_join(t[i], &res), 0);
		ck_assert_ptr_null(res);
	}
}
END_TEST

TEST_SUITE(num_scan_suite, "num_scan")
{
	TCase *tc;

	tc = test_loop(s, "u64:scan", 4, test_u64_good,
	               (int)(sizeof(u64_good) / sizeof(u64_good[0])));
	tcase_add_loop_test(tc, test_u64_bad, 0, (int)(sizeof(u64_bad) / sizeof(u64_bad[0])));
	test_add(tc, test_u64_not_terminated);
	test_add(tc, test_hex_id);
	tc = test_case(s, "f64:scan", 4, test_f64_good);
	tcase_add_loop_test(tc, test_f64_bad, 0, (int)(sizeof(f64_bad) / sizeof(f64_bad[0])));
	test_add(tc, test_f64_not_terminated);
	test_case(s, "f64:locale", 4, test_f64_locale, test_f64_threads);
}

TEST_MAIN(num_scan_suite);

/* SPDX-License-Identifier: MIT */
/*
 * cg_fmt_u64 against printf, cg_fmt_f64 against strtod (exact round trip)
 * and against the shortest correctly rounded %.*e that round-trips.
 */
#include <check.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmt_num.h"
#include "test-main.h"
#include "xorshift.h"

/*
 * Check's ck_assert_* log every passing check through a file, which would
 * dominate millions of iterations; hot loops only call into Check on failure.
 */
#define EXPECT(cond, ...)                         \
	do {                                      \
		if (!(cond))                      \
			ck_abort_msg(__VA_ARGS__); \
	} while (0)

/* A fixed-seed xorshift so failures reproduce. */
static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rng(void)
{
	return xorshift64(&rng_state);
}

static double from_bits(uint64_t b)
{
	double d;
	memcpy(&d, &b, sizeof(d));
	return d;
}

static uint64_t to_bits(double d)
{
	uint64_t b;
	memcpy(&b, &d, sizeof(b));
	return b;
}

/* cg_fmt_f64 as a NUL-terminated string. */
static size_t fmt(char out[40], double x)
{
	memset(out, 'X', 40);
	size_t n = cg_fmt_f64(out, x);
	EXPECT(n <= 24, "%a: %zu bytes", x, n);
	out[n] = '\0';
	return n;
}

/* ------------------------------------------------------------------ */

/* Nothing may land past the room a formatter documents. */
#define GUARD "\xa5\xa5\xa5\xa5"

/* format(v) must give want and stay within its room. */
static void check_int(size_t (*format)(char *, uint64_t), size_t room, uint64_t v, const char *want)
{
	char out[32];
	memcpy(out + room, GUARD, 4);
	size_t n = format(out, v);
	EXPECT(memcmp(out + room, GUARD, 4) == 0, "%s: wrote past the room", want);
	out[n] = '\0';
	EXPECT(strcmp(out, want) == 0, "got %s want %s", out, want);
}

static void check_u64(uint64_t v)
{
	char want[32];
	snprintf(want, sizeof(want), "%" PRIu64, v);
	check_int(cg_fmt_u64, CG_FMT_U64_MAX, v, want);
}

static void check_hex(uint64_t v)
{
	char want[32];
	snprintf(want, sizeof(want), "%" PRIx64, v);
	check_int(cg_fmt_hex, CG_FMT_HEX_MAX, v, want);
}

START_TEST(hex_edges)
{
	check_hex(0);
	check_hex(UINT64_MAX);
	for (int i = 0; i < 64; i++) {
		check_hex(1ull << i);
		check_hex((1ull << i) - 1);
		check_hex(0xa5a5a5a5a5a5a5a5ull >> i);
		check_hex(0x0123456789abcdefull >> i);
	}
	/* Every byte value in every position: catches a wrong digit or letter offset. */
	for (uint64_t b = 0; b < 256; b++)
		for (int i = 0; i < 64; i += 8)
			check_hex(b << i);
}
END_TEST

START_TEST(hex_random)
{
	for (int i = 0; i < 1000000; i++) {
		uint64_t v = rng();
		check_hex(v >> (v & 63));
	}
}
END_TEST

/* Dense runs: every length below 10^7, and across 10^8 and 2^32 where the digit loops change. */
START_TEST(u64_dense)
{
	for (uint64_t v = 0; v < 10000000; v += 1 + (v >> 20))
		check_u64(v);
	for (uint64_t v = 99000000; v < 100001000; v++)
		check_u64(v);
	for (uint64_t v = UINT32_MAX - 1000; v < UINT32_MAX + 1000ull; v++)
		check_u64(v);
}
END_TEST

START_TEST(u64_edges)
{
	check_u64(0);
	check_u64(UINT64_MAX);
	check_u64(UINT64_MAX - 1);
	uint64_t p = 1;
	for (int i = 0; i < 20; i++) {
		check_u64(p);
		check_u64(p - 1);
		check_u64(p + 1);
		check_u64(p * 5);
		if (i < 19)
			p *= 10;
	}
	for (int i = 0; i < 64; i++) {
		check_u64(1ull << i);
		check_u64((1ull << i) - 1);
	}
}
END_TEST

START_TEST(u64_random)
{
	for (int i = 0; i < 1000000; i++) {
		uint64_t v = rng();
		/* Spread over all lengths, not just 19-20 digit values. */
		check_u64(v >> (v & 63));
	}
}
END_TEST

/* ------------------------------------------------------------------ */

static void check_golden(double x, const char *want)
{
	char out[40];
	fmt(out, x);
	ck_assert_msg(strcmp(out, want) == 0, "%.17g: got %s, want %s", x, out, want);
}

START_TEST(f64_golden)
{
	check_golden(0.42, "0.42");
	check_golden(1.0, "1.0");
	check_golden(0.0, "0.0");
	check_golden(-0.0, "-0.0");
	check_golden(-1.5, "-1.5");
	check_golden(100.0, "100.0");
	check_golden(0.1, "0.1");
	check_golden(0.3, "0.3");
	check_golden(0.1 + 0.2, "0.30000000000000004");
	check_golden(123.456, "123.456");
	check_golden(1e15, "1000000000000000.0");
	check_golden(1234567890123456.0, "1234567890123456.0");
	check_golden(1e16, "1e16");
	check_golden(1e20, "1e20");
	check_golden(1.5e300, "1.5e300");
	check_golden(12345678901234567890.0, "1.2345678901234567e19");
	check_golden(9007199254740993.0, "9007199254740992.0");
	check_golden(0.00001, "0.00001");
	check_golden(0.000123, "0.000123");
	check_golden(1e-6, "1e-6");
	check_golden(1e-7, "1e-7");
	check_golden(-2.5e-10, "-2.5e-10");
	check_golden(5e-324, "5e-324");
	check_golden(-5e-324, "-5e-324");
	check_golden(2.2250738585072014e-308, "2.2250738585072014e-308");
	check_golden(1.7976931348623157e308, "1.7976931348623157e308");
	check_golden(1e308, "1e308");
	check_golden(1e-300, "1e-300");
	check_golden(299792458.0, "299792458.0");
	check_golden(3.141592653589793, "3.141592653589793");
	check_golden(2.0 / 3.0, "0.6666666666666666");
}
END_TEST

/* ------------------------------------------------------------------ */

/* Significant digits of a decimal string: no sign, point, exponent or outer zeros. */
static size_t sig_digits(const char *s, char *out)
{
	size_t n = 0;
	for (; *s && *s != 'e' && *s != 'E'; s++)
		if (*s >= '0' && *s <= '9' && (n || *s != '0'))
			out[n++] = *s;
	while (n > 1 && out[n - 1] == '0')
		n--;
	if (n == 0)
		out[n++] = '0';
	out[n] = '\0';
	return n;
}

/* The JSON number grammar, plus the serde rule that a float shows '.' or 'e'. */
static bool json_float(const char *s)
{
	bool frac_or_exp = false;
	if (*s == '-')
		s++;
	if (*s == '0')
		s++;
	else if (*s >= '1' && *s <= '9')
		while (*s >= '0' && *s <= '9')
			s++;
	else
		return false;
	if (*s == '.') {
		s++;
		if (!(*s >= '0' && *s <= '9'))
			return false;
		while (*s >= '0' && *s <= '9')
			s++;
		frac_or_exp = true;
	}
	if (*s == 'e') {
		s++;
		if (*s == '-')
			s++;
		if (!(*s >= '1' && *s <= '9'))
			return false;
		while (*s >= '0' && *s <= '9')
			s++;
		frac_or_exp = true;
	}
	return *s == '\0' && frac_or_exp;
}

/* Exponent of the leading significant digit of a decimal string (0 for zero). */
static int decimal_exponent(const char *s)
{
	const char *e = strchr(s, 'e');
	if (e)
		return atoi(e + 1); /* our mantissas are in [1, 10) */
	const char *dot = strchr(s, '.');
	const char *p = s + (*s == '-');
	if (*p != '0')
		return (int)(dot - p) - 1;
	for (p = dot + 1; *p == '0'; p++)
		;
	return *p ? -(int)(p - dot) : 0;
}

/* True when %.{p}e of x reads back as x; the string is left in buf. */
static bool printf_round_trips(double x, size_t p, char *buf, size_t size)
{
	snprintf(buf, size, "%.*e", (int)p - 1, x);
	return to_bits(strtod(buf, NULL)) == to_bits(x);
}

static size_t shortest_printf_scan(double x, char *buf, size_t size)
{
	size_t p = 1;
	while (p <= 17 && !printf_round_trips(x, p, buf, size))
		p++;
	return p;
}

/*
 * The least p in 1..17 whose %.{p}e round-trips (18 if none), with that
 * string in buf. When the rounding interval of x is symmetric (mantissa
 * bits not all zero, or the smallest exponents) the correctly rounded
 * p-digit decimal is the closest one, so "some p-digit decimal round-trips"
 * implies "%.{p}e round-trips" and the property is monotonic in p: checking
 * guess - 1 and guess answers exactly. At powers of two the interval is
 * lopsided, so those scan every p.
 */
static size_t shortest_printf(double x, size_t guess, char *buf, size_t size)
{
	uint64_t b = to_bits(x);
	bool symmetric = (b & ((1ull << 52) - 1)) != 0 || ((b >> 52) & 0x7ff) <= 1;
	if (symmetric && guess >= 1 && guess <= 17) {
		if (guess > 1 && printf_round_trips(x, guess - 1, buf, size))
			return shortest_printf_scan(x, buf, size); /* shorter exists: find it */
		if (printf_round_trips(x, guess, buf, size))
			return guess;
	}
	return shortest_printf_scan(x, buf, size);
}

struct f64_stats {
	unsigned long checked;
	unsigned long shorter_than_printf; /* ours beats the %.*e search */
};

/*
 * Exact round trip, JSON shape, the serde layout thresholds, and length
 * against the shortest %.{p}e that round-trips: never longer, and with the
 * same digits when equally long (both are then the closest decimal).
 */
static void check_f64(double x, struct f64_stats *st)
{
	/* Decimal inputs past the range parse to infinity, which callers never pass. */
	if (!isfinite(x))
		return;
	char out[40], sig[40], buf[64], sig2[40];
	fmt(out, x);

	char *end;
	double back = strtod(out, &end);
	EXPECT(*end == '\0' && to_bits(back) == to_bits(x), "%a: %s does not round-trip", x, out);
	EXPECT(json_float(out), "%a: %s is not a JSON float", x, out);

	/* Scientific exactly when the decimal exponent is < -5 or >= 16. */
	int e10 = decimal_exponent(out);
	EXPECT((e10 < -5 || e10 >= 16) == (strchr(out, 'e') != NULL), "%a: %s layout", x, out);

	size_t ours = sig_digits(out, sig);
	size_t p = shortest_printf(x, ours, buf, sizeof(buf));
	EXPECT(p <= 17, "%a: nothing round-trips", x);
	EXPECT(ours <= p, "%a: %s has %zu digits, %s only %zu", x, out, ours, buf, p);
	if (ours == p) {
		sig_digits(buf, sig2);
		EXPECT(strcmp(sig, sig2) == 0, "%a: %s vs %s", x, out, buf);
	} else {
		/*
		 * Legitimate at powers of two, where the interval below x is
		 * half as wide: the closest p-digit decimal may fall outside
		 * while a farther, shorter one above x is inside.
		 */
		st->shorter_than_printf++;
	}
	st->checked++;
}

static uint64_t random_finite_bits(void)
{
	for (;;) {
		uint64_t b = rng();
		if (((b >> 52) & 0x7ff) != 0x7ff)
			return b;
	}
}

START_TEST(f64_random_bits)
{
	struct f64_stats st = {0};
	for (int i = 0; i < 1000000; i++)
		check_f64(from_bits(random_finite_bits()), &st);
	fprintf(stderr, "f64 random bits: %lu checked, %lu shorter than the %%.*e search\n",
		st.checked, st.shorter_than_printf);
}
END_TEST

/* Every binary exponent (so every table entry), subnormals and the special shapes. */
START_TEST(f64_every_exponent)
{
	struct f64_stats st = {0};
	for (uint64_t e = 0; e < 0x7ff; e++) {
		check_f64(from_bits(e << 52), &st);
		check_f64(from_bits((e << 52) | ((1ull << 52) - 1)), &st);
		check_f64(from_bits((e << 52) | 1), &st);
		for (int i = 0; i < 100; i++) {
			uint64_t m = rng() & ((1ull << 52) - 1);
			check_f64(from_bits((e << 52) | m), &st);
			/* Few mantissa bits: short decimals and exact ties are likely. */
			check_f64(from_bits((e << 52) | (m & 0xfff0000000000ull)), &st);
		}
	}
	for (uint64_t m = 1; m < 2000; m++)
		check_f64(from_bits(m), &st);
	fprintf(stderr, "f64 exponents: %lu checked, %lu shorter than the %%.*e search\n",
		st.checked, st.shorter_than_printf);
}
END_TEST

START_TEST(f64_decimal_shapes)
{
	struct f64_stats st = {0};
	/* Integers, powers of ten and short decimals, where ties and trailing zeros live. */
	for (int64_t i = -100000; i <= 100000; i++)
		check_f64((double)i, &st);
	for (int i = 0; i < 200000; i++)
		check_f64((double)(rng() >> (rng() & 63)), &st);
	for (int e = -325; e <= 308; e++) {
		char buf[32];
		for (int d = 1; d <= 9; d++) {
			snprintf(buf, sizeof(buf), "%de%d", d, e);
			check_f64(strtod(buf, NULL), &st);
		}
		snprintf(buf, sizeof(buf), "1.5e%d", e);
		check_f64(strtod(buf, NULL), &st);
		snprintf(buf, sizeof(buf), "12345e%d", e);
		check_f64(strtod(buf, NULL), &st);
	}
	for (int i = 0; i < 200000; i++) {
		char buf[48];
		int digits = 1 + (int)(rng() % 17);
		snprintf(buf, sizeof(buf), "%" PRIu64 "e%d", rng() % UINT64_C(100000000000000000),
			 (int)(rng() % 640) - 330 - digits);
		check_f64(strtod(buf, NULL), &st);
	}
	fprintf(stderr, "f64 decimals: %lu checked, %lu shorter than the %%.*e search\n",
		st.checked, st.shorter_than_printf);
}
END_TEST

TEST_SUITE(fmt_suite, "fmt_num")
{
	/* A few million printf/strtod calls: well past Check's default 4 s. */
	test_case(s, "u64:format", 600, u64_edges, u64_random, u64_dense);
	test_case(s, "hex:format", 600, hex_edges, hex_random);
	test_case(s, "f64:format", 600, f64_golden, f64_random_bits, f64_every_exponent,
	          f64_decimal_shapes);
}

TEST_MAIN(fmt_suite);

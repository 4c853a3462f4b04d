/* SPDX-License-Identifier: MIT */
/*
 * cgtrace plot's pieces that need no trace: the SVG writer's escaping (any
 * string a trace holds gives well-formed XML), its compact numbers, and
 * the axes' steps and labels. test-plot.sh draws real traces.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plot-axis.h"
#include "svg.h"
#include "test-main.h"

/* What svg writes through fn, as a string to free. */
static char *capture(void (*fn)(struct svg *s, const void *arg), const void *arg)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	ck_assert_ptr_nonnull(f);
	struct svg s;
	svg_begin(&s, f);
	fn(&s, arg);
	ck_assert_int_eq(fclose(f), 0);
	const char *decl = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
	ck_assert_int_eq(strncmp(text, decl, strlen(decl)), 0);
	memmove(text, text + strlen(decl), len - strlen(decl) + 1);
	return text;
}

static void text_el(struct svg *s, const void *arg)
{
	svg_open(s, "text");
	svg_attr(s, "data-v", arg);
	svg_text(s, arg);
	svg_close(s, "text");
}

static void expect_text(const char *in, const char *attr, const char *body)
{
	char *out = capture(text_el, in);
	char want[512];
	snprintf(want, sizeof(want), "<text data-v=\"%s\">%s</text>\n", attr, body);
	ck_assert_str_eq(out, want);
	free(out);
}

/* Axes across the whole of u64 (a trace of 2^64 - 1 bytes over 2^64 - 1 ns): few ticks, no wrap. */
START_TEST(axis_limits)
{
	struct plot_time_axis t;
	for (size_t max = 1; max <= 40; max++) {
		plot_time_axis(&t, 0, UINT64_MAX, max);
		ck_assert_uint_gt(t.step, 1000);
		ck_assert_uint_le(UINT64_MAX / t.step, 40);
		plot_time_axis(&t, UINT64_MAX - 10, UINT64_MAX, max);
		ck_assert_uint_ge(t.first, UINT64_MAX - 10);
	}
	struct plot_bytes_axis b;
	plot_bytes_axis(&b, UINT64_MAX, 8);
	ck_assert_uint_le(b.n_steps, 8);
	ck_assert_uint_eq(b.top, UINT64_MAX);
	plot_bytes_axis(&b, UINT64_MAX / 2 + 1, 2);
	ck_assert_uint_ge(b.top, UINT64_MAX / 2 + 1);
}
END_TEST

START_TEST(escape_markup)
{
	expect_text("a<b>&\"c\"", "a&lt;b&gt;&amp;&quot;c&quot;", "a&lt;b&gt;&amp;\"c\"");
	expect_text("cuda:0", "cuda:0", "cuda:0");
	/* Whitespace in an attribute survives as references, not normalized to spaces. */
	expect_text("a\tb\nc", "a&#9;b&#10;c", "a\tb\nc");
}
END_TEST

START_TEST(escape_bad_bytes)
{
	/* XML holds no C0 control but tab, newline, return; none becomes U+FFFD. */
	expect_text("a\x01z\x1f", "a\xef\xbf\xbdz\xef\xbf\xbd", "a\xef\xbf\xbdz\xef\xbf\xbd");
	/* Ill-formed UTF-8: a lone continuation byte, a cut sequence, an overlong form, a
	 * surrogate. */
	expect_text("\x80", "\xef\xbf\xbd", "\xef\xbf\xbd");
	expect_text("\xc3", "\xef\xbf\xbd", "\xef\xbf\xbd");
	expect_text("\xc0\xaf", "\xef\xbf\xbd\xef\xbf\xbd", "\xef\xbf\xbd\xef\xbf\xbd");
	expect_text("\xed\xa0\x80", "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd",
	            "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
	/* U+FFFF is no XML character; U+FFFD and four-byte characters are kept. */
	expect_text("\xef\xbf\xbf", "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd",
	            "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
	expect_text("\xc3\xa9\xf0\x9f\x98\x80", "\xc3\xa9\xf0\x9f\x98\x80",
	            "\xc3\xa9\xf0\x9f\x98\x80");
}
END_TEST

static void empty_el(struct svg *s, const void *arg)
{
	(void)arg;
	svg_open(s, "g");
	svg_open(s, "path");
	svg_attr_num(s, "x", 12.34);
	svg_attr_u64(s, "n", 18446744073709551615u);
	svg_d_begin(s, "d");
	svg_d_move(s, 1, 2.05);
	svg_d_h(s, -0.01);
	svg_d_v(s, 3);
	svg_d_line(s, 4.96, 5);
	svg_d_close(s);
	svg_d_end(s);
	svg_close(s, "path");
	svg_close(s, "g");
}

START_TEST(elements)
{
	char *out = capture(empty_el, NULL);
	ck_assert_str_eq(out, "<g><path x=\"12.3\" n=\"18446744073709551615\" "
	                      "d=\"M1 2H0V3L5 5Z\"/>\n</g>\n");
	free(out);
}
END_TEST

START_TEST(numbers)
{
	char b[32];
	ck_assert_str_eq(svg_num(b, 3.0), "3");
	ck_assert_str_eq(svg_num(b, 12.34), "12.3");
	ck_assert_str_eq(svg_num(b, 0.96), "1");
	ck_assert_str_eq(svg_num(b, -0.04), "0");
	ck_assert_str_eq(svg_num(b, -2.5e-9), "0");
	ck_assert_str_eq(svg_num(b, 1.0 / 0.0), "0");
	ck_assert_str_eq(svg_num(b, 0.0 / 0.0), "0");
	ck_assert_str_eq(svg_num_prec(b, 0.125, 3), "0.125");
	ck_assert_str_eq(svg_num_prec(b, 640.0, 2), "640");
}
END_TEST

#define KiB 1024ull
#define MiB (1024ull * KiB)
#define GiB (1024ull * MiB)

START_TEST(bytes_axis)
{
	struct plot_bytes_axis a;
	plot_bytes_axis(&a, 600 * MiB, 8);
	ck_assert_uint_eq(a.step, 128 * MiB);
	ck_assert_uint_eq(a.top, 640 * MiB);
	ck_assert_uint_eq(a.n_steps, 5);
	plot_bytes_axis(&a, 3 * GiB + 1, 8);
	ck_assert_uint_eq(a.step, 512 * MiB);
	ck_assert_uint_eq(a.top, 3 * GiB + 512 * MiB);
	/* Never more steps than asked, never none. */
	for (uint64_t max = 1; max < 100 * GiB; max = max * 3 + 7)
		for (size_t t = 1; t <= 8; t++) {
			plot_bytes_axis(&a, max, t);
			ck_assert_uint_le(a.n_steps, t);
			ck_assert_uint_ge(a.n_steps, 1);
			ck_assert_uint_ge(a.top, max);
			ck_assert_uint_eq(a.step & (a.step - 1), 0);
		}
	plot_bytes_axis(&a, 0, 0);
	ck_assert_uint_eq(a.top, 1);
}
END_TEST

START_TEST(bytes_labels)
{
	char b[32];
	ck_assert_str_eq(plot_bytes_tick(b, 0), "0 B");
	ck_assert_str_eq(plot_bytes_tick(b, 512), "512 B");
	ck_assert_str_eq(plot_bytes_tick(b, 256 * MiB), "256 MiB");
	ck_assert_str_eq(plot_bytes_tick(b, GiB), "1 GiB");
	ck_assert_str_eq(plot_bytes_tick(b, GiB + GiB / 4), "1.25 GiB");
	ck_assert_str_eq(plot_bytes_tick(b, 1536 * KiB), "1.5 MiB");
	/* Exact or in a smaller unit: 1.125 GiB has three decimals. */
	ck_assert_str_eq(plot_bytes_tick(b, 1152 * MiB), "1152 MiB");
	ck_assert_str_eq(plot_bytes_tick(b, 1024 * GiB + GiB / 2), "1024.5 GiB");
	ck_assert_str_eq(plot_bytes_tick(b, 3 * KiB + 1), "3073 B");
	/* Every tick of every axis reads back as its exact value. */
	static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
	for (uint64_t max = 1; max < 8 * 1024 * GiB; max = max * 3 + 1) {
		struct plot_bytes_axis a;
		plot_bytes_axis(&a, max, 7);
		for (size_t i = 0; i <= a.n_steps; i++) {
			char unit[8];
			double num;
			plot_bytes_tick(b, i * a.step);
			ck_assert_int_eq(sscanf(b, "%lf %7s", &num, unit), 2);
			size_t u = 0;
			while (u < 5 && strcmp(units[u], unit) != 0)
				u++;
			ck_assert_uint_lt(u, 5);
			ck_assert_msg((uint64_t)(num * (double)(1ull << (10 * u)) + 0.5) ==
			                  i * a.step,
			              "%s for %llu", b, (unsigned long long)(i * a.step));
		}
	}
	ck_assert_str_eq(plot_bytes_text(b, 1023), "1023 B");
	ck_assert_str_eq(plot_bytes_text(b, 1024), "1.00 KiB");
	ck_assert_str_eq(plot_bytes_text(b, 1288490189), "1.20 GiB");
	/* Rounding up to 1024 of a unit reads as one of the next. */
	ck_assert_str_eq(plot_bytes_text(b, GiB - 1), "1.00 GiB");
	ck_assert_str_eq(plot_time_text(b, 800), "800 ns");
	ck_assert_str_eq(plot_time_text(b, 1500), "1.50 us");
	ck_assert_str_eq(plot_time_text(b, 12300000), "12.30 ms");
	ck_assert_str_eq(plot_time_text(b, 4560000000), "4.56 s");
}
END_TEST

START_TEST(time_axis)
{
	struct plot_time_axis a;
	char b[32];
	plot_time_axis(&a, 0, 1200000000, 10);
	ck_assert_uint_eq(a.step, 200000000);
	ck_assert_str_eq(a.unit, "s");
	ck_assert_str_eq(plot_time_tick(b, &a, 400000000), "0.4");
	ck_assert_str_eq(plot_time_tick(b, &a, 1000000000), "1.0");
	/* Short traces read in ms, us, ns. */
	plot_time_axis(&a, 0, 800000000, 10);
	ck_assert_str_eq(a.unit, "ms");
	ck_assert_uint_eq(a.step, 100000000);
	ck_assert_str_eq(plot_time_tick(b, &a, 300000000), "300");
	plot_time_axis(&a, 1000, 6000, 6);
	ck_assert_str_eq(a.unit, "us");
	ck_assert_uint_eq(a.step, 1000);
	ck_assert_uint_eq(a.first, 1000);
	plot_time_axis(&a, 50, 221, 12);
	ck_assert_str_eq(a.unit, "ns");
	ck_assert_uint_eq(a.step, 20);
	ck_assert_uint_eq(a.first, 60);
	/* 1/2/5 x 10^k, never more ticks than asked. */
	for (uint64_t span = 1; span < 100000000000ull; span = span * 7 + 3)
		for (size_t t = 1; t < 20; t += 3) {
			plot_time_axis(&a, 12345, 12345 + span, t);
			uint64_t m = a.step;
			while (m % 10 == 0)
				m /= 10;
			ck_assert(m == 1 || m == 2 || m == 5);
			ck_assert_uint_le(span / a.step + 1, t > 1 ? t : 1);
			ck_assert_uint_ge(a.first, 12345);
			ck_assert_uint_lt(a.first - 12345, a.step);
		}
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("plot");
	TCase *tc = test_tcase(s, "axis:limits", 10);
	test_add(tc, axis_limits);
	tc = test_tcase(s, "svg:escape", 10);
	test_add(tc, escape_markup, escape_bad_bytes);
	tc = test_tcase(s, "svg:write", 10);
	test_add(tc, elements, numbers);
	tc = test_tcase(s, "axis:steps", 10);
	test_add(tc, bytes_axis, bytes_labels, time_axis);
	return s;
}

TEST_MAIN(suite);

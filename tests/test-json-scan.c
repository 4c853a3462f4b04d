/* SPDX-License-Identifier: MIT */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_scan.h"
#include "test-main.h"
#include "xorshift.h"

/* Literal with its length, so that inputs may hold NUL bytes. */
#define S(lit) lit, sizeof(lit) - 1

static struct cg_json_scan sc;

static void setup(void)
{
	cg_json_scan_init(&sc);
}

static void teardown(void)
{
	cg_json_scan_fini(&sc);
}

static int scan(const char *s, size_t n)
{
	return cg_json_scan(&sc, s, n);
}

/* A failed scan must leave a one-line message and an offset inside the input (or at its end). */
static void check_err_shape(size_t n)
{
	ck_assert_uint_le(sc.err_off, n);
	ck_assert(sc.err[0] != '\0');
	ck_assert_ptr_null(strchr(sc.err, '\n'));
	ck_assert_ptr_null(strchr(sc.err, '\r'));
	ck_assert_uint_lt(strlen(sc.err), sizeof(sc.err) - 1);
}

static void expect_bad(const char *s, size_t n, size_t off, const char *msg)
{
	int r = scan(s, n);

	ck_assert_msg(r == -EBADMSG, "`%.*s`: got %d, want -EBADMSG", (int)n, s, r);
	ck_assert_msg(sc.err_off == off, "`%.*s`: err_off %zu, want %zu (%s)", (int)n, s,
	              sc.err_off, off, sc.err);
	ck_assert_msg(strstr(sc.err, msg), "`%.*s`: message \"%s\" lacks \"%s\"", (int)n, s, sc.err,
	              msg);
	check_err_shape(n);
}

/* ---- valid inputs ---- */

static const struct {
	const char *s;
	size_t n;
} good[] = {
    {S("{}")},
    {S("[]")},
    {S("0")},
    {S("-0")},
    {S("-0.0e-0")},
    {S("1.5e+10")},
    {S("123456789012345678901234567890")},
    {S("\"\"")},
    {S("\"x\"")},
    {S("true")},
    {S("false")},
    {S("null")},
    {S(" \t\r\n{\"a\":[1,{\"b\":null}],\"c\":\"d\"} \n\r\t")},
    {S("[[],[[]],{},[{}]]")},
    {S("{ \"a\" : [ 1 , 2 ] , \"b\" : { } }")},
    {S("{\"a\":{\"a\":{\"a\":1}},\"b\":{\"a\":2}}")},
    {S("{\"a\":1,\"A\":2,\"a \":3,\"\":4}")},
    {S("\"\\\"\\\\\\/\\b\\f\\n\\r\\t\\u00e9\\u00E9\\uD83D\\uDE00\\ud83d\\ude00\"")},
    {S("\"\\u0001\\u001f\\uffff\\ud7ff\\ue000\\udbff\\udfff\"")},
    {S("\"\xc2\x80 \xc3\xa9 \xdf\xbf\"")},
    {S("\"\xe0\xa0\x80 \xe2\x82\xac \xed\x9f\xbf \xee\x80\x80 \xef\xbf\xbf\"")},
    {S("\"\xf0\x90\x80\x80 \xf0\x9f\x98\x80 \xf3\xbf\xbf\xbf \xf4\x8f\xbf\xbf\"")},
    {S("\"\x7f ~ `\"")},
    {S("{\"\xf0\x9f\x98\x80\":\"\xe2\x82\xac\"}")},
    {S("[true,false,null,\"s\",-1.25E-3,{\"k\":[]}]")},
    {S("{\"kind\":\"memory\",\"timestamp_ns\":123456789,\"tensor_id\":\"0x55d0c8a2b2a0\","
       "\"span_id\":\"s1\",\"op_name\":\"malloc\",\"device\":\"cpu\",\"bytes\":64,"
       "\"action\":\"alloc\",\"shape\":[64],\"dtype\":\"u8\",\"category\":\"other\"}")},
    /* a long string exercises the eight-byte skip and its tail */
    {S("\"abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ!#$%&'()*+,-./\"")},
};

START_TEST(test_good)
{
	int r = scan(good[_i].s, good[_i].n);

	ck_assert_msg(r == 0, "`%s`: %d %s at %zu", good[_i].s, r, sc.err, sc.err_off);
	ck_assert_str_eq(sc.err, "");
	ck_assert_uint_eq(sc.err_off, 0);
}
END_TEST

/* ---- invalid inputs ---- */

static const struct {
	const char *s;
	size_t n;
	size_t off;
	const char *msg;
} bad[] = {
    /* values */
    {S("x"), 0, "expected a JSON value, found `x`"},
    {S("NaN"), 0, "expected a JSON value, found `N`"},
    {S("Infinity"), 0, "expected a JSON value"},
    {S("-Infinity"), 1, "expected a digit after `-` in number"},
    {S("+1"), 0, "expected a JSON value, found `+`"},
    {S(".5"), 0, "expected a JSON value"},
    {S("'a'"), 0, "expected a JSON value"},
    {S("\x01"), 0, "expected a JSON value, found U+0001"},
    {S("\v1"), 0, "expected a JSON value, found U+000B"},
    {S("\f1"), 0, "expected a JSON value"},
    {S("tru"), 3, "expected `true`"},
    {S("trUe"), 2, "expected `true`, found `U`"},
    {S("fals"), 4, "expected `false`"},
    {S("nul"), 3, "expected `null`"},
    {S("True"), 0, "expected a JSON value"},
    {S("nulll"), 4, "trailing characters after the JSON value"},
    /* numbers */
    {S("01"), 1, "leading zero in number"},
    {S("-01"), 2, "leading zero in number"},
    {S("00"), 1, "leading zero in number"},
    {S("[00]"), 2, "leading zero in number"},
    {S("{\"a\":012}"), 6, "leading zero in number"},
    {S("1."), 2, "expected a digit after `.` in number"},
    {S("1.e3"), 2, "expected a digit after `.` in number, found `e`"},
    {S("[1.]"), 3, "expected a digit after `.` in number, found `]`"},
    {S("1e"), 2, "expected a digit in the exponent of number"},
    {S("1E+"), 3, "expected a digit in the exponent of number"},
    {S("1e-x"), 3, "expected a digit in the exponent of number, found `x`"},
    {S("-"), 1, "expected a digit after `-` in number"},
    {S("- 1"), 1, "expected a digit after `-` in number, found U+0020"},
    {S("0x10"), 1, "trailing characters after the JSON value"},
    {S("1.5.5"), 3, "trailing characters after the JSON value"},
    /* structure */
    {S(""), 0, "expected a JSON value"},
    {S(" \t\r\n"), 4, "expected a JSON value"},
    {S("{\"a\":1} x"), 8, "trailing characters after the JSON value"},
    {S("{\"a\":1}{}"), 7, "trailing characters after the JSON value"},
    {S("1 2"), 2, "trailing characters after the JSON value"},
    {S("{} \x00"), 3, "trailing characters after the JSON value"},
    {S("{\"a\" 1}"), 5, "expected `:` after object key, found `1`"},
    {S("{\"a\""), 4, "expected `:` after object key"},
    {S("{\"a\":1,}"), 7, "expected a string key after `,`, found `}`"},
    {S("{,}"), 1, "expected a string key or `}`, found `,`"},
    {S("{a:1}"), 1, "expected a string key or `}`"},
    {S("{1:1}"), 1, "expected a string key or `}`"},
    {S("{\"a\":1 \"b\":2}"), 7, "expected `,` or `}` after object member, found `\"`"},
    {S("{\"a\":1]"), 6, "expected `,` or `}` after object member"},
    {S("[1 2]"), 3, "expected `,` or `]` after array element, found `2`"},
    {S("[1}"), 2, "expected `,` or `]` after array element"},
    {S("[1,]"), 3, "expected a JSON value, found `]`"},
    {S("[,]"), 1, "expected a JSON value or `]`, found `,`"},
    {S("["), 1, "expected a JSON value or `]`"},
    {S("{"), 1, "expected a string key or `}`"},
    {S("{\"a\":"), 5, "expected a JSON value"},
    {S("{\"a\":}"), 5, "expected a JSON value, found `}`"},
    {S("{\"a\":1"), 6, "expected `,` or `}` after object member"},
    {S("[1"), 2, "expected `,` or `]` after array element"},
    {S("]"), 0, "expected a JSON value"},
    /* strings */
    {S("\"abc"), 4, "unterminated string"},
    {S("\"abc\\"), 5, "unterminated string"},
    {S("\"abc\\\""), 6, "unterminated string"},
    {S("\"\\u12"), 5, "unterminated string"},
    {S("\"\\ud800"), 7, "unterminated string"},
    {S("\"\\ud800\\"), 8, "unterminated string"},
    {S("{\"a\":\"b}"), 8, "unterminated string"},
    {S("\"\\x\""), 1, "invalid escape `\\x` in string"},
    {S("\"ab\\U0041\""), 3, "invalid escape `\\U` in string"},
    {S("\"\\'\""), 1, "invalid escape `\\'` in string"},
    {S("\"\\ \""), 1, "invalid escape in string"},
    {S("\"\\\xc3\xa9\""), 1, "invalid escape in string"},
    {S("\"\\u12G4\""), 5, "expected 4 hex digits after `\\u` in string, found `G`"},
    {S("\"\\u12\""), 5, "expected 4 hex digits after `\\u` in string, found `\"`"},
    {S("\"\\ud800\\u12x4\""), 11, "expected 4 hex digits after `\\u` in string"},
    {S("\"a\x01"
       "b\""),
     2, "control character U+0001 in string must be escaped"},
    {S("\"\x1f\""), 1, "control character U+001F in string must be escaped"},
    {S("\"a\tb\""), 2, "control character U+0009 in string must be escaped"},
    {S("\"a\nb\""), 2, "control character U+000A in string must be escaped"},
    {S("\"a\x00"
       "b\""),
     2, "control character U+0000 in string must be escaped"},
    {S("\"\\udc00\""), 1, "lone surrogate `\\udc00` in string"},
    {S("\"ab\\uDFFF\""), 3, "lone surrogate `\\uDFFF` in string"},
    {S("\"\\ud800\""), 1, "lone surrogate `\\ud800` in string"},
    {S("\"\\uD83Dx\""), 1, "lone surrogate `\\uD83D` in string"},
    {S("\"\\ud800\\n\""), 1, "lone surrogate `\\ud800` in string"},
    {S("\"\\ud800\\u0041\""), 1, "lone surrogate `\\ud800` in string"},
    {S("\"\\ud800\\udbff\""), 1, "lone surrogate `\\ud800` in string"},
    {S("\"\\ude00\\ud83d\""), 1, "lone surrogate `\\ude00` in string"},
    {S("\"x\\u0000\""), 2, "NUL characters (`\\u0000`) are not supported in strings"},
    {S("{\"\\u0000\":1}"), 2, "NUL characters"},
    /* UTF-8 */
    {S("\"\xc0\xaf\""), 1, "invalid UTF-8"},
    {S("\"\xc1\xbf\""), 1, "invalid UTF-8"},
    {S("\"\xe0\x80\xaf\""), 1, "invalid UTF-8"},
    {S("\"\xe0\x9f\xbf\""), 1, "invalid UTF-8"},
    {S("\"\xf0\x80\x80\xaf\""), 1, "invalid UTF-8"},
    {S("\"\xf0\x8f\xbf\xbf\""), 1, "invalid UTF-8"},
    {S("\"ab\xed\xa0\x80\""), 3, "invalid UTF-8"},
    {S("\"\xed\xbf\xbf\""), 1, "invalid UTF-8"},
    {S("\"\xf4\x90\x80\x80\""), 1, "invalid UTF-8"},
    {S("\"\xf5\x80\x80\x80\""), 1, "invalid UTF-8"},
    {S("\"\xf8\x88\x80\x80\x80\""), 1, "invalid UTF-8"},
    {S("\"\xff\""), 1, "invalid UTF-8"},
    {S("\"\xfe\""), 1, "invalid UTF-8"},
    {S("\"\x80\""), 1, "invalid UTF-8"},
    {S("\"\xc3\xa9\xa9\""), 3, "invalid UTF-8"},
    {S("\"a\xc3\""), 2, "invalid UTF-8"},
    {S("\"\xe2\x82\""), 1, "invalid UTF-8"},
    {S("\"\xe2\x82"), 1, "invalid UTF-8"},
    {S("\"\xf0\x9f\x98"), 1, "invalid UTF-8"},
    {S("\"\xc3"), 1, "invalid UTF-8"},
    {S("\xff"), 0, "invalid UTF-8"},
    {S("\xef\xbb\xbf{}"), 0, "expected a JSON value, found U+FEFF"},
    {S("{\"a\":1}\xff"), 7, "invalid UTF-8"},
    {S("{\"a\":1} \xc3\xa9"), 8, "trailing characters after the JSON value"},
    {S("[1,\xc3\xa9]"), 3, "expected a JSON value, found U+00E9"},
    {S("[1,\xe9]"), 3, "invalid UTF-8"},
    {S("{\"a\"\xc0}"), 4, "invalid UTF-8"},
    {S("\"\\\xc0\""), 2, "invalid UTF-8"},
    /* duplicate keys */
    {S("{\"a\":1,\"a\":2}"), 7, "duplicate key `a`"},
    {S("{\"a\":1,\"\\u0061\":2}"), 7, "duplicate key `a`"},
    {S("{\"\\u0061\":1,\"a\":2}"), 12, "duplicate key `a`"},
    {S("{\"\\/\":1,\"/\":2}"), 8, "duplicate key `/`"},
    {S("{\"\":1,\"\":2}"), 6, "duplicate key ``"},
    {S("{\"a\":{\"b\":1,\"b\":2}}"), 12, "duplicate key `b`"},
    {S("{\"x\":1,\"y\":{\"x\":2},\"x\":3}"), 19, "duplicate key `x`"},
    {S("[{\"a\":1},{\"a\":1,\"a\":1}]"), 16, "duplicate key `a`"},
    {S("{\"\\ud83d\\ude00\":1,\"\xf0\x9f\x98\x80\":2}"), 18, "duplicate key `\xf0\x9f\x98\x80`"},
    {S("{\"\xc3\xa9\":1,\"\\u00e9\":2}"), 8, "duplicate key `\xc3\xa9`"},
    {S("{\"a\\nb\":1,\"a\\u000ab\":2}"), 10, "duplicate key `a\\u000ab`"},
    {S("{\"kind\":\"op\",\"span_id\":\"s1\",\"kind\":\"op\"}"), 28, "duplicate key `kind`"},
};

START_TEST(test_bad)
{
	expect_bad(bad[_i].s, bad[_i].n, bad[_i].off, bad[_i].msg);
}
END_TEST

START_TEST(test_exact_messages)
{
	expect_bad(S(""), 0, "");
	ck_assert_str_eq(sc.err, "expected a JSON value");
	expect_bad(S("   "), 3, "");
	ck_assert_str_eq(sc.err, "expected a JSON value");
	expect_bad(S("{\"a\":1} x"), 8, "");
	ck_assert_str_eq(sc.err, "trailing characters after the JSON value");
	expect_bad(S("{\"a\""), 4, "");
	ck_assert_str_eq(sc.err, "expected `:` after object key");
	expect_bad(S("\"abc"), 4, "");
	ck_assert_str_eq(sc.err, "unterminated string");
	expect_bad(S("\"\\x\""), 1, "");
	ck_assert_str_eq(sc.err, "invalid escape `\\x` in string");
	expect_bad(S("\"\x01\""), 1, "");
	ck_assert_str_eq(sc.err, "control character U+0001 in string must be escaped");
	expect_bad(S("\"\\udc00\""), 1, "");
	ck_assert_str_eq(sc.err, "lone surrogate `\\udc00` in string");
	expect_bad(S("01"), 1, "");
	ck_assert_str_eq(sc.err, "leading zero in number");
	expect_bad(S("\"\xc0\xaf\""), 1, "");
	ck_assert_str_eq(sc.err, "invalid UTF-8");
	expect_bad(S("{\"a\":1,\"a\":2}"), 7, "");
	ck_assert_str_eq(sc.err, "duplicate key `a`");
}
END_TEST

START_TEST(test_too_long_input)
{
	/* Refused before any byte is read: token offsets are 32-bit. */
	ck_assert_int_eq(cg_json_scan(&sc, "1", (size_t)UINT32_MAX + 1), -EBADMSG);
	ck_assert_ptr_nonnull(strstr(sc.err, "4 GiB"));
}
END_TEST

/* ---- number tokens ---- */

static void expect_nums(const char *s, size_t n, const char *const *want, size_t n_want)
{
	ck_assert_msg(scan(s, n) == 0, "%s at %zu", sc.err, sc.err_off);
	ck_assert_uint_eq(sc.n_nums, n_want);
	for (size_t i = 0; i < n_want; i++) {
		size_t len = strlen(want[i]);

		ck_assert_uint_eq(sc.nums[i].len, len);
		ck_assert_uint_le((size_t)sc.nums[i].off + len, n);
		ck_assert_msg(memcmp(s + sc.nums[i].off, want[i], len) == 0, "token %zu: %.*s", i,
		              (int)len, s + sc.nums[i].off);
		if (i)
			ck_assert_uint_gt(sc.nums[i].off, sc.nums[i - 1].off);
	}
}

START_TEST(test_num_tokens)
{
	static const char in[] = "[1,{\"a\":-2.5e3,\"b1\":[0,[7]],\"c\":\"12\"},\"x1\",true,1E-7 ]";
	static const char *const want[] = {"1", "-2.5e3", "0", "7", "1E-7"};
	static const char rec[] =
	    "{\"kind\":\"memory\",\"timestamp_ns\":123456789,\"tensor_id\":\"0x55d0c8a2b2a0\","
	    "\"span_id\":\"s1\",\"op_name\":\"malloc\",\"device\":\"cpu\",\"bytes\":64,"
	    "\"action\":\"alloc\",\"shape\":[64],\"dtype\":\"u8\",\"category\":\"other\"}";
	static const char *const want_rec[] = {"123456789", "64", "64"};
	static const char *const want_one[] = {"-0.0"};

	expect_nums(in, sizeof(in) - 1, want, 5);
	ck_assert_uint_eq(sc.nums[0].off, 1);
	ck_assert_uint_eq(sc.nums[1].off, 8);
	ck_assert(!sc.top_is_object);
	expect_nums(rec, sizeof(rec) - 1, want_rec, 3);
	ck_assert(sc.top_is_object);
	/* the list restarts on every call */
	expect_nums(S(" -0.0 "), want_one, 1);
	ck_assert_uint_eq(sc.nums[0].off, 1);
	expect_nums(S("{\"a\":\"1\"}"), NULL, 0);
}
END_TEST

START_TEST(test_num_tokens_grow)
{
	size_t cap = 200000 * 4 + 2, n = 0;
	char *s = malloc(cap);

	ck_assert_ptr_nonnull(s);
	s[n++] = '[';
	for (int i = 0; i < 200000; i++)
		n += (size_t)snprintf(s + n, cap - n, "%d,", i % 100);
	s[n - 1] = ']';
	ck_assert_int_eq(scan(s, n), 0);
	ck_assert_uint_eq(sc.n_nums, 200000);
	ck_assert_uint_eq(sc.nums[199999].len, 2);
	ck_assert(memcmp(s + sc.nums[199999].off, "99", 2) == 0);
	free(s);
}
END_TEST

START_TEST(test_top_is_object)
{
	ck_assert_int_eq(scan(S(" \n{\"a\":1} ")), 0);
	ck_assert(sc.top_is_object);
	ck_assert_int_eq(scan(S("[{}]")), 0);
	ck_assert(!sc.top_is_object);
	ck_assert_int_eq(scan(S("\"{\"")), 0);
	ck_assert(!sc.top_is_object);
	ck_assert_int_eq(scan(S("{}")), 0);
	ck_assert(sc.top_is_object);
	ck_assert_int_eq(scan(S("{} x")), -EBADMSG);
	ck_assert(!sc.top_is_object);
}
END_TEST

/* ---- nesting ---- */

static char *nested(size_t depth, const char *open, const char *mid, const char *close, size_t *n)
{
	size_t lo = strlen(open), lm = strlen(mid), lc = strlen(close);
	char *s = malloc(depth * (lo + lc) + lm + 1), *w = s;

	ck_assert_ptr_nonnull(s);
	for (size_t i = 0; i < depth; i++, w += lo)
		memcpy(w, open, lo);
	memcpy(w, mid, lm);
	w += lm;
	for (size_t i = 0; i < depth; i++, w += lc)
		memcpy(w, close, lc);
	*w = '\0';
	*n = (size_t)(w - s);
	return s;
}

START_TEST(test_depth_limit)
{
	size_t n;
	char *s;

	s = nested(128, "[", "1", "]", &n);
	ck_assert_msg(scan(s, n) == 0, "%s", sc.err);
	free(s);
	s = nested(129, "[", "1", "]", &n);
	expect_bad(s, n, 128, "nesting deeper than 128 arrays/objects");
	free(s);
	s = nested(128, "{\"a\":", "1", "}", &n);
	ck_assert_msg(scan(s, n) == 0, "%s", sc.err);
	free(s);
	s = nested(129, "{\"a\":", "1", "}", &n);
	expect_bad(s, n, 128 * 5, "nesting deeper than 128");
	free(s);
	s = nested(64, "[{\"k\":", "1", "}]", &n);
	ck_assert_msg(scan(s, n) == 0, "%s", sc.err);
	free(s);
	s = nested(64, "[{\"k\":", "[]", "}]", &n);
	expect_bad(s, n, 64 * 6, "nesting deeper than 128");
	free(s);
}
END_TEST

START_TEST(test_deep_garbage)
{
	size_t n = 100000;
	char *s = malloc(n * 5);

	ck_assert_ptr_nonnull(s);
	memset(s, '[', n);
	expect_bad(s, n, 128, "nesting deeper than 128");
	for (size_t i = 0; i < n; i++)
		memcpy(s + i * 5, "{\"a\":", 5);
	expect_bad(s, n * 5, 128 * 5, "nesting deeper than 128");
	/* closing brackets only: nothing to unwind */
	memset(s, ']', n);
	expect_bad(s, n, 0, "expected a JSON value");
	free(s);
}
END_TEST

/* ---- big objects ---- */

/* {"k0":0,"k1":1,...} with n_keys keys; key `extra` (if any) appended last. */
static char *big_object(size_t n_keys, const char *extra, size_t *n, size_t *extra_off)
{
	size_t cap = n_keys * 24 + 64, len = 0;
	char *s = malloc(cap);

	ck_assert_ptr_nonnull(s);
	s[len++] = '{';
	for (size_t i = 0; i < n_keys; i++)
		len += (size_t)snprintf(s + len, cap - len, "%s\"k%zu\":%zu", i ? "," : "", i, i);
	if (extra) {
		*extra_off = len + 1;
		len += (size_t)snprintf(s + len, cap - len, ",\"%s\":0", extra);
	}
	s[len++] = '}';
	s[len] = '\0';
	*n = len;
	return s;
}

START_TEST(test_big_object_distinct)
{
	size_t n, off;
	char *s = big_object(10000, NULL, &n, &off);

	ck_assert_msg(scan(s, n) == 0, "%s at %zu", sc.err, sc.err_off);
	ck_assert_uint_eq(sc.n_nums, 10000);
	/* the same scanner again: hash sets are reused, ids must not alias */
	ck_assert_msg(scan(s, n) == 0, "%s at %zu", sc.err, sc.err_off);
	free(s);
}
END_TEST

START_TEST(test_big_object_dup)
{
	size_t n, off;
	char *s = big_object(10000, "k5000", &n, &off);

	expect_bad(s, n, off, "duplicate key `k5000`");
	free(s);
	s = big_object(10000, "k\\u0030", &n, &off);
	expect_bad(s, n, off, "duplicate key `k0`");
	free(s);
	s = big_object(10000, "k9999", &n, &off);
	expect_bad(s, n, off, "duplicate key `k9999`");
	free(s);
}
END_TEST

/* Keys around the switch from linear comparison to hashing. */
START_TEST(test_dup_every_size)
{
	for (size_t keys = 1; keys < 70; keys++) {
		for (size_t d = 0; d < keys; d += 7) {
			char extra[16];
			size_t n, off;
			char *s;

			snprintf(extra, sizeof(extra), "k%zu", d);
			s = big_object(keys, extra, &n, &off);
			expect_bad(s, n, off, "duplicate key");
			free(s);
		}
		{
			size_t n, off;
			char *s = big_object(keys, "fresh", &n, &off);

			ck_assert_int_eq(scan(s, n), 0);
			free(s);
		}
	}
}
END_TEST

/* A big object inside a big object: inner keys must not leak into the outer set. */
START_TEST(test_nested_big_objects)
{
	char buf[4096];
	size_t len = 0;

	len += (size_t)snprintf(buf + len, sizeof(buf) - len, "{");
	for (int i = 0; i < 30; i++)
		len += (size_t)snprintf(buf + len, sizeof(buf) - len, "\"k%d\":%d,", i, i);
	len += (size_t)snprintf(buf + len, sizeof(buf) - len, "\"inner\":{");
	for (int i = 0; i < 40; i++)
		len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s\"k%d\":%d", i ? "," : "",
		                        i + 10, i);
	len += (size_t)snprintf(buf + len, sizeof(buf) - len, "},\"k45\":1,\"k30\":2");
	ck_assert_msg(scan(buf, len) == -EBADMSG, "%s", sc.err);
	ck_assert_str_eq(sc.err, "expected `,` or `}` after object member");
	buf[len++] = '}';
	ck_assert_msg(scan(buf, len) == 0, "%s at %zu", sc.err, sc.err_off);
	/* now repeat an outer key after the inner object closed */
	len -= 1;
	len += (size_t)snprintf(buf + len, sizeof(buf) - len, ",\"k29\":3}");
	expect_bad(buf, len, len - 8, "duplicate key `k29`");
}
END_TEST

START_TEST(test_dup_key_display)
{
	char buf[512], key[201];
	const char *bt;
	size_t len;

	memset(key, 'x', 200);
	key[200] = '\0';
	len = (size_t)snprintf(buf, sizeof(buf), "{\"%s\":1,\"%s\":2}", key, key);
	expect_bad(buf, len, 206, "duplicate key `xxxxxxxxxx");
	ck_assert_ptr_nonnull(strstr(sc.err, "...`"));
	ck_assert_uint_lt(strlen(sc.err), 80);
	/* a multi-byte character is never cut in half */
	len = 0;
	len += (size_t)snprintf(buf, sizeof(buf), "{\"");
	for (int i = 0; i < 30; i++)
		len += (size_t)snprintf(buf + len, sizeof(buf) - len, "\xe2\x82\xac");
	len += (size_t)snprintf(buf + len, sizeof(buf) - len, "\":1,\"");
	for (int i = 0; i < 30; i++)
		len += (size_t)snprintf(buf + len, sizeof(buf) - len, "\\u20ac");
	len += (size_t)snprintf(buf + len, sizeof(buf) - len, "\":2}");
	expect_bad(buf, len, 2 + 90 + 4, "duplicate key `");
	bt = strrchr(sc.err, '`');
	ck_assert_ptr_nonnull(bt);
	ck_assert(memcmp(bt - 3, "...", 3) == 0);
	ck_assert_uint_eq((size_t)(bt - 3 - strchr(sc.err, '`') - 1) % 3, 0);
	/* control characters are shown escaped, so the message stays on one line */
	expect_bad(S("{\"\\r\\n\":1,\"\\r\\n\":2}"), 10, "duplicate key `\\u000d\\u000a`");
}
END_TEST

/* ---- robustness ---- */

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint32_t rng(void)
{
	return (uint32_t)xorshift64(&rng_state);
}

START_TEST(test_mutations_no_crash)
{
	static const char seed[] =
	    "{\"kind\":\"op\",\"span_id\":\"s2\",\"op_name\":\"matmul\\u00e9\",\"inputs\":"
	    "[\"t1\",\"t2\"],\"shape\":[2,3],\"dtype\":\"f32\",\"device\":\"cuda:0\","
	    "\"duration_ns\":1.5e3,\"x\":[true,false,null,{\"\xf0\x9f\x98\x80\":-0}]}";
	static const char alphabet[] = "{}[]\":,\\u0123456789.eE+-tfnl \t\n\x80\xc3\xed\xf4\xff";
	char buf[sizeof(seed) + 8];

	for (int iter = 0; iter < 200000; iter++) {
		size_t n = sizeof(seed) - 1;
		int edits = 1 + (int)(rng() % 4), r;

		memcpy(buf, seed, n);
		for (int e = 0; e < edits && n > 1; e++) {
			size_t at = rng() % n;

			switch (rng() % 3) {
			case 0:
				buf[at] = alphabet[rng() % (sizeof(alphabet) - 1)];
				break;
			case 1:
				memmove(buf + at, buf + at + 1, n - at - 1);
				n--;
				break;
			default:
				n = at + 1 + rng() % (n - at);
				break;
			}
		}
		r = cg_json_scan(&sc, buf, n);
		ck_assert(r == 0 || r == -EBADMSG);
		if (r)
			check_err_shape(n);
		for (size_t i = 0; i < sc.n_nums && !r; i++)
			ck_assert_uint_le((size_t)sc.nums[i].off + sc.nums[i].len, n);
	}
}
END_TEST

/* Every case scans with the fixture's scanner. */
static TCase *scan_case(Suite *s, const char *name)
{
	TCase *tc = test_tcase(s, name, 60);
	tcase_add_checked_fixture(tc, setup, teardown);
	return tc;
}

TEST_SUITE(json_scan_suite, "json_scan")
{
	TCase *tc;

	tc = scan_case(s, "scan:accept");
	tcase_add_loop_test(tc, test_good, 0, (int)(sizeof(good) / sizeof(good[0])));
	tc = scan_case(s, "scan:reject");
	tcase_add_loop_test(tc, test_bad, 0, (int)(sizeof(bad) / sizeof(bad[0])));
	test_add(tc, test_exact_messages, test_too_long_input);
	tc = scan_case(s, "scan:numbers");
	test_add(tc, test_num_tokens, test_num_tokens_grow);
	tc = scan_case(s, "scan:structure");
	test_add(tc, test_top_is_object, test_depth_limit, test_deep_garbage);
	tc = scan_case(s, "scan:keys");
	test_add(tc, test_big_object_distinct, test_big_object_dup, test_dup_every_size,
	         test_nested_big_objects, test_dup_key_display);
	tc = scan_case(s, "scan:mutations");
	test_add(tc, test_mutations_no_crash);
}

TEST_MAIN(json_scan_suite);

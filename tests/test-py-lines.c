/* SPDX-License-Identifier: MIT */
/*
 * The decoders of CPython's line tables (core/python/py_lines.h) against
 * the line of every instruction of a fixed set of functions as each
 * interpreter, 3.8 to 3.13, gave it (tests/python/gen-linetables.py, the
 * files of tests/python/linetables/ in PY_LINES_DIR), and hostile tables:
 * cut, misaligned, too wide, each refused with its reason.
 */
#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "py_lines.h"
#include "test-main.h"

/* Millions of offsets: Check is only called on a failure. */
#define EXPECT(cond, ...)                                                                          \
	do {                                                                                       \
		if (!(cond))                                                                       \
			ck_abort_msg(__VA_ARGS__);                                                 \
	} while (0)

static const char *vec_dir;

/* One file per interpreter; a distribution's build only where it differs. */
static const char *const vec_files[] = {
    "3.8.txt", "3.9.txt", "3.10.txt", "3.11.txt", "3.12.txt", "3.13.txt", "3.11-debian.txt",
};
#define N_VEC_FILES ((int)(sizeof(vec_files) / sizeof(vec_files[0])))

static FILE *open_vec(int i)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s", vec_dir, vec_files[i]);
	return fopen(path, "r");
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* The table of a vector line ("-" is none) into t, its length. */
static size_t parse_hex(const char *hex, size_t len, uint8_t *t, const char *where)
{
	if (len == 1 && hex[0] == '-')
		return 0;
	EXPECT(len % 2 == 0, "%s: odd hex table", where);
	for (size_t i = 0; i < len; i += 2) {
		int hi = hexval(hex[i]), lo = hexval(hex[i + 1]);
		EXPECT(hi >= 0 && lo >= 0, "%s: bad hex", where);
		t[i / 2] = (uint8_t)(hi << 4 | lo);
	}
	return len / 2;
}

/* What one file's code objects exercised, for the log. */
struct vec_stats {
	unsigned long codes, offsets, no_line;
};

/* FORMAT FIRSTLINENO HEX_TABLE OFF:LINE ...: every offset's line, then past the last. */
static void check_vec_line(char *l, const char *where, struct vec_stats *st)
{
	char *save = NULL;
	char *fname = strtok_r(l, " \n", &save);
	char *firsts = strtok_r(NULL, " \n", &save);
	char *hex = strtok_r(NULL, " \n", &save);
	EXPECT(fname && firsts && hex, "%s: short line", where);
	enum cg_py_lt fmt = cg_py_lt_of(fname, strlen(fname));
	EXPECT(fmt != 0, "%s: unknown format %s", where, fname);
	int first = (int)strtol(firsts, NULL, 10);

	size_t hlen = strlen(hex);
	uint8_t *t = malloc(hlen / 2 + 1);
	ck_assert_ptr_nonnull(t);
	size_t n = parse_hex(hex, hlen, t, where);
	const char *why = NULL;
	int rc = cg_py_lt_check(fmt, t, n, &why);
	EXPECT(rc == 0, "%s: the interpreter's table refused: %s", where, why ? why : "?");

	long next = 0;
	for (char *p; (p = strtok_r(NULL, " \n", &save));) {
		char *end;
		long off = strtol(p, &end, 10);
		EXPECT(*end == ':' && off == next, "%s: offset %s out of order", where, p);
		long want = strtol(end + 1, NULL, 10);
		int got = cg_py_lt_line(fmt, first, t, n, (uint32_t)off);
		EXPECT(got == want, "%s: %s table, offset %ld: line %d, the interpreter's %ld",
		       where, fname, off, got, want);
		st->offsets++;
		st->no_line += want == -1;
		next = off + 2;
	}
	EXPECT(next > 0, "%s: no offsets", where);
	/* The interpreters' tables cover co_code exactly: nothing lies past it. */
	if (fmt != CG_PY_LT_LNOTAB) {
		EXPECT(cg_py_lt_line(fmt, first, t, n, (uint32_t)next) == -1,
		       "%s: offset %ld, past the code, has a line", where, next);
		EXPECT(cg_py_lt_line(fmt, first, t, n, UINT32_MAX) == -1,
		       "%s: the last offset has a line", where);
	}
	st->codes++;
	free(t);
}

START_TEST(vectors_every_offset)
{
	FILE *f = open_vec(_i);
	if (!f) {
		fprintf(stderr, "py-lines: no %s/%s, skipped\n", vec_dir, vec_files[_i]);
		return;
	}
	struct vec_stats st = {0};
	char *l = NULL;
	size_t cap = 0;
	int ln = 0;
	while (getline(&l, &cap, f) > 0) {
		char where[128];
		snprintf(where, sizeof(where), "%s:%d", vec_files[_i], ++ln);
		check_vec_line(l, where, &st);
	}
	free(l);
	fclose(f);
	ck_assert_uint_gt(st.codes, 0);
	fprintf(stderr, "py-lines: %s: %lu code objects, %lu offsets (%lu without a line)\n",
	        vec_files[_i], st.codes, st.offsets, st.no_line);
}
END_TEST

/* A missing file skips its versions only: none at all is a failure, not a pass. */
START_TEST(vectors_some_present)
{
	int found = 0;
	for (int i = 0; i < N_VEC_FILES; i++) {
		FILE *f = open_vec(i);
		if (f) {
			found++;
			fclose(f);
		}
	}
	ck_assert_msg(found > 0, "no vector file in %s", vec_dir);
}
END_TEST

/* ------------------------------------------------------------------ */

struct hostile {
	const char *name;
	enum cg_py_lt fmt;
	const char *bytes;
	size_t n;
	const char *why; /* a word of the reason */
};

#define T(s) s, sizeof(s) - 1

static const struct hostile hostile[] = {
    /* long form (kind 14, 1 unit): the line delta's varint says more follows */
    {"locations cut inside a varint", CG_PY_LT_LOCATIONS, T("\xf0\x42"), "cut short"},
    /* the varint's next chunk is the next entry's first byte */
    {"locations varint into the next entry", CG_PY_LT_LOCATIONS, T("\xe8\x41\xf8"), "cut short"},
    /* a long form with two of its four varints */
    {"locations entry running past the end", CG_PY_LT_LOCATIONS, T("\xf0\x02\x00"), "cut short"},
    /* a one-line form (kind 10) with one of its two column bytes */
    {"locations one-line form cut", CG_PY_LT_LOCATIONS, T("\xd0\x05"), "cut short"},
    /* a short form without its column byte, then a good entry */
    {"locations short form cut", CG_PY_LT_LOCATIONS, T("\x80\xf8"), "cut short"},
    /* no location (kind 15) has no bytes after it */
    {"locations stray byte", CG_PY_LT_LOCATIONS, T("\xf8\x05"), "stray"},
    {"locations starting mid-entry", CG_PY_LT_LOCATIONS, T("\x05\xf8"), "starts inside"},
    /* seven chunks: 42 bits */
    {"locations varint too wide", CG_PY_LT_LOCATIONS, T("\xe8\x7f\x7f\x7f\x7f\x7f\x7f\x01"),
     "32 bits"},
    /* six chunks, 2^32 */
    {"locations varint of 2^32", CG_PY_LT_LOCATIONS, T("\xe8\x40\x40\x40\x40\x40\x04"), "32 bits"},
    {"lnotab of odd length", CG_PY_LT_LNOTAB, T("\x02\x01\x04"), "odd"},
    {"linetable of odd length", CG_PY_LT_LINETABLE, T("\x02"), "odd"},
    /* 3.10 would look past the table for the range after it */
    {"linetable ending zero-length", CG_PY_LT_LINETABLE, T("\x02\x00\x00\x05"), "zero-length"},
    {"linetable of one zero-length entry", CG_PY_LT_LINETABLE, T("\x00\x01"), "zero-length"},
    {"format 0", (enum cg_py_lt)0, T("\x02\x01"), "format"},
    {"format 4", (enum cg_py_lt)4, T("\x02\x01"), "format"},
};

START_TEST(hostile_refused)
{
	const struct hostile *h = &hostile[_i];
	const char *why = NULL;
	ck_assert_msg(cg_py_lt_check(h->fmt, (const uint8_t *)h->bytes, h->n, &why) == -EBADMSG,
	              "%s: accepted", h->name);
	ck_assert_msg(why && strstr(why, h->why), "%s: reason %s", h->name, why ? why : "(none)");
	/* the reason is optional; a refusal is not */
	ck_assert_int_eq(cg_py_lt_check(h->fmt, (const uint8_t *)h->bytes, h->n, NULL), -EBADMSG);
}
END_TEST

/* Every prefix of a hostile table is refused, or decodes within it. */
START_TEST(hostile_prefixes)
{
	const struct hostile *h = &hostile[_i];
	for (size_t k = 0; k <= h->n; k++) {
		uint8_t *t = malloc(k + 1);
		ck_assert_ptr_nonnull(t);
		memcpy(t, h->bytes, k);
		const char *why = NULL;
		if (cg_py_lt_check(h->fmt, t, k, &why) == 0)
			for (uint32_t off = 0; off < 40; off += 2)
				(void)cg_py_lt_line(h->fmt, 1, t, k, off);
		else
			ck_assert_ptr_nonnull(why);
		free(t);
	}
}
END_TEST

START_TEST(check_accepts_edges)
{
	for (int f = CG_PY_LT_LNOTAB; f <= CG_PY_LT_LOCATIONS; f++)
		ck_assert_int_eq(cg_py_lt_check((enum cg_py_lt)f, NULL, 0, NULL), 0);
	/* the widest varint CPython writes: 2^32 - 1 in six chunks */
	static const uint8_t wide[] = {0xe8, 0x7f, 0x7f, 0x7f, 0x7f, 0x7f, 0x03};
	ck_assert_int_eq(cg_py_lt_check(CG_PY_LT_LOCATIONS, wide, sizeof(wide), NULL), 0);
	/* zero-length entries before a range carry a big line jump */
	static const uint8_t lt[] = {0x00, 0x7f, 0x00, 0x7f, 0x04, 0x10};
	ck_assert_int_eq(cg_py_lt_check(CG_PY_LT_LINETABLE, lt, sizeof(lt), NULL), 0);
}
END_TEST

/* ------------------------------------------------------------------ */

START_TEST(line_past_the_table)
{
	/* 3.10: 6 bytes on line first + 1 */
	static const uint8_t lt[] = {0x06, 0x01};
	ck_assert_int_eq(cg_py_lt_line(CG_PY_LT_LINETABLE, 10, lt, 2, 0), 11);
	ck_assert_int_eq(cg_py_lt_line(CG_PY_LT_LINETABLE, 10, lt, 2, 4), 11);
	ck_assert_int_eq(cg_py_lt_line(CG_PY_LT_LINETABLE, 10, lt, 2, 6), -1);
	ck_assert_int_eq(cg_py_lt_line(CG_PY_LT_LINETABLE, 10, lt, 2, UINT32_MAX), -1);
	/* 3.11+: one-line form (kind 11: line + 1), 2 code units */
	static const uint8_t loc[] = {0x80 | 11 << 3 | 1, 0x01, 0x02};
	ck_assert_int_eq(cg_py_lt_line(CG_PY_LT_LOCATIONS, 10, loc, 3, 2), 11);
	ck_assert_int_eq(cg_py_lt_line(CG_PY_LT_LOCATIONS, 10, loc, 3, 4), -1);
	ck_assert_int_eq(cg_py_lt_line(CG_PY_LT_LOCATIONS, 10, loc, 3, UINT32_MAX), -1);
	/* empty tables: no line in 3.10+; 3.8's lnotab gives co_firstlineno everywhere */
	ck_assert_int_eq(cg_py_lt_line(CG_PY_LT_LINETABLE, 10, NULL, 0, 0), -1);
	ck_assert_int_eq(cg_py_lt_line(CG_PY_LT_LOCATIONS, 10, NULL, 0, 0), -1);
	ck_assert_int_eq(cg_py_lt_line(CG_PY_LT_LNOTAB, 10, NULL, 0, 0), 10);
	ck_assert_int_eq(cg_py_lt_line(CG_PY_LT_LNOTAB, 10, NULL, 0, 1000), 10);
	ck_assert_int_eq(cg_py_lt_line((enum cg_py_lt)0, 10, lt, 2, 0), -1);
}
END_TEST

START_TEST(line_hand_made)
{
	/* lnotab: increments apply from the end of their bytes; -2 is 0xfe */
	static const uint8_t ln[] = {0x04, 0x03, 0x00, 0x7f, 0x02, 0xfe};
	ck_assert_int_eq(cg_py_lt_line(CG_PY_LT_LNOTAB, 5, ln, 6, 2), 5);
	ck_assert_int_eq(cg_py_lt_line(CG_PY_LT_LNOTAB, 5, ln, 6, 4), 5 + 3 + 127);
	ck_assert_int_eq(cg_py_lt_line(CG_PY_LT_LNOTAB, 5, ln, 6, 6), 5 + 3 + 127 - 2);
	ck_assert_int_eq(cg_py_lt_line(CG_PY_LT_LNOTAB, 5, ln, 6, 600), 5 + 3 + 127 - 2);
	/* linetable: -128 is no line and leaves the line as it was */
	static const uint8_t lt[] = {0x02, 0x00, 0x04, 0x80, 0x00, 0x7f, 0x02, 0x01};
	ck_assert_int_eq(cg_py_lt_line(CG_PY_LT_LINETABLE, 5, lt, 8, 0), 5);
	ck_assert_int_eq(cg_py_lt_line(CG_PY_LT_LINETABLE, 5, lt, 8, 2), -1);
	ck_assert_int_eq(cg_py_lt_line(CG_PY_LT_LINETABLE, 5, lt, 8, 4), -1);
	ck_assert_int_eq(cg_py_lt_line(CG_PY_LT_LINETABLE, 5, lt, 8, 6), 5 + 127 + 1);
	/* locations: no location, then no columns with -300 (zigzag 601), then a short form */
	static const uint8_t loc[] = {0x80 | 15 << 3, 0x80 | 13 << 3 | 2, 0x40 | (601 & 63),
	                              601 >> 6,       0x80 | 3 << 3,      0x05};
	ck_assert_int_eq(cg_py_lt_check(CG_PY_LT_LOCATIONS, loc, sizeof(loc), NULL), 0);
	ck_assert_int_eq(cg_py_lt_line(CG_PY_LT_LOCATIONS, 400, loc, sizeof(loc), 0), -1);
	ck_assert_int_eq(cg_py_lt_line(CG_PY_LT_LOCATIONS, 400, loc, sizeof(loc), 2), 100);
	ck_assert_int_eq(cg_py_lt_line(CG_PY_LT_LOCATIONS, 400, loc, sizeof(loc), 6), 100);
	ck_assert_int_eq(cg_py_lt_line(CG_PY_LT_LOCATIONS, 400, loc, sizeof(loc), 8), 100);
	ck_assert_int_eq(cg_py_lt_line(CG_PY_LT_LOCATIONS, 400, loc, sizeof(loc), 10), -1);
	/* a line below 0, which only a hostile table reaches, is none */
	static const uint8_t neg[] = {0x02, 0x81};
	ck_assert_int_eq(cg_py_lt_line(CG_PY_LT_LINETABLE, 1, neg, 2, 0), -1);
}
END_TEST

START_TEST(names_round_trip)
{
	for (int f = CG_PY_LT_LNOTAB; f <= CG_PY_LT_LOCATIONS; f++) {
		const char *name = cg_py_lt_name((enum cg_py_lt)f);
		ck_assert_ptr_nonnull(name);
		ck_assert_int_eq(cg_py_lt_of(name, strlen(name)), f);
	}
	ck_assert_str_eq(cg_py_lt_name(CG_PY_LT_LOCATIONS), "locations");
	ck_assert_ptr_null(cg_py_lt_name((enum cg_py_lt)0));
	ck_assert_ptr_null(cg_py_lt_name((enum cg_py_lt)4));
	ck_assert_int_eq(cg_py_lt_of("lnotabs", 6), CG_PY_LT_LNOTAB);
	ck_assert_int_eq(cg_py_lt_of("lnota", 5), 0);
	ck_assert_int_eq(cg_py_lt_of("", 0), 0);
}
END_TEST

static int py_lines_setup(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	vec_dir = getenv("PY_LINES_DIR");
	if (!vec_dir) {
		fprintf(stderr, "PY_LINES_DIR is not set\n");
		return 1;
	}
	return TEST_GO_ON;
}

TEST_SUITE(py_lines_suite, "py-lines")
{
	test_loop(s, "vectors:every-offset", 60, vectors_every_offset, N_VEC_FILES);
	test_case(s, "vectors:some-present", 10, vectors_some_present);
	int n = (int)(sizeof(hostile) / sizeof(hostile[0]));
	test_loop(s, "check:hostile-refused", 10, hostile_refused, n);
	test_loop(s, "check:hostile-prefixes", 10, hostile_prefixes, n);
	test_case(s, "check:accepts", 10, check_accepts_edges);
	test_case(s, "line:past-the-table", 10, line_past_the_table);
	test_case(s, "line:hand-made", 10, line_hand_made);
	test_case(s, "names:round-trip", 10, names_round_trip);
}

TEST_MAIN_SETUP(py_lines_setup, py_lines_suite);

/* SPDX-License-Identifier: MIT */
/*
 * CPython's three line tables, decoded as Objects/codeobject.c of each
 * version does (PyCode_Addr2Line, the function f_lineno calls), and checked
 * so that the decoders, which trust a checked table, never read past one.
 */
#include "py_lines.h"

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

static const char *const lt_names[] = {
    [CG_PY_LT_LNOTAB] = "lnotab",
    [CG_PY_LT_LINETABLE] = "linetable",
    [CG_PY_LT_LOCATIONS] = "locations",
};

#define LT_COUNT (sizeof(lt_names) / sizeof(lt_names[0]))

/* The 3.11+ entry kinds (bits 3-6 of an entry's first byte); 0-9 are short forms. */
enum {
	LOC_ONE_LINE0 = 10, /* 10-12: one line, delta code - 10, two column bytes */
	LOC_NO_COLUMNS = 13,
	LOC_LONG = 14,
	LOC_NONE = 15,
};

/* What reading a varint found. */
enum { VARINT_OK, VARINT_CUT, VARINT_WIDE };

/* CPython's offsets and lines are ints: a longer table has no meaning to it. */
#define LT_MAX_BYTES ((size_t)INT32_MAX)

const char *cg_py_lt_name(enum cg_py_lt fmt)
{
	return (unsigned)fmt < LT_COUNT ? lt_names[fmt] : NULL;
}

enum cg_py_lt cg_py_lt_of(const char *name, size_t n)
{
	for (unsigned f = 0; f < LT_COUNT; f++)
		if (lt_names[f] && strlen(lt_names[f]) == n && memcmp(lt_names[f], name, n) == 0)
			return (enum cg_py_lt)f;
	return (enum cg_py_lt)0;
}

/* A byte as a signed char, without the implementation-defined conversion. */
static int sbyte(uint8_t b)
{
	return (int)b - ((b & 0x80) << 1);
}

static int lt_result(int64_t line)
{
	return line < 0 || line > INT_MAX ? -1 : (int)line;
}

/*
 * A 3.11+ varint at *at: 6-bit chunks, low first, 0x40 saying another
 * follows. A byte with the high bit starts the next entry, so it ends the
 * table as far as a varint is concerned. CPython writes unsigned ints: a
 * wider value is no table of its.
 */
static int lt_varint(const uint8_t *t, size_t n, size_t *at, uint32_t *v)
{
	uint64_t val = 0;
	for (unsigned shift = 0;; shift += 6) {
		if (*at >= n || (t[*at] & 0x80))
			return VARINT_CUT;
		uint8_t b = t[(*at)++];
		if (shift > 30)
			return VARINT_WIDE;
		val |= (uint64_t)(b & 63) << shift;
		if (val > UINT32_MAX)
			return VARINT_WIDE;
		if (!(b & 64))
			break;
	}
	*v = (uint32_t)val;
	return VARINT_OK;
}

/* The low bit is the sign, as CPython's scan_signed_varint reads it. */
static int64_t lt_signed(uint32_t u)
{
	return (u & 1) ? -(int64_t)(u >> 1) : (int64_t)(u >> 1);
}

/* The bytes after a 3.11+ entry's first byte: varints, or column bytes below 0x80. */
static int check_location(unsigned code, const uint8_t *t, size_t n, size_t *at)
{
	uint32_t v;
	int r = VARINT_OK;
	if (code == LOC_LONG) {
		/* line delta, end line delta, column + 1, end column + 1 */
		for (int k = 0; k < 4 && r == VARINT_OK; k++)
			r = lt_varint(t, n, at, &v);
	} else if (code == LOC_NO_COLUMNS) {
		r = lt_varint(t, n, at, &v);
	} else if (code < LOC_NO_COLUMNS) {
		/* a short form packs its columns in one byte, a one-line form has two */
		for (int k = code >= LOC_ONE_LINE0 ? 2 : 1; k > 0 && r == VARINT_OK; k--, ++*at)
			if (*at >= n || (t[*at] & 0x80))
				r = VARINT_CUT;
	}
	return r;
}

static int check_locations(const uint8_t *t, size_t n, const char **why)
{
	size_t at = 0;
	while (at < n) {
		/* CPython finds each entry by its high bit: anything else is lost in the walk. */
		if (!(t[at] & 0x80)) {
			*why = at ? "stray byte after a location entry"
			          : "location table starts inside an entry";
			return -EBADMSG;
		}
		unsigned code = (t[at++] >> 3) & 15;
		int r = check_location(code, t, n, &at);
		if (r != VARINT_OK) {
			*why = r == VARINT_CUT ? "location entry cut short"
			                       : "location varint over 32 bits";
			return -EBADMSG;
		}
	}
	return 0;
}

/*
 * 3.10 skips zero-length entries looking for the next range without
 * checking for the end (PyLineTable_NextAddressRange): zero-length entries
 * last read past the table. Its compiler writes them only before a range.
 */
static int check_linetable(const uint8_t *t, size_t n, const char **why)
{
	if (n % 2) {
		*why = "linetable of odd length";
		return -EBADMSG;
	}
	if (n && t[n - 2] == 0) {
		*why = "linetable ends in a zero-length entry";
		return -EBADMSG;
	}
	return 0;
}

int cg_py_lt_check(enum cg_py_lt fmt, const uint8_t *t, size_t n, const char **why)
{
	const char *ignored;
	if (!why)
		why = &ignored;
	if (n > LT_MAX_BYTES) {
		*why = "line table over 2 GiB";
		return -EBADMSG;
	}
	switch (fmt) {
	case CG_PY_LT_LNOTAB:
		if (n % 2) {
			*why = "lnotab of odd length";
			return -EBADMSG;
		}
		return 0;
	case CG_PY_LT_LINETABLE:
		return check_linetable(t, n, why);
	case CG_PY_LT_LOCATIONS:
		return check_locations(t, n, why);
	}
	*why = "unknown line table format";
	return -EBADMSG;
}

/* 3.8, 3.9: an entry's line increment applies from the end of its bytes on. */
static int line_lnotab(int first, const uint8_t *t, size_t n, uint32_t off)
{
	int64_t line = first;
	uint64_t addr = 0;
	for (size_t i = 0; i + 1 < n; i += 2) {
		addr += t[i];
		if (addr > off)
			break;
		line += sbyte(t[i + 1]);
	}
	return lt_result(line);
}

/* 3.10: an entry's line delta applies to its own bytes; -128 gives them none. */
static int line_linetable(int first, const uint8_t *t, size_t n, uint32_t off)
{
	int64_t line = first;
	uint64_t end = 0;
	for (size_t i = 0; i + 1 < n; i += 2) {
		int d = sbyte(t[i + 1]);
		end += t[i];
		if (d != -128)
			line += d;
		if (off < end)
			return d == -128 ? -1 : lt_result(line);
	}
	return -1;
}

/* 3.11+: as 3.10, in entries of 1 to 8 code units; kind 15 has no line. */
static int line_locations(int first, const uint8_t *t, size_t n, uint32_t off)
{
	int64_t line = first;
	uint64_t end = 0;
	size_t at = 0;
	while (at < n) {
		uint8_t b = t[at];
		unsigned code = (b >> 3) & 15;
		if (code == LOC_NO_COLUMNS || code == LOC_LONG) {
			size_t p = at + 1;
			uint32_t u = 0;
			if (lt_varint(t, n, &p, &u) == VARINT_OK)
				line += lt_signed(u);
		} else if (code >= LOC_ONE_LINE0 && code < LOC_NO_COLUMNS) {
			line += code - LOC_ONE_LINE0;
		}
		end += ((b & 7) + 1) * 2;
		if (off < end)
			return code == LOC_NONE ? -1 : lt_result(line);
		do
			at++;
		while (at < n && !(t[at] & 0x80));
	}
	return -1;
}

int cg_py_lt_line(enum cg_py_lt fmt, int first, const uint8_t *t, size_t n, uint32_t off)
{
	switch (fmt) {
	case CG_PY_LT_LNOTAB:
		return line_lnotab(first, t, n, off);
	case CG_PY_LT_LINETABLE:
		return line_linetable(first, t, n, off);
	case CG_PY_LT_LOCATIONS:
		return line_locations(first, t, n, off);
	}
	return -1;
}

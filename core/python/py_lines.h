/* SPDX-License-Identifier: MIT */
/*
 * The line of a Python instruction from its code object's line table, for
 * CPython 3.8 to 3.13, as f_lineno gives it. A frame's table and offset are
 * read out of the profiled process, so a table is checked once before any
 * line is looked up in it: a hostile table gets a reason, never a read past
 * its end. No allocation, no state: safe inside malloc.
 */
#ifndef CG_PY_LINES_H
#define CG_PY_LINES_H

#include <stddef.h>
#include <stdint.h>

/* The three line-table formats of CPython 3.8 to 3.13. */
enum cg_py_lt {
	CG_PY_LT_LNOTAB = 1,    /* 3.8, 3.9: co_lnotab, (byte increment, signed line increment) pairs */
	CG_PY_LT_LINETABLE = 2, /* 3.10: co_linetable (PEP 626), (byte delta, line delta, -128 none) pairs */
	CG_PY_LT_LOCATIONS = 3, /* 3.11+: co_linetable, the location table of varint entries, in code units */
};

/* The format's name in a trace ("lnotab", "linetable", "locations"), NULL for none. */
const char *cg_py_lt_name(enum cg_py_lt fmt);

/* The format a name stands for, 0 when none. */
enum cg_py_lt cg_py_lt_of(const char *name, size_t n);

/*
 * 0 when table (n bytes) is a well-formed table of fmt, walked to its end;
 * else -EBADMSG and *why a short static reason. n 0 is well-formed; a
 * table over 2 GiB is not (CPython's offsets are ints).
 */
int cg_py_lt_check(enum cg_py_lt fmt, const uint8_t *t, size_t n, const char **why);

/*
 * The line of the instruction at byte offset off (code units x 2) of a code
 * object whose co_firstlineno is first; -1 when the table gives that
 * instruction no line (or off lies past it). The table is one cg_py_lt_check
 * passed. An lnotab has no end: past its last entry every offset has the
 * last line, as in CPython 3.8 and 3.9. A line outside 0..INT_MAX, which
 * only a hostile table reaches, is -1 too.
 */
int cg_py_lt_line(enum cg_py_lt fmt, int first, const uint8_t *t, size_t n, uint32_t off);

#endif

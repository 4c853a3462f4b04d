#!/bin/sh
# SPDX-License-Identifier: MIT
#
# py-layouts.sh [INCLUDE_DIR...] > preload/py_layout.h
#
# Prints preload/py_layout.h: the byte offsets of the CPython 3.8-3.13
# fields the probe reads to walk a thread's Python frames without the GIL.
# The numbers are never typed by hand: for each version's headers a small
# C program is compiled against them and prints its row with
# offsetof/sizeof, so a wrong row can only come from wrong headers.
#
# INCLUDE_DIR is a directory holding Python.h (e.g. .../include/python3.12);
# without arguments every pyenv version and the system's include
# directories are tried.  A minor version found twice (pyenv's 3.11 and the
# distribution's) must give the same row, else the script fails: the probe
# has one row per minor version and relies on the layout being stable
# across patch releases and builders.  A minor version not found gets no
# row; a warning on stderr says so.  Exit status: 0, or 1 on any failure.
set -eu

cc=${CC:-cc}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
trap 'exit 1' HUP INT TERM

# The program's columns are listed once, with their descriptions, in COLUMNS;
# each version's section assigns the fields it has, the rest stay -1.  Run
# with "doc" it prints the column descriptions for the header's comment,
# with "names" the row's column names, without arguments its version's row.
# It exits 3 for a build whose objects are laid out otherwise (free-threaded
# or with Py_TRACE_REFS): the table is for the default build only.
cat >"$tmp/layout.c" <<'EOF'
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#if PY_MINOR_VERSION >= 11
/* _PyInterpreterFrame and the frame owners are internal from 3.11 on. */
#define Py_BUILD_CORE 1
#include <internal/pycore_frame.h>
#else
#include <frameobject.h>
#endif
#include <stddef.h>
#include <stdio.h>
#include <string.h>

/* group: a new line of the row begins at each group's first column. */
#define COLUMNS(C) \
	C(1, minor, "CPython 3.minor (all)") \
	C(1, ts_frame, "PyThreadState.frame: the innermost PyFrameObject * (3.8-3.10)") \
	C(1, ts_cframe, "PyThreadState.cframe: the current _PyCFrame * (3.11, 3.12)") \
	C(1, cframe_current_frame, "_PyCFrame.current_frame: innermost frame (3.11, 3.12)") \
	C(1, ts_current_frame, "PyThreadState.current_frame: the innermost frame (3.13)") \
	C(2, frame_back, "PyFrameObject.f_back: the caller's frame, NULL at the end (3.8-3.10)") \
	C(2, frame_code, "PyFrameObject.f_code: PyCodeObject * (3.8-3.10)") \
	C(2, frame_lasti, "PyFrameObject.f_lasti: int in lasti_units, -1 before the first (3.8-3.10)") \
	C(2, lasti_units, "bytes per f_lasti unit: 1 (3.8, 3.9), 2 (3.10: a code-unit index)") \
	C(3, iframe_previous, "_PyInterpreterFrame.previous: the older frame (3.11-3.13)") \
	C(3, iframe_code, "_PyInterpreterFrame.f_code (3.11, 3.12), .f_executable (3.13)") \
	C(3, iframe_instr, "_PyInterpreterFrame.prev_instr (3.11, 3.12), .instr_ptr (3.13)") \
	C(3, iframe_is_entry, "_PyInterpreterFrame.is_entry: bool, first frame of its eval call (3.11)") \
	C(3, iframe_owner, "_PyInterpreterFrame.owner: char, an enum _frameowner (3.11-3.13)") \
	C(4, owned_by_thread, "FRAME_OWNED_BY_THREAD (3.11-3.13)") \
	C(4, owned_by_generator, "FRAME_OWNED_BY_GENERATOR (3.11-3.13)") \
	C(4, owned_by_frame_object, "FRAME_OWNED_BY_FRAME_OBJECT (3.11-3.13)") \
	C(4, owned_by_cstack, "FRAME_OWNED_BY_CSTACK: a shim on the C stack, no code (3.12, 3.13)") \
	C(5, code_firsttraceable, "PyCodeObject._co_firsttraceable: int, code units; see above (3.11-3.13)") \
	C(5, code_firstlineno, "PyCodeObject.co_firstlineno: int (all)") \
	C(5, code_name, "PyCodeObject.co_name: str (all)") \
	C(5, code_qualname, "PyCodeObject.co_qualname: str (3.11-3.13)") \
	C(5, code_filename, "PyCodeObject.co_filename: str (all)") \
	C(6, code_lnotab, "PyCodeObject.co_lnotab: bytes, the line table (3.8, 3.9)") \
	C(6, code_linetable, "PyCodeObject.co_linetable: bytes, the line table (3.10-3.13)") \
	C(6, code_adaptive, "PyCodeObject.co_code_adaptive: where _PyCode_CODE(co) is (3.11-3.13)") \
	C(6, code_basicsize, "PyCode_Type.tp_basicsize as the headers make it (all)") \
	C(7, ascii_size, "sizeof(PyASCIIObject): a compact ASCII str's characters follow (all)") \
	C(7, compact_size, "sizeof(PyCompactUnicodeObject): other compact strs' follow (all)") \
	C(7, ascii_state, "PyASCIIObject.state: 32-bit word of bit fields (all)") \
	C(7, ascii_length, "PyASCIIObject.length: Py_ssize_t, in code points (all)") \
	C(8, state_kind_shift, "lowest bit of state.kind: 3 bits, 1, 2 or 4 bytes a code point (all)") \
	C(8, state_compact_bit, "bit of state.compact (all)") \
	C(8, state_ascii_bit, "bit of state.ascii (all)") \
	C(9, bytes_sval, "PyBytesObject.ob_sval: the bytes (all)") \
	C(9, bytes_size, "PyBytesObject.ob_size: Py_ssize_t, the length (all)") \
	C(9, ob_type, "PyObject.ob_type (all)")

/* The lowest bit that set() changes in the state word, and how many it changes. */
static int state_bit(void (*set)(PyASCIIObject *), int *width)
{
	PyASCIIObject a;
	unsigned int word;
	int bit, n = 0;

	memset(&a, 0, sizeof(a));
	set(&a);
	memcpy(&word, (char *)&a + offsetof(PyASCIIObject, state), sizeof(word));
	for (bit = 31; bit >= 0; bit--)
		n += (word >> bit) & 1;
	for (bit = 0; bit < 32 && !((word >> bit) & 1); bit++)
		;
	*width = n;
	return bit;
}

static void set_kind(PyASCIIObject *a) { a->state.kind = 7; }
static void set_compact(PyASCIIObject *a) { a->state.compact = 1; }
static void set_ascii(PyASCIIObject *a) { a->state.ascii = 1; }

int main(int argc, char **argv)
{
#define DECLARE(group, name, doc) long name = -1;
	COLUMNS(DECLARE)
	int width, group = 0, first = 1, names;

#if defined(Py_GIL_DISABLED) || defined(Py_TRACE_REFS)
	return 3;
#endif

	minor = PY_MINOR_VERSION;
#if PY_MINOR_VERSION <= 10
	ts_frame = offsetof(PyThreadState, frame);
	frame_back = offsetof(PyFrameObject, f_back);
	frame_code = offsetof(PyFrameObject, f_code);
	frame_lasti = offsetof(PyFrameObject, f_lasti);
	lasti_units = PY_MINOR_VERSION == 10 ? (long)sizeof(_Py_CODEUNIT) : 1;
	code_basicsize = sizeof(PyCodeObject);
#else
	/* Variable-sized from 3.11: the instructions follow the fixed part. */
	code_basicsize = offsetof(PyCodeObject, co_code_adaptive);
	iframe_previous = offsetof(_PyInterpreterFrame, previous);
	iframe_owner = offsetof(_PyInterpreterFrame, owner);
	owned_by_thread = FRAME_OWNED_BY_THREAD;
	owned_by_generator = FRAME_OWNED_BY_GENERATOR;
	owned_by_frame_object = FRAME_OWNED_BY_FRAME_OBJECT;
	code_firsttraceable = offsetof(PyCodeObject, _co_firsttraceable);
	code_qualname = offsetof(PyCodeObject, co_qualname);
	code_adaptive = offsetof(PyCodeObject, co_code_adaptive);
#endif
#if PY_MINOR_VERSION == 11 || PY_MINOR_VERSION == 12
	ts_cframe = offsetof(PyThreadState, cframe);
	cframe_current_frame = offsetof(_PyCFrame, current_frame);
	iframe_code = offsetof(_PyInterpreterFrame, f_code);
	iframe_instr = offsetof(_PyInterpreterFrame, prev_instr);
#endif
#if PY_MINOR_VERSION == 11
	iframe_is_entry = offsetof(_PyInterpreterFrame, is_entry);
#endif
#if PY_MINOR_VERSION >= 12
	owned_by_cstack = FRAME_OWNED_BY_CSTACK;
#endif
#if PY_MINOR_VERSION >= 13
	ts_current_frame = offsetof(PyThreadState, current_frame);
	iframe_code = offsetof(_PyInterpreterFrame, f_executable);
	iframe_instr = offsetof(_PyInterpreterFrame, instr_ptr);
#endif
#if PY_MINOR_VERSION <= 9
	code_lnotab = offsetof(PyCodeObject, co_lnotab);
#else
	code_linetable = offsetof(PyCodeObject, co_linetable);
#endif
	code_firstlineno = offsetof(PyCodeObject, co_firstlineno);
	code_name = offsetof(PyCodeObject, co_name);
	code_filename = offsetof(PyCodeObject, co_filename);
	ascii_size = sizeof(PyASCIIObject);
	compact_size = sizeof(PyCompactUnicodeObject);
	ascii_state = offsetof(PyASCIIObject, state);
	ascii_length = offsetof(PyASCIIObject, length);
	/* Bit-field order is the compiler's: find the bits by setting them. */
	state_kind_shift = state_bit(set_kind, &width);
	if (width != 3)
		return 1;
	state_compact_bit = state_bit(set_compact, &width);
	if (width != 1)
		return 1;
	state_ascii_bit = state_bit(set_ascii, &width);
	if (width != 1)
		return 1;
	bytes_sval = offsetof(PyBytesObject, ob_sval);
	bytes_size = offsetof(PyBytesObject, ob_base.ob_size);
	ob_type = offsetof(PyObject, ob_type);

	if (argc > 1 && strcmp(argv[1], "doc") == 0) {
#define DOC(group, name, doc) printf(" *   %-21s %s\n", #name, doc);
		COLUMNS(DOC)
		return 0;
	}
	/* The row, or with "names" the column names, on one line per group. */
	names = argc > 1 && strcmp(argv[1], "names") == 0;
	printf(names ? " * X(" : "\tX(");
#define ROW(g, name, doc) \
	printf("%s", first ? "" : g == group ? ", " : names ? ",\n *   " : ", \\\n\t  "); \
	if (names) \
		printf("%s", #name); \
	else \
		printf("%ld", name); \
	group = g, first = 0;
	COLUMNS(ROW)
	printf(")\n");
	return 0;
}
EOF

# Include directories to try, each holding Python.h.
if [ "$#" -eq 0 ]; then
	set -- "${PYENV_ROOT:-$HOME/.pyenv}"/versions/*/include/python3.* \
		/usr/include/python3.* /usr/local/include/python3.*
fi

# Build and run the program for each directory; rows/3.MINOR holds the
# first row of a minor version, sources/3.MINOR the versions it came from.
mkdir "$tmp/rows" "$tmp/sources"
n=0
for dir in "$@"; do
	# Globs that match nothing stay literal.
	if [ ! -f "$dir/Python.h" ] || [ ! -f "$dir/patchlevel.h" ]; then
		continue
	fi
	minor=$(sed -n 's/^#define PY_MINOR_VERSION[[:space:]]*\([0-9]*\).*/\1/p' "$dir/patchlevel.h")
	version=$(sed -n 's/^#define PY_VERSION[[:space:]]*"\([^"]*\)".*/\1/p' "$dir/patchlevel.h")
	case $minor in
	8 | 9 | 10 | 11 | 12 | 13) ;;
	*) continue ;;
	esac
	n=$((n + 1))
	if ! "$cc" -std=gnu11 -w -I"$dir" -o "$tmp/layout$n" "$tmp/layout.c" 2>"$tmp/cc.err"; then
		echo "$0: cannot compile against $dir:" >&2
		cat "$tmp/cc.err" >&2
		exit 1
	fi
	status=0
	"$tmp/layout$n" >"$tmp/row" || status=$?
	if [ "$status" -eq 3 ]; then
		echo "$0: $dir: not a default build's layout; left out" >&2
		continue
	elif [ "$status" -ne 0 ]; then
		echo "$0: the program built against $dir failed" >&2
		exit 1
	fi
	if [ -f "$tmp/rows/$minor" ]; then
		if ! cmp -s "$tmp/row" "$tmp/rows/$minor"; then
			echo "$0: $version ($dir) differs from $(cat "$tmp/sources/$minor"):" >&2
			diff "$tmp/rows/$minor" "$tmp/row" >&2 || true
			exit 1
		fi
		printf ', %s' "$version" >>"$tmp/sources/$minor"
	else
		mv "$tmp/row" "$tmp/rows/$minor"
		printf '%s' "$version" >"$tmp/sources/$minor"
		doc=$tmp/layout$n
	fi
done
rows=
for minor in 8 9 10 11 12 13; do
	if [ -f "$tmp/rows/$minor" ]; then
		rows="$rows $minor"
	fi
done
if [ -z "$rows" ]; then
	echo "$0: no CPython 3.8-3.13 headers found" >&2
	exit 1
fi
for minor in 8 9 10 11 12 13; do
	if [ ! -f "$tmp/rows/$minor" ]; then
		echo "$0: warning: no headers of 3.$minor found; it gets no row" >&2
	fi
done

cat <<EOF
/* SPDX-License-Identifier: MIT */
/*
 * Where CPython keeps what the probe reads, inside malloc and without the
 * GIL, to walk the allocating thread's Python frames (x86-64 Linux, release
 * builds with the GIL; docs/python-layouts.md says how the walk goes).
 *
 * Generated by scripts/py-layouts.sh, which compiles a program against each
 * version's headers and prints offsetof/sizeof of their fields; do not edit,
 * regenerate: scripts/py-layouts.sh > preload/py_layout.h
 * Rows from the headers of:
EOF
for minor in $rows; do
	echo " *   3.$minor: $(cat "$tmp/sources/$minor")"
done
cat <<EOF
 * The rows are only what the headers say: the probe checks its reads at
 * run time against the interpreter's type objects (each object's ob_type
 * against PyCode_Type, PyUnicode_Type, PyBytes_Type; PyCode_Type's
 * tp_basicsize against code_basicsize) before trusting them.
 *
 * Frames to skip, 3.11 on: each version's _PyFrame_IsIncomplete
 * (pycore_frame.h), with _Py_CODEUNIT pointers (firsttraceable counts
 * 2-byte units):
 *   3.11, 3.12: owner != FRAME_OWNED_BY_GENERATOR &&
 *               prev_instr < _PyCode_CODE(f_code) + f_code->_co_firsttraceable
 *   3.13:       owner == FRAME_OWNED_BY_CSTACK ||
 *               (owner != FRAME_OWNED_BY_GENERATOR &&
 *                instr_ptr < _PyCode_CODE(code) + code->_co_firsttraceable)
 * 3.12's C-stack shims (FRAME_OWNED_BY_CSTACK, code "<interpreter
 * trampoline>") meet its rule too; testing the owner first skips them
 * alike and reads no code object.
 *
 * Columns, in order; byte offsets unless said otherwise, -1 where the
 * version lacks the field:
EOF
"$doc" doc
cat <<EOF
 */
#ifndef CG_PY_LAYOUT_H
#define CG_PY_LAYOUT_H

/*
 * A row, by column:
$("$doc" names)
 */
#define CG_PY_LAYOUTS(X) \\
EOF
# Every row but the last continues the macro.
for minor in $rows; do
	cat "$tmp/rows/$minor"
done | sed '$!s/)$/) \\/'
cat <<EOF

#endif
EOF

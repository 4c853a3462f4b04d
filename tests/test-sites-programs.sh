#!/bin/sh
# SPDX-License-Identifier: MIT
# cgtrace top, leaks and the folded export on real programs run under the
# probe: a dlopen'ed library that allocates in its constructor and after,
# C++ new (the site is the caller of new, not operator new), -O2 C++
# programs whose allocations come out of std::vector, std::string and a
# template of their own (the site is the first frame in the user's code,
# not the C++ library's), a second thread, a device allocation through the fake CUDA driver, and the Python
# interpreter, whose stacks must name its C functions. Compact traces (the
# default); tests/test-sites-probe.sh covers both encodings on one chain.
#   test-sites-programs.sh CGTRACE PROBE TESTS_BUILD_DIR CUDA_FIXTURES
set -u
# shellcheck source=tests/lib/sh-check.sh
. "$(dirname "$0")/lib/sh-check.sh"
probe_test 4 "test-sites-programs.sh CGTRACE PROBE TESTS_BUILD_DIR CUDA_FIXTURES" "$@"
bin=$(abs "$3")
fixtures=$(abs "$4")
unset CGPROBE_MIN_BYTES CGPROBE_ONLY CGPROBE_STACK_DEPTH CGPROBE_FORMAT CGTRACE_DEBUG_DIR

# record NAME PROG ARGS...: PROG under the probe into $tmp/NAME.cgt.
record() {
	name=$1
	shift
	env LD_PRELOAD="$probe" CGPROBE_OUTPUT="$tmp/$name.cgt" "$@" >/dev/null 2>"$tmp/err" &&
		[ -s "$tmp/$name.cgt" ]
}
# has WHAT TEXT CMD...: the command's output holds TEXT.
has() {
	what=$1 text=$2
	shift 2
	"$@" >"$tmp/out" 2>"$tmp/err"
	grep -qF -- "$text" "$tmp/out" && ok || ko "$what: no '$text' in: $(head -c 600 "$tmp/out")"
}

if record dlopen "$bin/stacks-dlopen" "$bin/libstacks-lib.so"; then
	t=$tmp/dlopen.cgt
	has "dlopen: the constructor's allocation is a leak" "lib_ctor (dlopen-lib.c:15)" "$cgtrace" leaks "$t"
	has "dlopen: the library's site" "lib_alloc (dlopen-lib.c:21)" "$cgtrace" top --by total "$t"
	# (the loader's own frames name functions only where libc's debug files are installed)
	has "dlopen: folded, the constructor's leak" "lib_ctor 7171" \
		"$cgtrace" export --format folded --by leaked "$t"
else
	ko "stacks-dlopen under the probe: $(cat "$tmp/err")"
fi

if [ -x "$bin/stacks-cxxnew" ]; then
	if record cxx "$bin/stacks-cxxnew"; then
		has "C++ new: the caller of new is the site" "cxx_site(unsigned long) (cxxnew.cc:7)" \
			"$cgtrace" top --by total -n 1 "$tmp/cxx.cgt"
		"$cgtrace" top --by total "$tmp/cxx.cgt" >"$tmp/out" 2>&1
		! grep -q 'operator new' "$tmp/out" && ok || ko "C++ new: operator new shown as a site"
	else
		ko "stacks-cxxnew under the probe: $(cat "$tmp/err")"
	fi
else
	skip "C++ new (no C++ compiler)"
fi

# The -O2 C++ programs of tests/symbols/: each `site: NAME` comment marks a site's line.
src=$(dirname "$0")/symbols
line_of() { grep -n "site: $2\$" "$src/cxx-$1.cc" "$src/cxx-$1.h" 2>/dev/null | head -n 1 | cut -d: -f2; }
# no_runtime_site WHAT: no site row of $tmp/out in the C++ library or the allocator.
no_runtime_site() {
	! grep -E '^ +[0-9]+ ' "$tmp/out" | grep -qE ' (std::|__gnu_cxx::|void std::|operator new|.*libstdc\+\+)' &&
		ok || ko "$1: a site in the C++ library: $(cat "$tmp/out")"
}
if [ -x "$bin/symbols-cxx-widgets" ]; then
	if record widgets "$bin/symbols-cxx-widgets"; then
		t=$tmp/widgets.cgt
		has "vector<Widget>: a string member's site" "Widget::Widget() (cxx-widgets.cc:$(line_of widgets widget))" \
			"$cgtrace" top --by total "$t"
		has "vector<Widget>: the vector's growth" "main (cxx-widgets.cc:$(line_of widgets growth))" \
			"$cgtrace" top --by total "$t"
		has "std::string appends: main, not _M_mutate" "main (cxx-widgets.cc:$(line_of widgets append))" \
			"$cgtrace" top --by total "$t"
		no_runtime_site "vector<Widget>"
		has "vector<Widget>: --full still shows the library" "std::vector<Widget, std::allocator<Widget> >::" \
			"$cgtrace" top --by total --full "$t"
		has "vector<Widget>: memory names the site" "Widget::Widget() (cxx-widgets.cc:$(line_of widgets widget))" \
			"$cgtrace" memory --top 0 "$t"
		has "vector<Widget>: folded ends at the site" ";Widget::Widget() " \
			"$cgtrace" export --format folded --by total "$t"
		# Two sides read on two threads, each demangling from its start:
		# the same names on both, so the trace against itself changes nothing.
		for i in 1 2 3; do
			has "vector<Widget>: diff of a trace with itself, read side by side ($i)" \
				"(0 of " "$cgtrace" diff "$t" "$t"
		done
	else
		ko "symbols-cxx-widgets under the probe: $(cat "$tmp/err")"
	fi
	if record chain "$bin/symbols-cxx-chain"; then
		has "own inline chain: the innermost of the user's frames" \
			"shapes::grab(unsigned long) (cxx-chain.h:$(line_of chain grab))" \
			"$cgtrace" top --by total "$tmp/chain.cgt"
	else
		ko "symbols-cxx-chain under the probe: $(cat "$tmp/err")"
	fi
	if record template "$bin/symbols-cxx-template"; then
		t=$tmp/template.cgt
		make="Point* pool::Arena<Point>::make<int&, int>(int&, int&&)"
		has "template: the objects it makes, leaked" "$make (cxx-template.cc:$(line_of template object))" \
			"$cgtrace" top --by leaked "$t"
		has "template: its vector's growth, leaked" "$make (cxx-template.cc:$(line_of template keep))" \
			"$cgtrace" top --by leaked "$t"
		has "template: the arena, leaked" "main (cxx-template.cc:$(line_of template arena))" \
			"$cgtrace" top --by leaked "$t"
		# leaks lists each stack from its site: the line after the stack's own.
		"$cgtrace" leaks "$t" >"$tmp/out" 2>"$tmp/err"
		grep -A1 ' (stack [0-9]*):$' "$tmp/out" |
			grep -qF "    $make (cxx-template.cc:$(line_of template keep)) [inlined]" && ok ||
			ko "template: leaks, from the site outwards: $(cat "$tmp/out")"
		"$cgtrace" top --by total "$t" >"$tmp/out" 2>"$tmp/err"
		no_runtime_site "template"
	else
		ko "symbols-cxx-template under the probe: $(cat "$tmp/err")"
	fi
else
	skip "-O2 C++ programs (no C++ compiler)"
fi

if record threads "$bin/stacks-threads"; then
	has "threads: the thread's site" "t_site (threads.c:11)" "$cgtrace" top --by total "$tmp/threads.cgt"
	has "threads: main's site" "m_site (threads.c:18)" "$cgtrace" top --by total "$tmp/threads.cgt"
else
	ko "stacks-threads under the probe: $(cat "$tmp/err")"
fi

if LD_LIBRARY_PATH="$fixtures/lib" record cuda "$fixtures/drv-linked"; then
	t=$tmp/cuda.cgt
	has "device: the site of cuMemAlloc_v2" "alloc (drv-linked.c:" "$cgtrace" top --device cuda:0 --by total "$t"
	has "device: folded" ";main;alloc " "$cgtrace" export --format folded --by total --device cuda:0 "$t"
else
	ko "drv-linked under the probe: $(cat "$tmp/err")"
fi

# The interpreter: 40 bytearrays of 300 kB, the most bytes it allocates, made through
# CPython's C functions; their stack names them (exported symbols resolve
# from .dynsym without debug files).
py=/usr/bin/python3
[ -x "$py" ] || py=$(command -v python3 || true)
if [ -n "$py" ] && record python "$py" -c 'keep = [bytearray(300000 + i) for i in range(40)]'; then
	t=$tmp/python.cgt
	"$cgtrace" top --by total --full -n 1 --bytes "$t" >"$tmp/out" 2>"$tmp/err"
	grep -q 'PyByteArray' "$tmp/out" && grep -q 'PyEval_EvalCode' "$tmp/out" && ok ||
		ko "python: the largest stack names no CPython function: $(head -c 900 "$tmp/out")"
	"$cgtrace" top --by total -n 3 "$t" >"$tmp/out" 2>"$tmp/err"
	! grep -qE ' (PyMem_|PyObject_Malloc|malloc )' "$tmp/out" && ok ||
		ko "python: an allocator function shown as a site: $(cat "$tmp/out")"
elif [ -n "$py" ]; then
	ko "python3 under the probe: $(cat "$tmp/err")"
else
	skip "python (no python3)"
fi
finish

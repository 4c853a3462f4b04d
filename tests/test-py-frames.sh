#!/bin/sh
# Python frames in stacks (docs/python-frames.md): tests/python/frames.py
# allocates at marked lines (a bytearray in a nested function, numpy, a
# torch tensor, a thread, a ctypes callback from qsort, a leak through
# libc, a global list, small objects, a 2-worker DataLoader, a fork child,
# an exec'd interpreter, a thread made in C that calls back into Python);
# top, leaks, memory --json, the folded and massif exports and the HTML
# report must name exactly those files and lines, in both encodings;
# validate --strict counts the code objects and export --strict drops them.
# Then every other CPython here (pyenv's 3.8 to 3.13) on the pure-Python
# part, small objects under PYTHONMALLOC=malloc, CGPROBE_PYTHON=off, and
# hostile code objects. Exits 77 without /usr/bin/python3.
#   test-py-frames.sh CGTRACE PROBE
set -u
# shellcheck source=tests/lib/sh-check.sh
. "$(dirname "$0")/lib/sh-check.sh"
probe_test 2 "test-py-frames.sh CGTRACE PROBE" "$@"
here=$(cd "$(dirname "$0")" && pwd)/python
script=$here/frames.py
check="$here/sites_check.py"
py=/usr/bin/python3
[ -x "$py" ] || { echo "SKIP: no $py"; exit 77; }
unset CGPROBE_MIN_BYTES CGPROBE_ONLY CGPROBE_OUTPUT CGPROBE_PYTHON CGPROBE_STACK_DEPTH PYTHONPATH
PYTHONDONTWRITEBYTECODE=1
export PYTHONDONTWRITEBYTECODE

# run NAME PYTHON ARGS...: the script under the probe, a trace per process in $tmp/NAME.PID.EXT.
run() {
	name=$1
	shift
	rm -f "$tmp/$name".*
	CGPROBE_OUTPUT="$tmp/$name.%p.${ext:-cgt}" LD_PRELOAD=$probe "$@" >"$tmp/$name.out" 2>"$tmp/err"
}
# main NAME: the trace of the process that ran the script itself (the largest).
main() { ls -S "$tmp/$1".*."${ext:-cgt}" 2>/dev/null | head -n 1; }
# sites WHAT TRACE CMD FIELD MARK...: cgtrace CMD --json names the marks as sites.
sites() {
	what=$1 t=$2 cmd=$3 field=$4
	shift 4
	# shellcheck disable=SC2086 # the command's options, split on purpose
	if "$cgtrace" $cmd --json "$t" >"$tmp/j" 2>"$tmp/err" &&
		"$py" "$check" "$script" "$tmp/j" "$field" "$@" >"$tmp/err" 2>&1; then
		ok
	else
		ko "$what: $cmd"
	fi
}
# folded WHAT TRACE MARK...: the folded export's stacks end in "func (frames.py:LINE)".
folded() {
	what=$1 t=$2
	shift 2
	"$cgtrace" export --format folded "$t" >"$tmp/folded" 2>"$tmp/err" || { ko "$what: folded"; return; }
	for m in "$@"; do
		line=$(grep -n "MARK:$m\b" "$script" | cut -d: -f1)
		grep -q "(frames.py:$line) [0-9]*\$" "$tmp/folded" && ok || ko "$what: folded: no stack ending at frames.py:$line ($m)"
	done
}

torch=
"$py" -c 'import torch' 2>/dev/null && torch=--torch
numpy=
"$py" -c 'import numpy' 2>/dev/null && numpy=numpy=3.9

# A thread made in C that takes the GIL and calls Python (tests/python/cthread.c).
cthread=
if ${CC:-cc} -shared -fPIC -O1 -o "$tmp/cthread.so" "$here/cthread.c" -lpthread 2>"$tmp/err"; then
	cthread="--cthread $tmp/cthread.so"
else
	skip "no C compiler: no thread made in C"
fi
ctmark=
[ -z "$cthread" ] || ctmark=cthread=11.9

# mark_line MARK: the line of frames.py that holds MARK.
mark_line() { grep -n "MARK:$1\b" "$script" | cut -d: -f1; }

for ext in cgt jsonl; do
	what="python3 ($ext)"
	# shellcheck disable=SC2086 # options, split on purpose
	run f "$py" "$script" $torch --fork --exec $cthread || { ko "$what: the script failed"; continue; }
	t=$(main f)
	"$cgtrace" validate "$t" >/dev/null 2>"$tmp/err" && ok || ko "$what: validate"
	# shellcheck disable=SC2086 # numpy: one word or none
	sites "$what" "$t" "top -n 0" peak_bytes bytearray=2.9 thread=5.9 ctypes=6.9 leak=8.9 \
		global=1.9 $numpy $ctmark
	# massif's peak snapshot and the HTML report's sites name the lines too.
	"$cgtrace" export --format massif -o "$tmp/massif" "$t" 2>"$tmp/err" &&
		grep -q "(frames.py:$(mark_line bytearray))" "$tmp/massif" &&
		grep -q "(frames.py:$(mark_line global))" "$tmp/massif" && ok || ko "$what: massif names no frames.py line"
	"$cgtrace" report -o "$tmp/r.html" "$t" 2>"$tmp/err" &&
		grep -q "frames.py:$(mark_line bytearray)" "$tmp/r.html" &&
		grep -q "frames.py:$(mark_line leak)" "$tmp/r.html" && ok || ko "$what: the report names no frames.py line"
	# validate --strict names the code objects' field with its count; export --strict drops it.
	"$cgtrace" validate --strict "$t" >/dev/null 2>"$tmp/strict"
	[ $? = 1 ] && grep -Eq 'cgprobe_py_codes.*\([1-9][0-9]* record' "$tmp/strict" && ok ||
		{ cp "$tmp/strict" "$tmp/err"; ko "$what: validate --strict does not count cgprobe_py_codes"; }
	"$cgtrace" export --strict "$t" >"$tmp/strict.jsonl" 2>"$tmp/err" &&
		! grep -Eq '"cgprobe_(py_codes|stack|stack_frames|stack_parent)":' "$tmp/strict.jsonl" &&
		"$cgtrace" validate --strict "$tmp/strict.jsonl" >/dev/null 2>"$tmp/err" && ok ||
		ko "$what: export --strict keeps Python code objects or stacks"
	sites "$what" "$t" "top -n 0 --by count" count small=1
	# Under cProfile (a profiler of the program's own), and 300 calls deep (cut
	# at the bound, the innermost frames kept, the cut marked).
	sites "$what" "$t" "top -n 0" peak_bytes cprofile=2.4 deep=14.9
	"$cgtrace" top --full -n 0 "$t" 2>"$tmp/err" | grep -q '<outer Python frames cut>' && ok ||
		ko "$what: no stack marks its Python frames cut"
	# compile() in a loop: 40 code objects made and freed, each allocation at
	# its own code's line with its own size (an address reused is another code).
	"$cgtrace" top --json -n 0 --by total "$t" >"$tmp/j" 2>"$tmp/err" &&
		"$py" - "$tmp/j" >"$tmp/err" 2>&1 <<'PY' && ok || ko "$what: compile() in a loop"
import json, sys
rows = json.load(open(sys.argv[1]))["sites"]
got = {r["frames"][0]["line"]: r["total_bytes"] for r in rows
       if r["frames"] and r["frames"][0].get("file") == "generated.py"}
want = {i + 2: (1 << 20) + 4096 * i + 1 for i in range(40)}  # bytearray's NUL
bad = {k: (got.get(k), v) for k, v in want.items() if got.get(k) != v}
print("generated.py lines (got, want):", bad or "all right")
sys.exit(1 if bad else 0)
PY
	sites "$what" "$t" "leaks -n 0" leaked_bytes leak=8.9
	sites "$what" "$t" "memory --top 0" bytes bytearray=2.9 thread=5.9 ctypes=6.9 leak=8.9
	# shellcheck disable=SC2086 # a mark or none
	folded "$what" "$t" bytearray thread ctypes leak global ${cthread:+cthread}
	if [ -n "$torch" ]; then
		sites "$what" "$t" "top -n 0" peak_bytes torch=4.9
		# The torch tensor's native part (the CPU allocator) beneath its line with --full.
		"$cgtrace" top --full -n 0 "$t" >"$tmp/full" 2>"$tmp/err"
		line=$(grep -n "MARK:torch" "$script" | cut -d: -f1)
		awk -v l="make (frames.py:$line)" 'index($0, l) { found = 1 } found && /c10::|at::/ { hit = 1 } END { exit !hit }' "$tmp/full" \
			&& ok || ko "$what: --full: no native frames of torch with the tensor's stack"
		# The DataLoader's workers are forked children with traces of their own.
		w=0
		for c in "$tmp"/f.*."$ext"; do
			"$cgtrace" top --json -n 0 "$c" >"$tmp/j" 2>/dev/null &&
				"$py" "$check" "$script" "$tmp/j" peak_bytes worker=1.9 >/dev/null 2>&1 && w=$((w + 1))
		done
		[ "$w" -ge 1 ] && ok || ko "$what: no DataLoader worker's trace names the worker's line"
	fi
	# The fork child's trace, and the exec'd interpreter's ("<string>", line 1).
	fk=0 ex=0
	for c in "$tmp"/f.*."$ext"; do
		"$cgtrace" top --json -n 0 "$c" >"$tmp/j" 2>/dev/null || continue
		"$py" "$check" "$script" "$tmp/j" peak_bytes fork=10.9 >/dev/null 2>&1 && fk=$((fk + 1))
		"$cgtrace" top -n 3 "$c" 2>/dev/null | grep -q '<module> (<string>:1)' && ex=$((ex + 1))
	done
	[ "$fk" = 1 ] && ok || ko "$what: the fork child's trace does not name its line ($fk)"
	[ "$ex" = 1 ] && ok || ko "$what: the exec'd interpreter's trace has no <string>:1 site ($ex)"
done
ext=cgt

# Every other CPython here: the pure-Python part (no numpy, torch or fork).
n_other=0
for other in /root/.pyenv/versions/3.*/bin/python3.[0-9]*; do
	[ -x "$other" ] || continue
	case $other in *-config) continue ;; esac
	v=$("$other" -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null) || continue
	case $v in 3.8 | 3.9 | 3.10 | 3.11 | 3.12 | 3.13) ;; *) continue ;; esac
	n_other=$((n_other + 1))
	# shellcheck disable=SC2086 # options, split on purpose
	run o "$other" "$script" $cthread || { ko "python $v: the script failed"; continue; }
	t=$(main o)
	# shellcheck disable=SC2086 # a mark or none
	sites "python $v" "$t" "top -n 0" peak_bytes bytearray=2.9 thread=5.9 ctypes=6.9 leak=8.9 global=1.9 $ctmark
	sites "python $v" "$t" "leaks -n 0" leaked_bytes leak=8.9
done
[ "$n_other" -gt 0 ] || skip "no other CPython (pyenv) here"

# Small objects (CPython's own allocator serves those of 512 bytes and less
# from arenas it maps itself): with PYTHONMALLOC=malloc each is a malloc,
# and the 50000 small strings are counted at their line.
PYTHONMALLOC=malloc run s "$py" "$script" || ko "PYTHONMALLOC=malloc: the script failed"
t=$(main s)
sites "PYTHONMALLOC=malloc" "$t" "top -n 0 --by count" count small=50000
sites "PYTHONMALLOC=malloc" "$t" "top -n 0" peak_bytes bytearray=2.9 global=1.9

# Off: stacks as before, no code objects, the tag says so.
CGPROBE_PYTHON=off run off "$py" "$script" || ko "off: the script failed"
t=$(main off)
"$cgtrace" export "$t" >"$tmp/off.jsonl" 2>"$tmp/err"
! grep -q cgprobe_py_codes "$tmp/off.jsonl" && grep -q '"cgprobe_python":"off"' "$tmp/off.jsonl" &&
	grep -q '"cgprobe_stack_frames"' "$tmp/off.jsonl" && ok || ko "off: code objects or no native stacks"
"$cgtrace" top -n 5 "$t" 2>"$tmp/err" | grep -q 'frames.py' && ko "off: a Python site" || ok

# Hostile code objects: one line naming the line of the record, exit 1.
run h "$py" -c 'x = bytearray(1 << 20)'
"$cgtrace" export "$(main h)" >"$tmp/h.jsonl" 2>"$tmp/err" || ko "hostile: export"
hostile() {
	what=$1 expr=$2 msg=$3
	sed "$expr" "$tmp/h.jsonl" >"$tmp/bad.jsonl"
	cmp -s "$tmp/bad.jsonl" "$tmp/h.jsonl" && { ko "hostile $what: the edit changed nothing"; return; }
	# The same records as TEXT items of the compact encoding.
	"$py" "$here/text_compact.py" "$tmp/bad.jsonl" "$tmp/bad.cgt" || { ko "hostile $what: text_compact.py"; return; }
	for enc in "bad.jsonl:[0-9]*" "bad.cgt: record [0-9]*"; do
		f=$tmp/${enc%%:*}
		"$cgtrace" validate "$f" >"$tmp/out" 2>"$tmp/err.v"
		r=$?
		if [ "$r" = 1 ] && [ "$(wc -l <"$tmp/err.v")" = 1 ] && grep -q "$enc: .*$msg" "$tmp/err.v"; then
			ok
		else
			cp "$tmp/err.v" "$tmp/err"
			ko "hostile $what ($f): exit $r"
		fi
	done
}
# The first code object's id changed: the frames naming it name nothing.
hostile "undefined code" '0,/"cgprobe_py_codes":\[{"id":[0-9]*/s//"cgprobe_py_codes":[{"id":2147483000/' "not defined"
hostile "bad line table" '0,/"format":"locations","linetable":"[0-9a-f]*"/s//"format":"locations","linetable":"f0"/' "line table"
hostile "odd hex" '0,/"linetable":"\([0-9a-f]*\)"/s//"linetable":"\1f"/' "even number of hex digits"
hostile "defined twice" '0,/"cgprobe_py_codes":\[\({[^]]*}\)\]/s//"cgprobe_py_codes":[\1,\1]/' "defined twice"

finish

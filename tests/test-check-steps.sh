#!/bin/sh
# SPDX-License-Identifier: MIT
# cgtrace check --max-growth-per-update and diff's growth on a step-wise
# leak (docs/compare.md): tests/python/leak_train.py keeps 512 KiB an
# update in a debug list; the same loop without the leak is the fixed
# script. check --max-growth-per-update 256KiB fails the leak (status 1,
# its line naming the leaking line as the top site) and passes the fixed
# one; so does the committed docs/examples/memory-limits.rules; diff of
# the fixed run against the leaking one shows the growth per update rise
# by about 512 KiB and has per-update rows. Exits 77 without
# /usr/bin/python3 or its torch.
#   test-check-steps.sh WRAPPER CGTRACE PYTHON_DIR RULES
set -u
# shellcheck source=tests/lib/sh-check.sh
. "$(dirname "$0")/lib/sh-check.sh"
need_args 4 "test-check-steps.sh WRAPPER CGTRACE PYTHON_DIR RULES" "$@"
wrapper=$(abs "$1")
cgtrace=$(abs "$2")
pydir=$(abs "$3")
rules=$(abs "$4")
here=$(cd "$(dirname "$0")" && pwd)/python
py=/usr/bin/python3
[ -x "$py" ] || { echo "SKIP: no $py"; exit 77; }
"$py" -c 'import torch' 2>/dev/null || { echo "SKIP: $py has no torch (python3-torch)"; exit 77; }
make_tmp
unset CGPROBE_MIN_BYTES CGPROBE_ONLY CGPROBE_OUTPUT CGPROBE_CAPTURE CGPROBE_CAPTURE_STEP \
	CGPROBE_PYTHON_STEPS CGPROBE_STACK_DEPTH CGPROBE_PYTHON PYTHONPATH
PYTHONDONTWRITEBYTECODE=1
export PYTHONDONTWRITEBYTECODE
leak_line=$(grep -n 'LEAK:' "$here/leak_train.py" | cut -d: -f1)

# run MODE: leak_train.py MODE for 20 updates under the wrapper, as $tmp/MODE.cgt.
run() {
	if PYTHONPATH=$pydir "$wrapper" -q -o "$tmp/$1.cgt" "$py" "$here/leak_train.py" "$1" 20 0 \
		>"$tmp/$1.out" 2>"$tmp/err"; then
		ok
	else
		ko "$1: leak_train.py under the probe"
	fi
}
run leak
run none

"$cgtrace" check --max-growth-per-update 256KiB "$tmp/leak.cgt" >"$tmp/check.txt" 2>"$tmp/err"
[ $? -eq 1 ] && ok || ko "check: the leak is not status 1: $(cat "$tmp/check.txt")"
grep -q "^max-growth-per-update 256KiB: pid [0-9]*, cpu: +5[01][0-9]\.[0-9] KiB per update over the limit 256.0 KiB per update; top site: <module> (leak_train.py:$leak_line), " \
	"$tmp/check.txt" && ok || ko "check: the broken line: $(cat "$tmp/check.txt")"
"$cgtrace" check --max-growth-per-update 256KiB "$tmp/none.cgt" >"$tmp/check.txt" 2>"$tmp/err"
[ $? -eq 0 ] && ok || ko "check: the fixed script breaks the limit: $(cat "$tmp/check.txt")"
grep -q '^check: every limit holds (1 check of 1 limit, 1 process)$' "$tmp/check.txt" && ok ||
	ko "check: the fixed script's line: $(cat "$tmp/check.txt")"

# The committed example rules.
"$cgtrace" check --rules "$rules" "$tmp/leak.cgt" >"$tmp/check.txt" 2>"$tmp/err"
[ $? -eq 1 ] && ok || ko "check --rules example: the leak is not status 1: $(cat "$tmp/check.txt")"
[ "$(grep -c '^max-growth-per-update 256KiB: ' "$tmp/check.txt")" -eq 1 ] &&
	[ "$(grep -c ' over the limit ' "$tmp/check.txt")" -eq 1 ] && ok ||
	ko "check --rules example: not the growth alone: $(cat "$tmp/check.txt")"
"$cgtrace" check --rules "$rules" "$tmp/none.cgt" >"$tmp/check.txt" 2>"$tmp/err"
[ $? -eq 0 ] && ok || ko "check --rules example: the fixed script: $(cat "$tmp/check.txt")"

# diff: the growth per update, and the updates matched by number.
"$cgtrace" diff "$tmp/none.cgt" "$tmp/leak.cgt" >"$tmp/diff.txt" 2>"$tmp/err" && ok || ko "diff"
grep -Eq '^pid [0-9]+ +cpu +growth per update +[-+][0-9.]+ [KM]?i?B +\+5[01][0-9]\.[0-9] KiB +\+5[01][0-9]\.[0-9] KiB' \
	"$tmp/diff.txt" && ok || ko "diff: the growth row: $(grep 'growth per update' "$tmp/diff.txt")"
grep -q 'cpu: peak per update and phase, 20 of [0-9]* rows both have$' "$tmp/diff.txt" && ok ||
	ko "diff: no update rows: $(grep 'per update and phase' "$tmp/diff.txt")"
finish

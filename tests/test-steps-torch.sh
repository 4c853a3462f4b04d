#!/bin/sh
# Memory per training update on real PyTorch training (docs/steps.md), with
# Debian's python3-torch: tests/python/leak_train.py, watched by
# cgprobe.torch.watch, keeps 512 KiB a update in a debug list (freed only at
# exit) and makes a 64 MiB scratch buffer in one update. cgtrace steps must
# show a slope of the leaked bytes an update (within 5%), the scratch
# update as the highest peak (summary names it too), --growth the leaking
# line as its first site; the same loop without the leak is steady after
# warm-up. In every update the model's parameters, which watch() marks
# after torch made them, are parameter. Exits 77 without /usr/bin/python3
# or its torch.
#   test-steps-torch.sh WRAPPER CGTRACE PYTHON_DIR
set -u
# shellcheck source=tests/lib/sh-check.sh
. "$(dirname "$0")/lib/sh-check.sh"
need_args 3 "test-steps-torch.sh WRAPPER CGTRACE PYTHON_DIR" "$@"
wrapper=$(abs "$1")
cgtrace=$(abs "$2")
pydir=$(abs "$3")
here=$(cd "$(dirname "$0")" && pwd)/python
py=/usr/bin/python3
[ -x "$py" ] || { echo "SKIP: no $py"; exit 77; }
"$py" -c 'import torch' 2>/dev/null || { echo "SKIP: $py has no torch (python3-torch)"; exit 77; }
make_tmp
unset CGPROBE_MIN_BYTES CGPROBE_ONLY CGPROBE_OUTPUT CGPROBE_CAPTURE CGPROBE_CAPTURE_STEP \
	CGPROBE_PYTHON_STEPS CGPROBE_STACK_DEPTH CGPROBE_PYTHON PYTHONPATH
PYTHONDONTWRITEBYTECODE=1
export PYTHONDONTWRITEBYTECODE
updates=30 scratch=20
leak_line=$(grep -n 'LEAK:' "$here/leak_train.py" | cut -d: -f1)

# run NAME MODE SCRATCH: leak_train.py under the wrapper, its trace in $trace.
run() {
	rm -f "$tmp/$1".*.cgt
	if PYTHONPATH=$pydir "$wrapper" -q -o "$tmp/$1.%p.cgt" "$py" "$here/leak_train.py" "$2" \
		"$updates" "$3" >"$tmp/$1.out" 2>"$tmp/err"; then
		ok
	else
		ko "$1: leak_train.py under the probe"
	fi
	for trace in "$tmp/$1".*.cgt; do break; done
}

run leak leak "$scratch"
"$cgtrace" steps --json "$trace" >"$tmp/steps.json" 2>"$tmp/err" && ok || ko "leak: steps --json"
"$cgtrace" steps --growth --json "$trace" >"$tmp/growth.json" 2>"$tmp/err" && ok ||
	ko "leak: steps --growth --json"
"$cgtrace" summary --json "$trace" >"$tmp/summary.json" 2>"$tmp/err" && ok || ko "leak: summary --json"
if "$py" "$here/steps_check.py" leak "$tmp/steps.json" "$tmp/growth.json" "$tmp/summary.json" \
	"$leak_line" "$scratch" "$updates" >"$tmp/err" 2>&1; then
	ok
else
	ko "leak: cgtrace's answers"
fi
# The text a user reads: the peak's update, the leaking line first.
"$cgtrace" memory "$trace" >"$tmp/memory.txt" 2>"$tmp/err"
grep -q "^peak: .*, update $scratch" "$tmp/memory.txt" && ok ||
	ko "memory names no update $scratch: $(grep '^peak' "$tmp/memory.txt")"
"$cgtrace" steps --growth -n 1 "$trace" >"$tmp/growth.txt" 2>"$tmp/err"
grep -q "(leak_train.py:$leak_line)\$" "$tmp/growth.txt" && ok ||
	ko "steps --growth does not name leak_train.py:$leak_line: $(tail -n 2 "$tmp/growth.txt")"

run none none 0
"$cgtrace" steps --json "$trace" >"$tmp/steps.json" 2>"$tmp/err" && ok || ko "none: steps --json"
if "$py" "$here/steps_check.py" none "$tmp/steps.json" "$updates" >"$tmp/err" 2>&1; then
	ok
else
	ko "none: cgtrace's answers"
fi
"$cgtrace" steps "$trace" >"$tmp/steps.txt" 2>"$tmp/err"
grep -q '^trend on cpu after 1 warm-up update: steady' "$tmp/steps.txt" && ok ||
	ko "none: not steady: $(grep '^trend' "$tmp/steps.txt")"
finish

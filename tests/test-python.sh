#!/bin/sh
# The Python module (python/cgprobe) with Debian's python3-torch: its API
# under the probe (update spans, phases, marks), cgprobe.torch.watch on a
# small training loop whose trace shows activation, gradient and optimizer
# memory at the peak (and parameter inside a capture window, when the probe
# has one), its updates as spans and the model's storage in one mark, the
# same loop unedited under cgprobe --python-steps, 'import cgprobe.torch' in
# a script the wrapper runs, and nothing done without the probe. Exits 77
# without /usr/bin/python3 or its torch.
#   test-python.sh WRAPPER CGTRACE PYTHON_DIR
set -u
# shellcheck source=tests/lib/sh-check.sh
. "$(dirname "$0")/lib/sh-check.sh"
need_args 3 "test-python.sh WRAPPER CGTRACE PYTHON_DIR" "$@"
wrapper=$(abs "$1")
cgtrace=$(abs "$2")
pydir=$(abs "$3")
here=$(cd "$(dirname "$0")" && pwd)/python
py=/usr/bin/python3
[ -x "$py" ] || { echo "SKIP: no $py"; exit 77; }
"$py" -c 'import torch' 2>/dev/null || { echo "SKIP: $py has no torch (python3-torch)"; exit 77; }
make_tmp
unset CGPROBE_MIN_BYTES CGPROBE_ONLY CGPROBE_OUTPUT CGPROBE_CAPTURE CGPROBE_CAPTURE_STEP \
	CGPROBE_PYTHON_STEPS CGPROBE_TEST_WATCH PYTHONPATH
# No call stacks, no small allocations (probe() below): they are not what is
# tested, and recording and reading them costs.
CGPROBE_STACK_DEPTH=0
PYTHONDONTWRITEBYTECODE=1
export CGPROBE_STACK_DEPTH PYTHONDONTWRITEBYTECODE

has() { grep -qF -- "$2" "$3" && ok || ko "$1: no '$2' in: $(head -c 600 "$3")"; }
count() { grep -cF -- "$1" "$2"; }
# probe NAME ARGS...: the wrapper runs ARGS into trace $tmp/NAME.*.cgt, output
# in $tmp/NAME.out, stderr in $tmp/NAME.err.
probe() {
	name=$1
	shift
	rm -f "$tmp/$name".*.cgt
	"$wrapper" -q --min-bytes 4096 -o "$tmp/$name.%p.cgt" "$@" >"$tmp/$name.out" 2>"$tmp/$name.err"
	r=$?
	cp "$tmp/$name.err" "$tmp/err"
	return $r
}
trace_of() { for t in "$tmp/$1".*.cgt; do printf '%s' "$t"; return; done; }
# cats NAME CATEGORY...: each category non-zero at the trace's peak.
cats() {
	name=$1
	shift
	if "$cgtrace" memory --json --top 1 "$(trace_of "$name")" >"$tmp/$name.mem" 2>"$tmp/err" &&
		"$py" "$here/check.py" "$tmp/$name.mem" "$@" >"$tmp/err" 2>&1; then
		ok
	else
		ko "$name: categories at the peak"
	fi
}
# updates NAME N: N update spans, numbered 1 to N, in $tmp/NAME.jsonl.
updates() {
	n=$(count '"name":"update",' "$tmp/$1.jsonl")
	[ "$n" -eq "$2" ] && ok || ko "$1: $n update spans, not $2"
	i=1
	while [ "$i" -le "$2" ]; do
		[ "$(grep '"name":"update",' "$tmp/$1.jsonl" | count "\"cgprobe_update\":$i}" -)" -eq 1 ] &&
			ok || ko "$1: no update span $i"
		i=$((i + 1))
	done
}
# marks NAME N: one mark in $tmp/NAME.jsonl, of N ranges (watch() tells all storages at once).
marks() {
	grep '"name":"parameters"' "$tmp/$1.jsonl" >"$tmp/$1.marks"
	n=$(wc -l <"$tmp/$1.marks")
	v=$(sed 's/.*"cgprobe_parameters":\[\([^]]*\)\].*/\1/' "$tmp/$1.marks" | tr ',' '\n' | grep -c '^"0x')
	[ "$n $v" = "1 $((2 * $2))" ] && ok || ko "$1: $n marks of $v values, not one of $((2 * $2))"
}
# spans NAME ITERS [FORWARDS]: FORWARDS (ITERS+1: the last one in eval)
# forwards, ITERS backwards and optimizer steps.
spans() {
	"$cgtrace" export "$(trace_of "$1")" >"$tmp/$1.jsonl" 2>"$tmp/err" || { ko "$1: export"; return; }
	grep '"span_start"' "$tmp/$1.jsonl" >"$tmp/$1.spans"
	f=$(count '"name":"forward","start_ns"' "$tmp/$1.spans")
	b=$(count '"step":"backward"' "$tmp/$1.spans")
	o=$(count '"step":"optimizer"' "$tmp/$1.spans")
	want="${3:-$(($2 + 1))} $2 $2"
	[ "$f $b $o" = "$want" ] && ok || ko "$1: forward, backward, optimizer spans: $f $b $o, not $want"
	has "$1: forward is a module span with its step" '"span_kind":"module","measured":false,"step":"forward"' "$tmp/$1.spans"
}

# --- without the probe: nothing done, the program unchanged -------------
if PYTHONPATH=$pydir CGPROBE_TEST_WATCH=1 "$py" "$here/train.py" 2 >"$tmp/plain.out" 2>"$tmp/err"; then
	has "no probe: the loop ran" "train.py: loss" "$tmp/plain.out"
else
	ko "no probe: train.py with watch() failed"
fi
PYTHONPATH=$pydir "$py" "$here/api.py" >"$tmp/plain-api.out" 2>"$tmp/err" || ko "no probe: api.py failed"
has "no probe: not enabled" "enabled 0" "$tmp/plain-api.out"
has "no probe: updates are 0" "update 0" "$tmp/plain-api.out"
has "no probe: a phase's span is 0" "phase-span 0" "$tmp/plain-api.out"
has "no probe: marks do nothing" "many 0" "$tmp/plain-api.out"

# --- the API under the probe --------------------------------------------
if probe api env PYTHONPATH="$pydir" "$py" "$here/api.py"; then
	out=$tmp/api.out
	has "api: enabled" "enabled 1" "$out"
	has "api: the first update is 1" "update 1" "$out"
	has "api: none open after the block" "after 0" "$out"
	[ "$(grep '^next' "$out" | tr '\n' ' ')" = "next 2 next 3 " ] && ok ||
		ko "api: next_update numbers: $(grep '^next' "$out" | tr '\n' ' ')"
	has "api: checkpoint accepted" "checkpoint 0" "$out"
	has "api: bad step refused" "bad-step refused" "$out"
	"$cgtrace" export "$(trace_of api)" >"$tmp/api.jsonl" 2>"$tmp/err" || ko "api: export"
	has "api: the module span" '"name":"outer","start_ns"' "$tmp/api.jsonl"
	grep '"name":"forward"' "$tmp/api.jsonl" >"$tmp/api.fwd"
	has "api: forward inside outer, as a step" '"step":"forward"' "$tmp/api.fwd"
	has "api: the decorator's span" '"name":"apply"' "$tmp/api.jsonl"
	has "api: the device checkpoint" '"reserved_bytes":800' "$tmp/api.jsonl"
	has "api: its allocated bytes" '"cgprobe_allocated_bytes":600' "$tmp/api.jsonl"
	has "api: the thread's name" '"cgprobe_thread_name":"loader-0"' "$tmp/api.jsonl"
	updates api 3
	# Phases: named after the span, or a span around one of another name.
	for p in data evaluate; do
		grep "\"name\":\"$p\"," "$tmp/api.jsonl" >"$tmp/api.phase"
		has "api: phase $p" "\"cgprobe_phase\":\"$p\"" "$tmp/api.phase"
	done
	has "api: begin_span of a phase" "phase-span 1" "$out"
	has "api: end_span of a phase" "phase-end 0" "$out"
	! grep -q 'bad-phase accepted' "$out" && ok || ko "api: $(grep 'bad-phase accepted' "$out")"
	io=$(grep '"name":"io",' "$tmp/api.jsonl" | grep '"cgprobe_phase":"io"' | head -n 1 |
		sed 's/.*"kind":"span_start","id":"\([^"]*\)".*/\1/')
	grep '"name":"load",' "$tmp/api.jsonl" | grep -q "\"parent_id\":\"$io\"" && ok ||
		ko "api: span(\"load\", step=\"io\") not inside a phase io ($io)"
	# mark_parameters_many: one mark, its ranges in order, the empty one left out.
	has "api: mark_parameters_many" "many 0" "$out"
	grep '"name":"parameters"' "$tmp/api.jsonl" >"$tmp/api.marks"
	[ "$(wc -l <"$tmp/api.marks")" -eq 1 ] && ok || ko "api: $(wc -l <"$tmp/api.marks") marks, not 1"
	has "api: the mark's ranges" '"cgprobe_parameters":["0x10000","0x100","0x20000","0x200"]}' "$tmp/api.marks"
	cats api activation gradient optimizer
else
	ko "api: api.py under the probe failed"
fi

# --- import cgprobe.torch under the wrapper, as the README shows it ------
# No PYTHONPATH of the caller's: the wrapper's own build's package is found.
if probe import "$py" -c 'import cgprobe.torch, cgprobe, os
print("import", cgprobe.enabled(), os.path.dirname(os.path.dirname(cgprobe.__file__)))'; then
	has "import: cgprobe.torch from the wrapper's build" "import True $(cd -P "$pydir" && pwd -P)" \
		"$tmp/import.out"
else
	ko "import: 'import cgprobe.torch' under the wrapper failed"
fi

# --- watch() details -------------------------------------------------------
if probe hooks env PYTHONPATH="$pydir" "$py" "$here/hooks.py"; then
	out=$tmp/hooks.out
	has "watch twice: one watch" "same True" "$out"
	has "LR scheduler after watch: no warning, step counted" "warnings 0 count 1" "$out"
	has "remove: step unwrapped" "removed True" "$out"
	has "torch.save of a watched model: loads and runs" "reloaded (1, 4)" "$out"
	has "torch 2 step hooks: used, step not wrapped" "hooked 1 1 False" "$out"
	has "torch 2 step hooks: the update ended by the step" "update 0" "$out"
	has "torch 2 step hooks: removed" "unhooked 0 0" "$out"
	"$cgtrace" export "$(trace_of hooks)" 2>"$tmp/err" | grep '"span_start"' >"$tmp/hooks.spans"
	n=$(count '"step":"optimizer"' "$tmp/hooks.spans")
	[ "$n" -eq 3 ] && ok || ko "hooks: $n optimizer spans, not 3 (1 wrapped, 2 through hooks)"
else
	ko "hooks: hooks.py under the probe failed"
fi

# --- watch() in the script ------------------------------------------------
# Under --python-steps too: marked once, the automatic watch steps aside.
# CUDA faked (torch.cuda's figures): a device checkpoint at each step's
# start and end. A first forward that raises is closed by the next one.
if probe watch --python-steps env PYTHONPATH="$pydir" CGPROBE_TEST_WATCH=1 \
	CGPROBE_TEST_FAKE_CUDA=1 CGPROBE_TEST_RAISE=1 "$py" "$here/train.py" 3; then
	cats watch activation gradient optimizer
	spans watch 3 5
	# The failed first forward began update 1; the model's 4 storages told in one mark.
	updates watch 3
	marks watch 4
	"$cgtrace" validate "$(trace_of watch)" >"$tmp/watch.valid" 2>&1 && ok ||
		ko "watch: cgtrace validate: $(cat "$tmp/watch.valid")"
	[ ! -s "$tmp/watch.err" ] && ok || ko "watch: the probe complained: $(cat "$tmp/watch.err")"
	grep '"device_memory"' "$tmp/watch.jsonl" >"$tmp/watch.dev"
	n=$(count '"device":"cuda:0","used_bytes":21474836480,"free_bytes":64424509440,"reserved_bytes":3145728' "$tmp/watch.dev")
	[ "$n" -eq 21 ] && ok ||
		ko "watch: $n device checkpoints, not 21 (1 failed forward, 3 updates, 1 eval forward): $(head -c 400 "$tmp/watch.dev")"
	has "watch: the allocated bytes" '"cgprobe_allocated_bytes":2097152' "$tmp/watch.dev"
else
	ko "watch: train.py under the probe failed"
fi

# --- the capture window of update 2: parameters pre-existing --------------
if probe window env PYTHONPATH="$pydir" CGPROBE_TEST_WATCH=1 CGPROBE_CAPTURE=update \
	CGPROBE_CAPTURE_STEP=2 "$py" "$here/train.py" 3; then
	"$cgtrace" export "$(trace_of window)" 2>"$tmp/err" | head -n 1 >"$tmp/window.meta"
	if grep -qF '"cgprobe_capture":"update"' "$tmp/window.meta"; then
		cats window parameter activation gradient optimizer
	else
		skip "window: this probe has no capture window (parameter memory not checked)"
	fi
else
	ko "window: train.py under the probe failed"
fi

# --- --python-steps: the same loop, unedited ------------------------------
if probe auto --python-steps "$py" "$here/train.py" 3; then
	has "auto: the loop ran" "train.py: loss" "$tmp/auto.out"
	cats auto activation gradient optimizer
	spans auto 3
	updates auto 3
	marks auto 4
else
	ko "auto: train.py under --python-steps failed"
fi
# The sitecustomize that was there runs too, and a program without torch is left alone.
mkdir "$tmp/site"
printf 'import os\nos.environ["CHAINED"] = "yes"\n' >"$tmp/site/sitecustomize.py"
if probe chain --python-steps env PYTHONPATH="$tmp/site" "$py" -c '
import os, sys
print("chained", os.environ.get("CHAINED"), sys.modules["sitecustomize"].__file__)
print("torch", "torch" in sys.modules, "path", any("_site" in p for p in sys.path))'; then
	has "chain: the next sitecustomize ran" "chained yes $tmp/site/sitecustomize.py" "$tmp/chain.out"
	has "chain: torch not imported, our folder off sys.path" "torch False path False" "$tmp/chain.out"
else
	ko "chain: python under --python-steps failed"
fi
finish

#!/bin/sh
# cgtrace plot on the demo trainer's trace, on hand-written traces (two
# devices with step spans, capacity, checkpoints and an out-of-memory
# failure; strings that need escaping; six marked training updates) and on
# a large generated one: each SVG well-formed, its peaks those of cgtrace
# memory --json, the stack's top at the peak's dot, the training updates'
# starts where cgtrace steps --json says they start, numbered, thinned out
# when many, the file small (test-plot.py check). Bad input, an unwritable
# output and bad options fail with one line.
#   test-plot.sh CGTRACE PROBE DEMO
set -u
# shellcheck source=tests/lib/sh-check.sh
. "$(dirname "$0")/lib/sh-check.sh"
need_args 3 "test-plot.sh CGTRACE PROBE DEMO" "$@"
cgtrace=$(abs "$1")
probe=$(abs "$2")
demo=$(abs "$3")
py=$(abs "$(dirname "$0")/test-plot.py")
command -v python3 >/dev/null 2>&1 || { echo "SKIP: no python3"; exit 77; }
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
unset CGPROBE_MIN_BYTES CGPROBE_ONLY CGPROBE_STEPS CGPROBE_FORMAT CGTRACE_DEBUG_DIR

# plot_check NAME TRACE PLOT_ARGS -- CHECK_ARGS: plots TRACE, checks the SVG.
plot_check() {
	name=$1 trace=$2
	shift 2
	args=
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		args="$args $1"
		shift
	done
	[ $# -gt 0 ] && shift
	# shellcheck disable=SC2086 # the options split on purpose
	if ! "$cgtrace" plot $args -o "$tmp/$name.svg" "$trace" 2>"$tmp/err"; then
		ko "$name: cgtrace plot failed"
		return
	fi
	# What cgtrace memory and cgtrace steps say of the trace, asked once a trace.
	json="$trace.memory.json"
	[ -f "$json" ] || "$cgtrace" memory --json "$trace" >"$json" 2>"$tmp/err" ||
		{ ko "$name: cgtrace memory failed"; rm -f "$json"; return; }
	[ -f "$trace.steps.json" ] || "$cgtrace" steps --json "$trace" >"$trace.steps.json" 2>"$tmp/err" ||
		{ ko "$name: cgtrace steps failed"; rm -f "$trace.steps.json"; return; }
	if python3 "$py" check "$tmp/$name.svg" "$json" --updates "$trace.steps.json" "$@" >"$tmp/err" 2>&1; then
		ok
	else
		ko "$name: the plot's checks"
	fi
}

# The demo trainer under the probe (its updates marked), when this build has the probe. A probe
# built with AddressSanitizer (the sanitizer build runs this suite) cannot
# be preloaded.
if [ -f "$probe" ] && grep -q __asan_init "$probe"; then
	skip "the demo under the probe: $probe is built with AddressSanitizer"
elif [ -f "$probe" ]; then
	env LD_PRELOAD="$probe" CGPROBE_OUTPUT="$tmp/demo.cgt" "$demo" --steps 4 --threads 2 \
		>/dev/null 2>"$tmp/err" && ok || ko "the demo failed under the probe"
	plot_check demo "$tmp/demo.cgt" -- --devices 1 --max-bytes 300000 \
		--legend activation,optimizer,"forward step","backward step","update starts (marked)" \
		--bands forward,backward
else
	skip "the demo under the probe: no probe built"
fi

# Two devices, the three steps, capacity, checkpoints, an out-of-memory failure.
cat >"$tmp/two.jsonl" <<'EOF'
{"kind":"meta","schema":"candle-graph/trace/6","run_id":"run-1-1","correlation_id":"two/update-1","entrypoint":"two <&> \"devices\"","phase":"train","timestamp":"2026-12-01T12:00:00.000Z","capture_step":1,"warmup_steps":0,"device":"cuda:0","timing_mode":"host","tags":{}}
{"kind":"span_start","id":"s1","name":"two","start_ns":0,"span_kind":"function"}
{"kind":"memory","timestamp_ns":1000000,"tensor_id":"0x10","span_id":"s1","device":"cuda:0","bytes":536870912,"action":"alloc","shape":[536870912],"dtype":"u8","category":"parameter","cgprobe_device_uuid":"GPU-1","cgprobe_device_name":"Fake <GPU> & co","cgprobe_device_total_bytes":2147483648}
{"kind":"memory","timestamp_ns":2000000,"tensor_id":"0x20","span_id":"s1","device":"cpu","bytes":1048576,"action":"alloc","shape":[1048576],"dtype":"u8","category":"other"}
{"kind":"span_start","id":"s2","parent_id":"s1","name":"step","start_ns":100000000,"span_kind":"function"}
{"kind":"span_start","id":"s3","parent_id":"s2","name":"forward","start_ns":100000000,"span_kind":"module","step":"forward"}
{"kind":"memory","timestamp_ns":150000000,"tensor_id":"0x30","span_id":"s3","device":"cuda:0","bytes":268435456,"action":"alloc","shape":[268435456],"dtype":"u8","category":"activation"}
{"kind":"memory","timestamp_ns":160000000,"tensor_id":"0x40","span_id":"s3","device":"cpu","bytes":3145728,"action":"alloc","shape":[3145728],"dtype":"u8","category":"activation"}
{"kind":"device_memory","timestamp_ns":170000000,"device":"cuda:0","used_bytes":900000000,"free_bytes":1247483648}
{"kind":"span_end","id":"s3","duration_ns":100000000}
{"kind":"span_start","id":"s4","parent_id":"s2","name":"backward","start_ns":200000000,"span_kind":"module","step":"backward"}
{"kind":"memory","timestamp_ns":250000000,"tensor_id":"0x50","span_id":"s4","device":"cuda:0","bytes":536870912,"action":"alloc","shape":[536870912],"dtype":"u8","category":"gradient"}
{"kind":"memory","timestamp_ns":260000000,"tensor_id":"0x30","span_id":"s4","device":"cuda:0","bytes":268435456,"action":"free","shape":[268435456],"dtype":"u8","category":"activation"}
{"kind":"memory","timestamp_ns":270000000,"tensor_id":"0x40","span_id":"s4","device":"cpu","bytes":3145728,"action":"free","shape":[3145728],"dtype":"u8","category":"activation"}
{"kind":"device_memory","timestamp_ns":280000000,"device":"cuda:0","used_bytes":1200000000,"free_bytes":947483648,"oom_request_bytes":1073741824}
{"kind":"span_end","id":"s4","duration_ns":100000000}
{"kind":"span_start","id":"s5","parent_id":"s2","name":"optimizer","start_ns":300000000,"span_kind":"module","step":"optimizer"}
{"kind":"memory","timestamp_ns":320000000,"tensor_id":"0x60","span_id":"s5","device":"cuda:0","bytes":1073741824,"action":"alloc","shape":[1073741824],"dtype":"u8","category":"optimizer"}
{"kind":"memory","timestamp_ns":340000000,"tensor_id":"0x50","span_id":"s5","device":"cuda:0","bytes":536870912,"action":"free","shape":[536870912],"dtype":"u8","category":"gradient"}
{"kind":"span_end","id":"s5","duration_ns":60000000}
{"kind":"span_end","id":"s2","duration_ns":260000000}
{"kind":"memory","timestamp_ns":400000000,"tensor_id":"0x60","span_id":"s1","device":"cuda:0","bytes":1073741824,"action":"free","shape":[1073741824],"dtype":"u8","category":"optimizer"}
{"kind":"span_end","id":"s1","duration_ns":410000000}
EOF
plot_check two "$tmp/two.jsonl" -- --devices 2 --max-bytes 100000 \
	--legend parameter,activation,gradient,optimizer,other,"forward step","backward step","optimizer step",capacity,"device used","out of memory (1)" \
	--bands forward,backward,optimizer
# The peak of cuda:0: parameter, gradient and optimizer at 320 ms, 2 GiB, named so.
grep -q '>peak 2.00 GiB at 320.00 ms<' "$tmp/two.svg" && ok || ko "cuda:0's peak label"
grep -q 'Fake &lt;GPU&gt; &amp; co' "$tmp/two.svg" && ok || ko "the device's name, escaped"
plot_check one-device "$tmp/two.jsonl" --device cuda:0 --buckets 50 -- --devices 1
plot_check small "$tmp/two.jsonl" --width 320 --height 240 -- --devices 2
plot_check tall "$tmp/two.jsonl" --width 1920 --height 1080 -- --devices 2

# Six marked training updates on two devices (tests/lib/updates_trace.py): a
# line at each one's start and its number; at 320 px, fewer numbers.
python3 "$(dirname "$0")/lib/updates_trace.py" "$tmp/updates.jsonl" 6 || ko "writing the trace of updates"
plot_check updates "$tmp/updates.jsonl" -- --devices 2 --update-marks all \
	--legend "update starts (marked)" --bands forward,backward,optimizer
grep -q '<path id="updates" data-lines="6" data-labels="6" d="M112.2 0V1M314.6 0V1' "$tmp/updates.svg" &&
	ok || ko "updates: the six starts at 1 ms and 11 ms are not at x 112.2 and 314.6"
plot_check updates-small "$tmp/updates.jsonl" --width 320 --height 240 -- --devices 2

# Standard output, and a file replaced.
"$cgtrace" plot -o - "$tmp/two.jsonl" >"$tmp/stdout.svg" 2>"$tmp/err" &&
	cmp -s "$tmp/stdout.svg" "$tmp/two.svg" && ok || ko "-o - differs from the file"
echo old >"$tmp/old.svg"
"$cgtrace" plot -o "$tmp/old.svg" "$tmp/two.jsonl" 2>"$tmp/err" &&
	cmp -s "$tmp/old.svg" "$tmp/two.svg" && ok || ko "an existing file not replaced"

# A large trace: 47,000 records, 3,000 step spans on three devices, several
# a pixel: bands merged and the stack one point a pixel, whatever --buckets asks.
python3 "$py" gen "$tmp/big.jsonl" 1000 || ko "generating the large trace"
plot_check big "$tmp/big.jsonl" -- --devices 3 --max-bytes 300000 \
	--bands forward,backward,optimizer --legend "out of memory (20)" --update-marks thinned
plot_check big-buckets "$tmp/big.jsonl" --buckets 100000 -- --devices 3 --max-bytes 300000

# fails NAME STATUS ARGS...: cgtrace plot ARGS exits STATUS with one line on stderr.
fails() {
	name=$1 want=$2
	shift 2
	"$cgtrace" plot "$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	lines=$(wc -l <"$tmp/err")
	if [ "$rc" -eq "$want" ] && { [ "$want" -eq 2 ] || [ "$lines" -eq 1 ]; }; then
		ok
	else
		ko "$name: exit $rc, $lines lines on stderr"
	fi
}
printf 'not json\n{}\n' >"$tmp/bad.jsonl"
fails "bad input" 1 -o "$tmp/bad.svg" "$tmp/bad.jsonl"
[ ! -e "$tmp/bad.svg" ] && ok || ko "bad input left a file"
grep -q "bad.jsonl" "$tmp/err" && ok || ko "the error does not name the trace"
fails "missing trace" 1 -o "$tmp/x.svg" "$tmp/none.jsonl"
touch "$tmp/afile"
fails "unwritable output" 1 -o "$tmp/afile/x.svg" "$tmp/two.jsonl"
grep -q "afile/x.svg" "$tmp/err" && ok || ko "the error does not name the output"
fails "unknown device" 1 --device cuda:7 -o "$tmp/x.svg" "$tmp/two.jsonl"
grep -q "cuda:7" "$tmp/err" && ok || ko "the error does not name the device"
printf '%s\n' '{"kind":"meta","schema":"candle-graph/trace/6","run_id":"r","correlation_id":"c","entrypoint":"e","phase":"train","timestamp":"2026-12-01T12:00:00.000Z","capture_step":1,"warmup_steps":0,"device":"cpu","timing_mode":"host","tags":{}}' \
	'{"kind":"span_start","id":"s1","name":"e","start_ns":0,"span_kind":"function"}' \
	'{"kind":"span_end","id":"s1","duration_ns":10}' >"$tmp/nomem.jsonl"
fails "no memory records" 1 -o "$tmp/x.svg" "$tmp/nomem.jsonl"
fails "no -o" 2 "$tmp/two.jsonl"
fails "bad width" 2 --width 10 -o "$tmp/x.svg" "$tmp/two.jsonl"
fails "bad buckets" 2 --buckets 0 -o "$tmp/x.svg" "$tmp/two.jsonl"
finish

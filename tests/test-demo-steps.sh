#!/bin/sh
# The bundled demo trainer under the probe: its spans and update marks make
# forward, backward and optimizer memory show by category in cgtrace memory
# and in the records (activation, gradient, optimizer), its workers'
# allocations included; cgtrace steps finds its marked updates and steps,
# and its parameters, marked after they were made, are parameter at the
# peak; it runs unchanged without the probe.
#   test-demo-steps.sh CGTRACE PROBE DEMO
set -u
# shellcheck source=tests/lib/sh-check.sh
. "$(dirname "$0")/lib/sh-check.sh"
probe_test 3 "test-demo-steps.sh CGTRACE PROBE DEMO" "$@"
demo=$(abs "$3")
unset CGPROBE_MIN_BYTES CGPROBE_ONLY CGPROBE_STEPS CGPROBE_FORMAT CGTRACE_DEBUG_DIR

env LD_PRELOAD="$probe" CGPROBE_OUTPUT="$tmp/t.cgt" "$demo" --steps 3 --threads 2 \
	>"$tmp/out" 2>"$tmp/err" && ok || ko "the demo failed under the probe"
"$cgtrace" memory "$tmp/t.cgt" >"$tmp/mem" 2>"$tmp/err" || ko "cgtrace memory failed"
line=$(grep 'by category:' "$tmp/mem")
for cat in activation optimizer parameter; do
	case $line in
	*"$cat 0 B"*) ko "no $cat bytes at the peak: $line" ;;
	*"$cat "*) ok ;;
	*) ko "no $cat in: $line" ;;
	esac
done
"$cgtrace" export "$tmp/t.cgt" >"$tmp/jsonl" 2>"$tmp/err" || ko "cgtrace export failed"
for cat in activation gradient optimizer; do
	n=$(grep '"action":"alloc"' "$tmp/jsonl" | grep -c "\"category\":\"$cat\"")
	[ "$n" -gt 0 ] && ok || ko "no $cat allocations"
done
# Steps apply to the workers' threads too: none of their records is other.
if grep '"kind":"memory"' "$tmp/jsonl" | grep '"span_id":"s1"' | grep -q '"op_name":"aligned_alloc"'; then
	ko "an op's output outside every step span"
else
	ok
fi
n=$("$cgtrace" export "$tmp/t.cgt" | grep -c '"name":"step"')
[ "$n" -eq 3 ] && ok || ko "$n step spans, expected 3"
# Its updates are marked (docs/steps.md): three of them, each with its steps.
"$cgtrace" steps --phases "$tmp/t.cgt" >"$tmp/steps" 2>"$tmp/err" || ko "cgtrace steps failed"
grep -q ': 3 updates, marked in the trace$' "$tmp/steps" && ok || ko "not 3 marked updates: $(head -n 1 "$tmp/steps")"
for phase in forward backward optimizer; do
	[ "$(grep -c "^ *$phase " "$tmp/steps")" -eq 3 ] && ok || ko "not 3 $phase rows in: $(cat "$tmp/steps")"
done
# The parameters, allocated and then marked, are parameter at the peak of a whole-run trace.
"$cgtrace" memory --json "$tmp/t.cgt" >"$tmp/mem.json" 2>"$tmp/err" || ko "memory --json failed"
grep -q '"peak_by_category":{"parameter":[1-9]' "$tmp/mem.json" && ok || ko "no parameter bytes at the peak"

"$demo" --steps 2 >"$tmp/out" 2>"$tmp/err" && ok || ko "the demo failed without the probe"
finish

#!/bin/sh
# SPDX-License-Identifier: MIT
# The capture window opened by NVTX ranges alone: tests/steps/nvtx-updates.c
# marks three updates with ProfilerStep#N ranges (CGPROBE_UPDATE_RANGE's
# default), run with the probe as its NVTX injection and
# CGPROBE_CAPTURE=update CGPROBE_CAPTURE_STEP=2: the trace holds update 2's
# range as its first span carrying the update's number, update 2's block,
# update 1's still-live block as pre-existing, nothing of update 3.
# Exits 77 where the NVTX headers were absent at build time.
#   test-nvtx-updates.sh CGTRACE PROBE PROGRAM
set -u
# shellcheck source=tests/lib/sh-check.sh
. "$(dirname "$0")/lib/sh-check.sh"
probe_test 3 "test-nvtx-updates.sh CGTRACE PROBE PROGRAM" "$@"
prog=$3
if [ ! -x "$prog" ]; then
	echo "SKIP: no NVTX headers at build time"
	exit 77
fi
unset CGPROBE_UPDATE_RANGE CGPROBE_STEPS CGPROBE_MIN_BYTES

for fmt in jsonl compact; do
	env LD_PRELOAD="$probe" NVTX_INJECTION64_PATH="$probe" CGPROBE_FORMAT=$fmt \
		CGPROBE_CAPTURE=update CGPROBE_CAPTURE_STEP=2 CGPROBE_OUTPUT="$tmp/t.$fmt" "$prog" \
		>/dev/null 2>"$tmp/err" || { ko "$fmt: the program failed: $(cat "$tmp/err")"; continue; }
	"$cgtrace" export "$tmp/t.$fmt" >"$tmp/j" 2>"$tmp/err" || { ko "$fmt: export: $(cat "$tmp/err")"; continue; }
	grep '"capture_step":2' "$tmp/j" | grep -q '"cgprobe_capture_reached":"yes"' && ok ||
		ko "$fmt: meta of the window: $(head -n 1 "$tmp/j")"
	grep '"bytes":3002,' "$tmp/j" | grep '"action":"alloc"' | grep -qv cgprobe_preexisting && ok ||
		ko "$fmt: update 2's block not recorded as its own"
	grep '"bytes":3001,' "$tmp/j" | grep -q '"cgprobe_preexisting":true' && ok ||
		ko "$fmt: update 1's live block not pre-existing"
	! grep -q '"bytes":3003,' "$tmp/j" && ok || ko "$fmt: update 3 recorded"
	# The range that opened the window is its first span, carrying the update's number.
	grep -q '"kind":"span_start","id":"s2","parent_id":"s1","name":"ProfilerStep#2",.*"cgprobe_update":2}' "$tmp/j" &&
		ok || ko "$fmt: ProfilerStep#2 not s2 with cgprobe_update 2"
	[ "$(grep -c '"cgprobe_update"' "$tmp/j")" -eq 1 ] && ok || ko "$fmt: more than one update span"
	grep -q '"kind":"span_end","id":"s2",' "$tmp/j" && ok || ko "$fmt: ProfilerStep#2 not closed"
	[ ! -s "$tmp/err" ] && ok || ko "$fmt: stderr: $(cat "$tmp/err")"
done
finish

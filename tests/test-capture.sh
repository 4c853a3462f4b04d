#!/bin/sh
# The capture window (CGPROBE_CAPTURE=update) and forked children's
# inherited heap (docs/probe.md, "Capture window"), read back with cgtrace:
# the window's head and snapshot, the update's own span, a window never reached, the demo
# trainer's window whose peak is the full trace's peak over that update, a
# fork child's inherited blocks and its frees of them, a child that execs
# or exits first leaving no file; in JSONL and compact.
#   test-capture.sh CGTRACE LIBCGPROBE CAPTURE_PROG DEMO
set -u
# shellcheck source=tests/lib/sh-check.sh
. "$(dirname "$0")/lib/sh-check.sh"
need_args 4 "test-capture.sh CGTRACE LIBCGPROBE CAPTURE_PROG DEMO" "$@"
cgtrace=$(abs "$1") lib=$(abs "$2") prog=$(abs "$3") demo=$(abs "$4")
decoder=$(abs "$(dirname "$0")")/compact_decode.py
scripts=$(abs "$(dirname "$0")")/../scripts
# A probe built with AddressSanitizer cannot be preloaded into these programs.
if grep -q __asan_init "$lib" 2>/dev/null; then
	echo "SKIP: $lib is built with AddressSanitizer"
	exit 77
fi
make_tmp
cd "$tmp" || exit 1

# probe DIR ENV... -- PROG ARGS...: runs PROG under the probe, traces in DIR.
probe() {
	dir=$1
	shift
	mkdir -p "$dir"
	env CGPROBE_OUTPUT="$tmp/$dir/t.%p.$ext" CGPROBE_QUIET=1 LD_PRELOAD="$lib" "$@" \
		>/dev/null 2>"$tmp/err"
}
# count FILE PATTERN: the lines of FILE matching PATTERN (grep -E).
count() { grep -cE "$2" "$1"; }

for ext in jsonl cgt; do
	# Update 2 of 3: its own records after the blocks live when it began.
	probe "win-$ext" CGPROBE_CAPTURE=update CGPROBE_CAPTURE_STEP=2 "$prog" updates 3 &&
		ok || ko "$ext: window run"
	t=$(ls "win-$ext"/* 2>/dev/null | head -n 1)
	"$cgtrace" export "$t" >x 2>"$tmp/err" && ok || ko "$ext: window export"
	grep -q '"capture_step":2,"warmup_steps":1,' x && ok || ko "$ext: capture_step 2, warmup 1"
	for tag in '"cgprobe_capture":"update"' '"cgprobe_capture_step":"2"' \
		'"cgprobe_capture_reached":"yes"' '"cgprobe_update_range":"ProfilerStep#\*'; do
		grep -q "$tag" x && ok || ko "$ext: tag $tag"
	done
	# The snapshot: the block live throughout and update 1's kept one, at t=0, in s1.
	[ "$(count x '"cgprobe_preexisting":true')" -eq 2 ] && ok || ko "$ext: two pre-existing blocks"
	grep -q '"timestamp_ns":0,.*"span_id":"s1".*"bytes":100000,"action":"alloc".*"cgprobe_preexisting":true' x &&
		ok || ko "$ext: the 100000-byte block pre-existing at t=0"
	grep -q '"bytes":2001,"action":"alloc".*"cgprobe_preexisting":true' x && ok ||
		ko "$ext: update 1's block pre-existing"
	# Only update 2's own: its span, the window's first (s2), with its number,
	# the only update's, closed before s1; its 20000-byte block in its forward span s3.
	[ "$(count x '"bytes":(10000|30000|2003),')" -eq 0 ] && ok || ko "$ext: other updates left out"
	grep -q '"span_id":"s3".*"bytes":20000,"action":"alloc"' x && ok || ko "$ext: update 2's block in s3"
	grep -q '"kind":"span_start","id":"s2","parent_id":"s1","name":"update",.*"cgprobe_update":2}' x &&
		ok || ko "$ext: update 2's own span s2"
	[ "$(count x '"name":"update"')" -eq 1 ] && ok || ko "$ext: one update span"
	awk '/"kind":"span_end","id":"s2",/ { a = NR } /"kind":"span_end","id":"s1",/ { b = NR }
		END { exit !(a && b && a < b) }' x && ok || ko "$ext: update 2's span closed before s1"
	[ "$(count x '"action":"free"')" -eq 1 ] && ok || ko "$ext: one free"
	"$cgtrace" validate "$t" >/dev/null 2>"$tmp/err" && [ ! -s "$tmp/err" ] && ok ||
		ko "$ext: window trace valid, no warnings"
	# Peak: the two pre-existing blocks and update 2's.
	"$cgtrace" memory --json "$t" | grep -q '"peak_bytes":122001,' && ok || ko "$ext: window peak"

	# A window never reached: the head alone, which the reader reports.
	probe "never-$ext" CGPROBE_CAPTURE=update CGPROBE_CAPTURE_STEP=5 "$prog" updates 3 &&
		ok || ko "$ext: never-reached run"
	t=$(ls "never-$ext"/* 2>/dev/null | head -n 1)
	"$cgtrace" export "$t" >x 2>"$tmp/err" && ok || ko "$ext: never-reached export"
	grep -q '"cgprobe_capture_reached":"no"' x && ok || ko "$ext: reached no"
	[ "$(count x '"kind":"memory"')" -eq 0 ] && ok || ko "$ext: no records"
	"$cgtrace" summary --brief "$t" >s 2>"$tmp/err"
	[ "$(count s 'capture window \(update 5\) never reached')" -eq 1 ] && ok ||
		ko "$ext: summary --brief says so"
	"$cgtrace" summary "$t" | grep -q '^note .*capture window (update 5) never reached' && ok ||
		ko "$ext: summary says so"
	"$cgtrace" validate "$t" >/dev/null 2>v
	grep -q 'warning: capture window (update 5) never reached' v && ok || ko "$ext: validate warns"

	# The wrapper prints the reader's line for it.
	CGPROBE_LIB=$lib PATH=$(dirname "$cgtrace"):$PATH CGPROBE_CAPTURE=update CGPROBE_CAPTURE_STEP=5 \
		sh "$scripts/cgprobe" -o "$tmp/wrap-$ext/t.%p.$ext" "$prog" updates 3 >/dev/null 2>w
	[ "$(count w 'cgprobe: .*capture window \(update 5\) never reached')" -eq 1 ] && ok ||
		ko "$ext: the wrapper reports the window never reached"

	# The demo trainer: update 2's window against the full trace over that update.
	probe "demo-all-$ext" "$demo" --steps 3 && ok || ko "$ext: demo full run"
	probe "demo-win-$ext" CGPROBE_CAPTURE=update CGPROBE_CAPTURE_STEP=2 "$demo" --steps 3 &&
		ok || ko "$ext: demo window run"
	full=$(ls "demo-all-$ext"/* | head -n 1) win=$(ls "demo-win-$ext"/* | head -n 1)
	"$cgtrace" export "$full" >full.jsonl 2>"$tmp/err" && ok || ko "$ext: demo full export"
	# The full trace's peak from the second "step" span's start to its end.
	want=$(awk '
		function num(k,   m) { if (!match($0, "\"" k "\":[0-9]+")) return -1
			m = substr($0, RSTART, RLENGTH); sub(/.*:/, "", m); return m + 0 }
		function str(k,   m) { if (!match($0, "\"" k "\":\"[^\"]*\"")) return ""
			m = substr($0, RSTART, RLENGTH); sub(/^[^:]*:"/, "", m); sub(/"$/, "", m); return m }
		/"kind":"span_start"/ && /"name":"step"/ && ++steps == 2 { id = str("id"); t0 = num("start_ns") }
		/"kind":"span_end"/ && id != "" && str("id") == id { t1 = t0 + num("duration_ns") }
		/"kind":"memory"/ {
			ts = num("timestamp_ns"); k = str("device") " " str("tensor_id")
			if (t0 != "" && ts >= t0 && !started) { started = 1; peak = live }
			if (str("action") == "alloc") { live += num("bytes"); size[k] = num("bytes") }
			else live -= size[k]
			if (started && (t1 == "" || ts <= t1) && live > peak) peak = live
		}
		END { print peak + 0 }' full.jsonl)
	got=$("$cgtrace" memory --json --bytes "$win" | sed -n 's/.*"summary":{[^}]*"peak_bytes":\([0-9]*\),.*/\1/p')
	[ -n "$got" ] && [ "$got" -gt 0 ] && [ "$got" = "$want" ] && ok ||
		ko "$ext: demo window peak $got, the full trace's over update 2 $want"
	"$cgtrace" export "$win" >win.jsonl 2>"$tmp/err"
	grep -q '"category":"parameter","cgprobe_preexisting":true' win.jsonl && ok ||
		ko "$ext: the demo's parameters pre-existing as parameter"
	grep -q '"kind":"span_start","id":"s2","parent_id":"s1","name":"update",.*"cgprobe_update":2}' win.jsonl &&
		ok || ko "$ext: the demo's update span is s2"
	grep -q '"kind":"span_start","id":"s3","parent_id":"s1","name":"step"' win.jsonl && ok ||
		ko "$ext: the update's step span is s3"
	"$cgtrace" validate "$win" >/dev/null 2>"$tmp/err" && ok || ko "$ext: demo window valid"
	# The second reader (docs/compact-format.md alone) decodes the marks (key 2) alike.
	if [ "$ext" = cgt ] && command -v python3 >/dev/null 2>&1 &&
		{ python3 -c 'import zstandard' >/dev/null 2>&1 || command -v zstd >/dev/null 2>&1; }; then
		"$cgtrace" export --order stream "$win" >stream.jsonl 2>"$tmp/err"
		python3 "$decoder" --check --compare stream.jsonl "$win" 2>"$tmp/err" && ok ||
			ko "cgt: the Python decoder agrees on the demo window"
	fi

	# A fork child: what it inherited, pre-existing, and its frees of it kept.
	probe "fork-$ext" "$prog" fork && ok || ko "$ext: fork run"
	[ "$(ls "fork-$ext" | wc -l)" -eq 2 ] && ok || ko "$ext: two traces"
	child=
	for t in "fork-$ext"/*; do
		"$cgtrace" export "$t" >x 2>/dev/null
		grep -q '"forked_from"' x && child=$t && cp x child.jsonl
	done
	[ -n "$child" ] && ok || ko "$ext: the child's trace"
	grep -q '"bytes":40000,"action":"alloc".*"cgprobe_preexisting":true' child.jsonl && ok ||
		ko "$ext: inherited block pre-existing"
	grep -q '"bytes":40000,"action":"free"' child.jsonl && ok || ko "$ext: its free kept"
	[ "$(count child.jsonl '"bytes":5000,"action":"(alloc|free)"')" -eq 2 ] && ok ||
		ko "$ext: the child's own block"
	[ "$(count child.jsonl '"bytes":5000,"action":"alloc".*preexisting')" -eq 0 ] && ok ||
		ko "$ext: the child's own block not pre-existing"
	"$cgtrace" validate "$child" >/dev/null 2>"$tmp/err" && ok || ko "$ext: child trace valid"
	"$cgtrace" memory --json --bytes "$child" | grep -q '"peak_bytes":[1-9]' && ok ||
		ko "$ext: child peak counts the inherited heap"

	# Children that exec or exit before allocating leave no file of their own.
	probe "exec-$ext" "$prog" fork-exec && ok || ko "$ext: fork-exec run"
	[ "$(ls "exec-$ext" | wc -l)" -eq 2 ] && ok || ko "$ext: the parent's and true's traces"
	n=0
	for t in "exec-$ext"/*; do
		"$cgtrace" export "$t" 2>/dev/null | grep -q '"forked_from"' && n=$((n + 1))
	done
	[ "$n" -eq 0 ] && ok || ko "$ext: no forked_from trace after exec"
	probe "exit-$ext" "$prog" fork-exit && ok || ko "$ext: fork-exit run"
	[ "$(ls "exit-$ext" | wc -l)" -eq 1 ] && ok || ko "$ext: exiting child leaves no trace"
done
finish

#!/bin/sh
# End to end: a program with a known call chain (tests/symbols/probe-chain.c)
# run under the probe, in both encodings; cgtrace top, leaks and the folded
# export name its functions and lines, and the site reached through two
# callers is one site of two stacks. Exits 77 (skipped) when the probe
# records no stacks.
#   test-sites-probe.sh CGTRACE PROBE PROGRAM
set -u
# shellcheck source=tests/lib/sh-check.sh
. "$(dirname "$0")/lib/sh-check.sh"
probe_test 3 "test-sites-probe.sh CGTRACE PROBE PROGRAM" "$@"
prog=$(abs "$3")
unset CGPROBE_MIN_BYTES CGPROBE_ONLY CGPROBE_STACK_DEPTH CGTRACE_DEBUG_DIR

has() { grep -qF -- "$2" "$tmp/out" && ok || ko "$1: no '$2' in: $(head -c 800 "$tmp/out")"; }

for fmt in jsonl compact; do
	env LD_PRELOAD="$probe" CGPROBE_FORMAT=$fmt CGPROBE_OUTPUT="$tmp/t.$fmt" "$prog" \
		2>"$tmp/lines" || { ko "$fmt: the program failed"; continue; }
	read -r _ l_malloc l_first l_second l_keep <"$tmp/lines"
	t=$tmp/t.$fmt
	"$cgtrace" export "$t" >"$tmp/jsonl" 2>"$tmp/err"
	if ! grep -q '"cgprobe_stack_frames"' "$tmp/jsonl"; then
		echo "SKIP: the probe records no stacks"
		exit 77
	fi
	"$cgtrace" top --by total --json "$t" >"$tmp/out" 2>"$tmp/err"
	has "$fmt: one site, two stacks" '"stacks":2,"count":2,"total_bytes":100000'
	"$cgtrace" top --by total "$t" >"$tmp/out" 2>"$tmp/err"
	has "$fmt: top names the site" "make_buf (probe-chain.c:$l_malloc)"
	"$cgtrace" top --by total --full "$t" >"$tmp/out" 2>"$tmp/err"
	has "$fmt: the first caller" "first_caller (probe-chain.c:$l_first)"
	has "$fmt: the second caller" "second_caller (probe-chain.c:$l_second)"
	has "$fmt: main" "main (probe-chain.c:"
	"$cgtrace" top --by peak -n 1 "$t" >"$tmp/out" 2>"$tmp/err"
	has "$fmt: the peak's site" "make_buf (probe-chain.c:$l_malloc)"
	"$cgtrace" leaks "$t" >"$tmp/out" 2>"$tmp/err"
	has "$fmt: the leak" "keep_one (probe-chain.c:$l_keep)"
	"$cgtrace" export --format folded --by total "$t" >"$tmp/out" 2>"$tmp/err"
	has "$fmt: folded, first caller" "main;first_caller;make_buf 70000"
	has "$fmt: folded, second caller" "main;second_caller;make_buf 30000"
	[ -s "$tmp/err" ] && ko "$fmt: warnings: $(cat "$tmp/err")" || ok
done
finish

#!/bin/sh
# SPDX-License-Identifier: MIT
# The probe's compact traces (docs/compact-format.md): the records are those
# the JSONL writer writes for the same events, byte for byte once exported
# (CGPROBE_TEST_JSONL_COPY), and a trace cut by SIGKILL or in the middle of
# a block still reads up to its last whole block.
# Usage: test-probe-compact.sh CGTRACE LIBCGPROBE BINDIR CUDA_FIXTURES
# (BINDIR: the preload programs; CUDA_FIXTURES: tests/cuda's build output)
set -u
# shellcheck source=tests/lib/sh-check.sh
. "$(dirname "$0")/lib/sh-check.sh"
probe_test 4 "test-probe-compact.sh CGTRACE LIBCGPROBE BINDIR CUDA_FIXTURES" "$@"
bin=$(abs "$3")
fixtures=$(abs "$4")
skip_unless_built "$cgtrace"
: >"$tmp/err"

# probe_run DIR PROG ARGS...: PROG under the probe, compact traces and their copies in DIR.
probe_run() {
	d=$1
	shift
	mkdir -p "$d"
	env -u CGPROBE_FORMAT LD_PRELOAD="$probe" CGPROBE_OUTPUT="$d/t.%p.cgt" \
		CGPROBE_TEST_JSONL_COPY="$d/c.%p.jsonl" "$@" >"$tmp/out" 2>"$tmp/err"
}

# magic FILE: compact or jsonl, by the first bytes.
magic() {
	case $(od -An -c -N 8 "$1" | tr -d ' ') in
	211CGTRACE) echo compact ;;
	'{"kind":'*) echo jsonl ;;
	*) echo other ;;
	esac
}

# The encoding: CGPROBE_FORMAT, except that a name ending .jsonl or .zst
# stays JSONL and a FIFO is compact only when asked for by name.
d=$tmp/formats
mkdir -p "$d"
run_fmt() {
	out=$1
	shift
	env "$@" LD_PRELOAD="$probe" CGPROBE_OUTPUT="$out" "$bin/hello" >"$tmp/out" 2>"$tmp/err"
}
run_fmt "$d/a.cgt" CGPROBE_FORMAT=jsonl
run_fmt "$d/b.jsonl" CGPROBE_FORMAT=compact
run_fmt "$d/c.trace"
if [ "$(magic "$d/a.cgt")" = jsonl ] && [ "$(magic "$d/b.jsonl")" = jsonl ] &&
	[ "$(magic "$d/c.trace")" = compact ] && [ ! -s "$tmp/err" ]; then
	ok
else
	ko "CGPROBE_FORMAT and names: $(magic "$d/a.cgt") $(magic "$d/b.jsonl") $(magic "$d/c.trace")"
fi
# The probe promises its memory records in timestamp order: header flags bit 0.
flags=$(od -An -tu4 -j 12 -N 4 "$d/c.trace" | tr -d ' ')
[ "$flags" = 1 ] && ok || ko "the probe's header flags: '$flags', not 1 (in order)"
run_fmt "$d/d.cgt" CGPROBE_FORMAT=binary
if [ "$(magic "$d/d.cgt")" = compact ] && [ "$(wc -l <"$tmp/err" | tr -d ' ')" -eq 1 ] &&
	grep -q '^cgprobe: CGPROBE_FORMAT=binary is not compact or jsonl; using compact$' "$tmp/err"; then
	ok
else
	ko "a bad CGPROBE_FORMAT: one warning, the default"
fi
for f in "" compact; do
	rm -f "$d/fifo" "$d/from-fifo"
	mkfifo "$d/fifo" || break
	cat "$d/fifo" >"$d/from-fifo" &
	reader=$!
	run_fmt "$d/fifo" ${f:+CGPROBE_FORMAT=$f}
	wait "$reader"
	want=${f:-jsonl}
	if [ "$(magic "$d/from-fifo")" = "$want" ]; then ok; else ko "a FIFO with CGPROBE_FORMAT='$f': not $want"; fi
done

# CGPROBE_STATS=1: one line at exit, of either encoding.
for f in compact jsonl; do
	run_fmt "$d/s.$f.%p" CGPROBE_STATS=1 CGPROBE_FORMAT=$f
	if [ "$(wc -l <"$tmp/err" | tr -d ' ')" -eq 1 ] &&
		grep -q "^cgprobe: stats: $d/s\.$f\.[0-9]*: $f, [0-9]* events, [0-9]* records, [0-9]* bytes ([0-9]* raw), [0-9]* blocks; writer CPU [0-9.]* ms: [a-z]* [0-9.]*, compress [0-9.]*, write [0-9.]* ms; [0-9.]* ns/event; stacks [0-9]* sent, [0-9]* nodes, [0-9]* addresses; memory: probe [0-9.]* MiB (stack tables [0-9.]*, writer's tree [0-9.]*), process peak [0-9.]* MiB; threads waited for ring room [0-9]* times; unwinds [0-9]* fast, [0-9]* libunwind, [0-9]* differed\$" "$tmp/err"; then
		ok
	else
		ko "CGPROBE_STATS=1 with $f: one stats line"
	fi
done

# CGPROBE_UNWIND: the fast unwinder takes the stacks and agrees with
# libunwind on each (check); libunwind alone takes them all (libunwind).
run_fmt "$d/u.%p" CGPROBE_STATS=1 CGPROBE_UNWIND=check
if grep -q "; unwinds [1-9][0-9]* fast, [0-9]* libunwind, 0 differed\$" "$tmp/err"; then
	ok
else
	ko "CGPROBE_UNWIND=check: stacks unwound fast, none different: $(cat "$tmp/err")"
fi
run_fmt "$d/v.%p" CGPROBE_STATS=1 CGPROBE_UNWIND=libunwind
if grep -q "; unwinds 0 fast, [1-9][0-9]* libunwind, 0 differed\$" "$tmp/err"; then
	ok
else
	ko "CGPROBE_UNWIND=libunwind: every stack libunwind's: $(cat "$tmp/err")"
fi

# Until the reader knows the compact encoding there is nothing to check here.
probe_run "$tmp/probe" "$bin/hello"
set -- "$tmp"/probe/t.*.cgt
if [ ! -f "$1" ] || ! "$cgtrace" summary "$1" >/dev/null 2>&1; then
	echo "SKIP: cgtrace cannot read compact traces yet"
	exit 77
fi

# Each trace exports to exactly its copy: same records, same order, same bytes.
same_as_copy() {
	name=$1
	d=$2
	n=0
	bad=
	for t in "$d"/t.*.cgt; do
		[ -f "$t" ] || continue
		n=$((n + 1))
		c=${t%.cgt}.jsonl
		c=$d/c.${c##*/t.}
		if [ ! -f "$c" ]; then
			bad="$bad no copy of ${t##*/};"
		elif ! "$cgtrace" export --order stream "$t" >"$tmp/exported" 2>>"$tmp/err"; then
			bad="$bad ${t##*/} does not export;"
		elif ! cmp -s "$tmp/exported" "$c"; then
			bad="$bad ${t##*/} exports other bytes than ${c##*/} ($(cmp "$tmp/exported" "$c" 2>&1));"
		fi
	done
	copies=$(find "$d" -name 'c.*.jsonl' | wc -l)
	if [ "$n" -eq 0 ]; then
		ko "$name: no trace"
	elif [ "$copies" -ne "$n" ]; then
		ko "$name: $n traces, $copies copies"
	elif [ -n "$bad" ]; then
		ko "$name:$bad"
	else
		ok
	fi
}

i=0
for case in "threads" "threads 4 20000" "spans" "alloc-api" "forks fork" \
	"forks fork-exec $bin/hello" "forks fork-exec-empty $bin/hello" "forks fork-exec-fail"; do
	i=$((i + 1))
	# shellcheck disable=SC2086 # the case is the program and its arguments
	set -- $case
	prog=$1
	shift
	probe_run "$tmp/c$i" "$bin/$prog" "$@"
	same_as_copy "$case" "$tmp/c$i"
done

# Device memory through the fake CUDA libraries: allocations and frees of
# the runtime and driver, managed and VMM memory, checkpoints with the OOM
# request, and the device identity fields that ride as TEXT.
for prog in drv-linked drv-dlopen rt-shared-gcc rt-two-copies; do
	# Plain, then with checkpoints after each call and out-of-memory failures.
	for extra in "FAKE_CUDA_OOM_BYTES=" "FAKE_CUDA_OOM_BYTES=100000 CGPROBE_DEVICE_SNAPSHOTS=alloc"; do
		i=$((i + 1))
		if [ ! -x "$fixtures/$prog" ]; then
			skip "$prog (not built)"
			continue
		fi
		# shellcheck disable=SC2086 # extra is a list of assignments
		probe_run "$tmp/c$i" env LD_LIBRARY_PATH="$fixtures/lib" $extra "$fixtures/$prog"
		same_as_copy "$prog ($extra)" "$tmp/c$i"
	done
done
if grep -q '"cgprobe_device_uuid"' "$tmp"/c*/c.*.jsonl && grep -q '"tensor_id":"vmm:' "$tmp"/c*/c.*.jsonl &&
	grep -q '"oom_request_bytes"' "$tmp"/c*/c.*.jsonl && grep -q '"managed":true' "$tmp"/c*/c.*.jsonl; then
	ok
else
	ko "device cases: identity, VMM, OOM request and managed records all seen"
fi

# Header, meta and s1 first: the compact magic, and records a reader takes.
set -- "$tmp"/c1/t.*.cgt
if [ "$(od -An -c -N 8 "$1" | tr -d ' ')" = '211CGTRACE' ] &&
	"$cgtrace" summary "$1" >"$tmp/out" 2>"$tmp/err" && grep -q '^status  *complete' "$tmp/out"; then
	ok
else
	ko "threads: a complete compact trace"
fi

# Threads' clocks disagree by a few ns, but the trace's times never go back
# (a free stamped before the block's last record would end the block): with
# four threads at once, every record is stamped at or after the one before.
d=$tmp/order
mkdir -p "$d"
LD_PRELOAD="$probe" CGPROBE_OUTPUT="$d/t.cgt" CGPROBE_TEST_JSONL_COPY="$d/c.jsonl" \
	"$bin/threads" 4 20000 >"$tmp/out" 2>"$tmp/err"
back=$(grep -o '"timestamp_ns":[0-9]*' "$d/c.jsonl" | cut -d: -f2 |
	awk '$1 < last { n++ } { last = $1 } END { print n + 0, NR }')
if [ "${back% *}" = 0 ] && [ "${back#* }" -gt 100000 ]; then
	ok
else
	ko "threads 4 20000: times going back, and records: $back"
fi

# SIGKILL after a few flush periods: every block written reads, and holds
# the allocations made before them.
d=$tmp/killed
mkdir -p "$d"
CGPROBE_FLUSH_MS=50 LD_PRELOAD="$probe" CGPROBE_OUTPUT="$d/t.%p.cgt" "$bin/killed" \
	>"$tmp/out" 2>"$tmp/err" &
pid=$!
waited=0
while ! grep -q ' R ready$' "$tmp/out" && [ "$waited" -lt 200 ]; do
	sleep 0.05
	waited=$((waited + 1))
done
kill -9 "$pid" 2>/dev/null
wait "$pid" 2>/dev/null
killed=$d/t.$pid.cgt
if [ ! -f "$killed" ]; then
	ko "killed: no trace $killed"
elif ! "$cgtrace" summary "$killed" >"$tmp/out" 2>"$tmp/err"; then
	ko "killed: the trace does not read"
elif ! grep -q '^memory  *1,000 allocs, 500 frees' "$tmp/out"; then
	ko "killed: not the 1,000 allocations and 500 frees made before the kill: $(grep '^memory' "$tmp/out")"
else
	ok
fi

# Cut inside its last block: one warning naming the records read, exit 0.
size=$(wc -c <"$killed" | tr -d ' ')
head -c $((size - 3)) "$killed" >"$d/cut.cgt"
if "$cgtrace" summary "$d/cut.cgt" >"$tmp/out" 2>"$tmp/err" &&
	[ "$(wc -l <"$tmp/err" | tr -d ' ')" -eq 1 ] &&
	grep -q "^$d/cut.cgt: trace truncated after [0-9][0-9]* records\$" "$tmp/err"; then
	ok
else
	ko "a trace cut inside a block: one 'truncated after N records' line, exit 0"
fi

finish

#!/bin/sh
# The compact export read back: for every trace `cgtrace export` takes (the
# golden traces and the fuzz corpus), exporting it compact and that back as
# JSONL gives the JSONL export's bytes, in both orders, stored or zstd, in
# one block or one block per item; and the command's own rules (--stats,
# usage errors, no binary to a terminal).
#   test-compact-roundtrip.sh CGTRACE TRACEDIR...
set -u
# shellcheck source=tests/lib/sh-check.sh
. "$(dirname "$0")/lib/sh-check.sh"
[ $# -ge 2 ] || { echo "usage: test-compact-roundtrip.sh CGTRACE TRACEDIR..." >&2; exit 2; }
cgtrace=$(abs "$1")
shift
make_tmp

# roundtrip NAME TRACE ORDER OPTS...: compact in ORDER, back through stream
# order, against $tmp/want.ORDER (the JSONL export, made once per trace).
roundtrip() {
	name=$1 trace=$2 order=$3
	shift 3
	if "$cgtrace" export --format compact --order "$order" "$@" "$trace" >"$tmp/c" 2>"$tmp/err" &&
		"$cgtrace" export --order stream - <"$tmp/c" >"$tmp/got" 2>"$tmp/err" &&
		cmp -s "$tmp/want.$order" "$tmp/got"; then
		ok
	else
		ko "$name: $order $*"
	fi
}

# The compact options tried, one set per line; each trace meets two of them
# in each order, turn about, so every set meets a dozen traces or more
# without a sanitizer build spending minutes starting processes.
opts_set() {
	case $(($1 % 5)) in
	0) echo "" ;;
	1) echo "--level 0" ;;
	2) echo "--block-raw 1" ;;
	3) echo "--level 3 --block-raw 100" ;;
	4) echo "--level 19 --block-raw 5000" ;;
	esac
}

# A trace of many records besides: frees, and allocs of an address freed
# a moment ago, by history and by delta, VMM and
# managed allocations, class ids past 30, ids and dtypes that ride as TEXT,
# late timestamps, frees of another size, device checkpoints, pre-existing
# allocations (extension key 2).
cat >"$tmp/gen.awk" <<'AWK'
BEGIN {
	srand(7)
	print "{\"kind\":\"meta\",\"schema\":\"candle-graph/trace/6\",\"run_id\":\"r\",\"correlation_id\":\"c\",\"entrypoint\":\"e\",\"phase\":\"train\",\"timestamp\":\"2026-01-01T00:00:00Z\",\"capture_step\":1,\"warmup_steps\":0,\"device\":\"cpu\",\"timing_mode\":\"host\",\"tags\":{}}"
	split("cpu cuda:0 cuda:1", dev, " ")
	split("malloc free cudaMalloc cudaFree", ops, " ")
	split("parameter activation gradient optimizer other", cat, " ")
	for (s = 1; s <= 45; s++)
		printf "{\"kind\":\"span_start\",\"id\":\"s%d\",%s\"name\":\"n%d\",\"start_ns\":%d,\"span_kind\":\"function\",\"measured\":%s%s}\n", s, (s > 1 ? "\"parent_id\":\"s" int((s - 1) / 2 + 1) "\"," : ""), s % 7, s, (s % 2 ? "true" : "false"), (s % 3 ? "" : ",\"step\":\"forward\"")
	ts = 100; n = 0
	for (i = 0; i < 6000; i++) {
		ts += int(rand() * 1000)
		t = ts; if (rand() < 0.01) t = ts - 5000
		d = dev[1 + int(rand() * 3)]
		if (n > 0 && rand() < 0.45) {
			k = 1 + int(rand() * n); a = addr[k]; b = bytes[k]; dd = adev[k]
			if (rand() < 0.02) b = b + 1
			addr[k] = addr[n]; bytes[k] = bytes[n]; adev[k] = adev[n]; n--
			nf++; freed[nf] = a
			printf "{\"kind\":\"memory\",\"timestamp_ns\":%d,\"tensor_id\":\"%s\",\"span_id\":\"s%d\",\"op_name\":\"free\",\"device\":\"%s\",\"bytes\":%d,\"action\":\"free\",\"shape\":[%d],\"dtype\":\"u8\",\"category\":\"%s\"%s}\n", t, a, 1 + int(rand() * 45), dd, b, b, cat[1 + int(rand() * 5)], modules()
		} else {
			b = int(rand() * 100000)
			r = rand()
			if (r < 0.05) a = "t" i; else if (r < 0.15) a = sprintf("vmm:0x%x", 4096 * i); else a = sprintf("0x%x", 65536 + 64 * int(rand() * 100000))
			if (r >= 0.15 && nf > 0 && rand() < 0.4) { k = nf - int(rand() * (nf < 8 ? nf : 8)); a = freed[k] }
			n++; addr[n] = a; bytes[n] = b; adev[n] = d
			op = rand() < 0.1 ? "" : ",\"op_name\":\"" ops[1 + int(rand() * 4)] "\""
			printf "{\"kind\":\"memory\",\"timestamp_ns\":%d,\"tensor_id\":\"%s\",\"span_id\":\"s%d\"%s,\"device\":\"%s\",\"bytes\":%d,\"action\":\"alloc\",\"shape\":[%d],\"dtype\":\"%s\",\"category\":\"%s\"%s%s%s%s}\n", t, a, 1 + int(rand() * 45), op, d, b, b, rand() < 0.03 ? "f32" : "u8", cat[1 + int(rand() * 5)], rand() < 0.05 ? ",\"managed\":true" : "", rand() < 0.05 ? ",\"cgprobe_preexisting\":true" : "", stack(), modules()
		}
		if (rand() < 0.02)
			printf "{\"kind\":\"device_memory\",\"timestamp_ns\":%d,\"device\":\"cuda:0\",\"used_bytes\":%d,\"free_bytes\":%d%s%s}\n", ts, i * 7, 1000000 - i, rand() < 0.5 ? ",\"reserved_bytes\":" i : "", rand() < 0.1 ? ",\"oom_request_bytes\":99" : ""
	}
	for (s = 45; s >= 1; s--)
		printf "{\"kind\":\"span_end\",\"id\":\"s%d\",\"duration_ns\":%d}\n", s, ts
}
# docs/stacks.md: most allocs name one of 80 stacks, its frames on the first;
# now and then a record carries modules.
function stack(   st, n, f, k) {
	if (rand() < 0.3)
		return ""
	st = 1 + int(rand() * 80)
	if (st in defined)
		return ",\"cgprobe_stack\":" st
	defined[st] = 1
	n = 1 + int(rand() * 6); f = ""
	for (k = 0; k < n; k++)
		f = f (k ? "," : "") sprintf("\"0x%x\"", 4198400 + int(rand() * 1000000))
	return ",\"cgprobe_stack\":" st ",\"cgprobe_stack_frames\":[" f "]"
}
function modules(   m) {
	if (rand() >= 0.01)
		return ""
	nm++
	m = sprintf("{\"path\":\"/lib/l%d.so\",\"base\":\"0x%x\",\"start\":\"0x%x\",\"end\":\"0x%x\"%s}", nm, 4096 * nm, 4096 * nm + 16, 4096 * nm + 4000, nm % 2 ? ",\"build_id\":\"ab12\"" : "")
	return ",\"cgprobe_modules\":[" m (nm % 3 ? "" : "," m) "]"
}
AWK
mkdir "$tmp/gen" && awk -f "$tmp/gen.awk" >"$tmp/gen/many.jsonl" || exit 1
"$cgtrace" export "$tmp/gen/many.jsonl" >"$tmp/many.out" 2>"$tmp/err" && ok || ko "generated trace read"
# The export keeps the mark.
[ "$(grep -c '"cgprobe_preexisting":true' "$tmp/many.out")" -gt 10 ] && ok ||
	ko "pre-existing marks kept by export"

n=0
for dir in "$@" "$tmp/gen"; do
	for trace in "$dir"/*; do
		[ -f "$trace" ] || continue
		# Only what the JSONL export takes.
		"$cgtrace" export "$trace" >/dev/null 2>&1 || continue
		name=$(basename "$trace")
		n=$((n + 1))
		for order in stream canonical; do
			"$cgtrace" export --order "$order" "$trace" >"$tmp/want.$order" 2>/dev/null
			for k in 0 2; do
				# shellcheck disable=SC2046 # the options split on purpose
				roundtrip "$name" "$trace" "$order" $(opts_set $((n + k)))
			done
		done
	done
done
[ "$n" -gt 10 ] && ok || ko "only $n traces found in $*"

trace=$1/train.jsonl
[ -f "$trace" ] || trace=$(ls "$1"/*.jsonl | head -n 1)

# -o FILE, read back by path rather than from a pipe.
"$cgtrace" export "$trace" >"$tmp/want" 2>/dev/null
rm -f "$tmp/file.cgt"
if "$cgtrace" export --format compact -o "$tmp/file.cgt" "$trace" 2>"$tmp/err" &&
	"$cgtrace" export "$tmp/file.cgt" >"$tmp/got" 2>"$tmp/err" && cmp -s "$tmp/want" "$tmp/got"
then ok; else ko "-o FILE read back by path"; fi

# validate words a cut for the encoding: a compact trace has no lines, it is
# cut inside a block, after the records of its whole blocks (the warning's N).
"$cgtrace" export --format compact --block-raw 200 "$trace" >"$tmp/blocks.cgt" 2>"$tmp/err"
size=$(wc -c <"$tmp/blocks.cgt")
head -c $((size - 5)) "$tmp/blocks.cgt" >"$tmp/cut.cgt"
if "$cgtrace" validate "$tmp/cut.cgt" >"$tmp/out" 2>"$tmp/err"; then
	n=$(sed -n 's/.*trace truncated after \([0-9]*\) records$/\1/p' "$tmp/err")
	[ -n "$n" ] && [ "$n" -gt 0 ] &&
		grep -q "records (cut inside a block after $n records; the rest ignored)\$" "$tmp/out" &&
		! grep -q "last line" "$tmp/out" && ok ||
		{ cat "$tmp/out" >>"$tmp/err"; ko "validate of a cut compact trace"; }
else
	ko "validate of a cut compact trace"
fi
"$cgtrace" export "$trace" >"$tmp/whole.jsonl" 2>/dev/null
size=$(wc -c <"$tmp/whole.jsonl")
head -c $((size - 5)) "$tmp/whole.jsonl" >"$tmp/cut.jsonl"
"$cgtrace" validate "$tmp/cut.jsonl" 2>"$tmp/err" | grep -q "(last line cut short and ignored)\$" &&
	ok || ko "validate of a cut JSONL trace"

# A compact trace is smaller than its JSONL.
[ "$(wc -c <"$tmp/file.cgt")" -lt "$(wc -c <"$tmp/want")" ] && ok || ko "compact not smaller"

# --stats: a line per field on stderr, the output unchanged.
if "$cgtrace" export --format compact --stats "$trace" >"$tmp/c" 2>"$tmp/stats" &&
	cmp -s "$tmp/c" "$tmp/file.cgt" &&
	grep -q "zstd level 1" "$tmp/stats" &&
	grep -q '^timestamp ' "$tmp/stats" && grep -q '^address ' "$tmp/stats" &&
	grep -q '^total ' "$tmp/stats"
then ok; else cp "$tmp/stats" "$tmp/err"; ko "--stats"; fi

# The header's in-order flag (bit 0) is a hint: set on a trace whose memory
# records go back in time, the streamed read notices, falls back and says so;
# set on one in order, it changes nothing. Either way the answers are those
# of the unflagged trace.
flag_in_order() {
	cp "$1" "$2" && printf '\001' | dd of="$2" bs=1 seek=12 conv=notrunc 2>/dev/null
}
note='out of timestamp order; analysed in memory'
sed 's/if (rand() < 0.01) t = ts - 5000/rand()/' "$tmp/gen.awk" >"$tmp/sorted.awk"
awk -f "$tmp/sorted.awk" >"$tmp/sorted.jsonl" || exit 1
for trace in many sorted; do
	in=$tmp/gen/many.jsonl
	[ $trace = sorted ] && in=$tmp/sorted.jsonl
	mkdir -p "$tmp/plain" "$tmp/flag"
	"$cgtrace" export --format compact "$in" >"$tmp/plain/t.cgt" 2>/dev/null
	flag_in_order "$tmp/plain/t.cgt" "$tmp/flag/t.cgt"
	same=1
	for cmd in summary "memory --json" "timeline --csv"; do
		# shellcheck disable=SC2086 # the command splits on purpose
		(cd "$tmp/plain" && "$cgtrace" $cmd t.cgt) >"$tmp/want" 2>/dev/null
		# shellcheck disable=SC2086
		(cd "$tmp/flag" && "$cgtrace" $cmd t.cgt) >"$tmp/got" 2>"$tmp/err"
		cmp -s "$tmp/want" "$tmp/got" || same=0
	done
	"$cgtrace" summary "$tmp/flag/t.cgt" >/dev/null 2>"$tmp/err"
	if [ $trace = many ]; then grep -q "$note" "$tmp/err"; else ! grep -q . "$tmp/err"; fi
	[ $? -eq 0 ] && [ $same = 1 ] && ok || ko "in-order flag on the $trace trace"
done

# Usage errors exit 2.
for args in "--stats" "--level 1" "--format compact --level 99" "--format compact --level x" \
	"--format compact --block-raw 0" "--format csv"; do
	# shellcheck disable=SC2086 # the arguments split on purpose
	"$cgtrace" export $args "$trace" >/dev/null 2>"$tmp/err"
	[ $? -eq 2 ] && ok || ko "usage error: $args"
done

# Never binary to a terminal (checked where script(1) can give one).
if command -v script >/dev/null 2>&1; then
	script -qec "'$cgtrace' export --format compact '$trace'; echo status=\$?" /dev/null \
		>"$tmp/tty" 2>&1
	grep -q "terminal" "$tmp/tty" && grep -q "status=2" "$tmp/tty" &&
		! grep -q CGTRACE "$tmp/tty" && ok ||
		{ cp "$tmp/tty" "$tmp/err"; ko "compact to a terminal"; }
else
	skip "compact to a terminal (no script(1))"
fi
finish

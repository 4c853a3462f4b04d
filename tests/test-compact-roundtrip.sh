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
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

# roundtrip NAME TRACE ORDER OPTS...: compact in ORDER, back through stream order.
roundtrip() {
	name=$1 trace=$2 order=$3
	shift 3
	"$cgtrace" export --order "$order" "$trace" >"$tmp/want" 2>/dev/null
	if "$cgtrace" export --format compact --order "$order" "$@" "$trace" >"$tmp/c" 2>"$tmp/err" &&
		"$cgtrace" export --order stream - <"$tmp/c" >"$tmp/got" 2>"$tmp/err" &&
		cmp -s "$tmp/want" "$tmp/got"; then
		ok
	else
		ko "$name: $order $*"
	fi
}

n=0
for dir in "$@"; do
	for trace in "$dir"/*; do
		[ -f "$trace" ] || continue
		# Only what the JSONL export takes.
		"$cgtrace" export "$trace" >/dev/null 2>&1 || continue
		name=$(basename "$trace")
		n=$((n + 1))
		for order in stream canonical; do
			roundtrip "$name" "$trace" "$order"
			roundtrip "$name" "$trace" "$order" --level 0
			roundtrip "$name" "$trace" "$order" --block-raw 1
			roundtrip "$name" "$trace" "$order" --level 3 --block-raw 100
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

# A compact trace is smaller than its JSONL.
[ "$(wc -c <"$tmp/file.cgt")" -lt "$(wc -c <"$tmp/want")" ] && ok || ko "compact not smaller"

# --stats: a line per field on stderr, the output unchanged.
if "$cgtrace" export --format compact --stats "$trace" >"$tmp/c" 2>"$tmp/stats" &&
	cmp -s "$tmp/c" "$tmp/file.cgt" &&
	grep -q "zstd level 1" "$tmp/stats" &&
	grep -q '^timestamp ' "$tmp/stats" && grep -q '^address ' "$tmp/stats" &&
	grep -q '^total ' "$tmp/stats"
then ok; else cp "$tmp/stats" "$tmp/err"; ko "--stats"; fi

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

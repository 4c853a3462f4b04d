#!/bin/sh
# SPDX-License-Identifier: MIT
# Compares two cgtrace builds command by command on traces: the streamed
# analyses (summary, memory, validate, timeline) against an older build that
# read documents in full. Output and exit status must match, from a file, a
# pipe and a regular stdin; the one line a streamed read adds when it falls
# back ("... out of timestamp order; analysed in memory") is left out.
#   stream-agree.sh NEW_CGTRACE OLD_CGTRACE TRACE...
# e.g. tests/stream-agree.sh build/cgtrace/cgtrace /work/main/build/cgtrace/cgtrace \
#        tests/golden/traces/* tests/fuzz/corpus/*   (run from the source root)
set -u
[ $# -ge 3 ] || { echo "usage: $0 NEW_CGTRACE OLD_CGTRACE TRACE..." >&2; exit 2; }
new=$1
old=$2
shift 2
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
note='out of timestamp order; analysed in memory'
# out HOW CGTRACE TRACE ARGS...: stdout, stderr and status of one run, the note left out
out() {
	how=$1
	bin=$2
	f=$3
	shift 3
	case $how in
	file) "$bin" "$@" "$f" >"$tmp/o" 2>&1 ;;
	pipe) (cat "$f" | "$bin" "$@" -) >"$tmp/o" 2>&1 ;;
	stdin) "$bin" "$@" - <"$f" >"$tmp/o" 2>&1 ;;
	esac
	echo "status $?" >>"$tmp/o"
	grep -v "$note" "$tmp/o"
}
n=0
fail=0
for f in "$@"; do
	while read -r args; do
		for how in file pipe stdin; do
			# shellcheck disable=SC2086
			a=$(out $how "$new" "$f" $args)
			# shellcheck disable=SC2086
			b=$(out $how "$old" "$f" $args)
			n=$((n + 1))
			if [ "$a" != "$b" ]; then
				echo "differs ($how): cgtrace $args $f"
				fail=$((fail + 1))
			fi
		done
	done <<'CMDS'
summary
summary --json
summary --brief --bytes
memory --json
memory --top 0 --bytes
validate
timeline --csv
timeline --device cuda:0 --csv
timeline --rows 5 --bytes
CMDS
done
echo "$n compared, $fail differ"
[ "$fail" -eq 0 ]

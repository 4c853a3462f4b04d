#!/bin/sh
# SPDX-License-Identifier: MIT
#
# heaptrack-agree.sh CGTRACE LIBCGPROBE AGREE
#
# Runs tests/preload/agree (a deterministic single-threaded workload that
# reports its own allocation count and peak) under cgprobe and under
# heaptrack, and checks that the two profilers agree with each other and
# with what the program knows it did.  Exit 0 on agreement, 1 on
# disagreement or error, 77 (skip) when heaptrack is not installed or cannot
# run here.
#
# What each tool counts (found by experiment with heaptrack 1.4 and the
# source of heaptrack_print):
#
# * heaptrack "calls to allocation functions" counts malloc, calloc,
#   realloc (each realloc is a free plus an allocation), posix_memalign and
#   friends, for the whole process.  Besides the program's own calls it sees
#   one more: the 72,704-byte emergency exception pool that libstdc++
#   allocates in its constructor.  libstdc++ is only in the process because
#   libheaptrack_preload.so is C++, so that block is heaptrack's overhead,
#   and it is never freed, so it also sits under heaptrack's peak.  The
#   dynamic loader's own early allocations are seen by neither tool.
# * cgprobe's alloc_count counts the same calls (realloc as an alloc record
#   after a free record), but its own allocations never reach the trace; for
#   agree it equals the program's own count, and peak_bytes its own peak.
# * heaptrack_print writes the peak with two decimals in decimal units:
#   B, K (1e3), M (1e6), G (1e9), T (1e12) -- "9.37M" is 9,370,000 +- 5,000.
#
# So the comparison is:
#   counts  both tools see at least the program's own calls, each is within
#           1% of them, and cgprobe is within 1% of heaptrack;
#   peaks   both tools see at least the program's own peak (heaptrack's less
#           its print rounding), each is within 2% of it, and cgprobe is
#           within 2% of heaptrack.
# The program's figures are exact; the tolerances absorb what a libc or a
# profiler runtime allocates behind the program's back (the libstdc++ pool
# above is 0.01% of the calls and 0.8% of the peak).

set -u

if [ "$#" -ne 3 ]; then
	echo "usage: $0 CGTRACE LIBCGPROBE AGREE" >&2
	exit 1
fi
cgtrace=$1 probe=$2 agree=$3

skip() {
	echo "SKIP: $*"
	echo "0 passed, 0 failed, 1 skipped"
	exit 77
}

heaptrack=${HEAPTRACK:-heaptrack}
heaptrack_print=${HEAPTRACK_PRINT:-heaptrack_print}
command -v "$heaptrack" >/dev/null 2>&1 || skip "heaptrack not installed"
command -v "$heaptrack_print" >/dev/null 2>&1 || skip "heaptrack_print not installed"
for f in "$cgtrace" "$probe" "$agree"; do
	if [ ! -e "$f" ]; then
		echo "FAIL: $f not found"
		echo "0 passed, 1 failed"
		exit 1
	fi
done
# An ASan build's agree cannot run behind either preloaded allocator.
if grep -q __asan_init "$agree"; then
	skip "agree is built with AddressSanitizer"
fi

dir=$(mktemp -d "${TMPDIR:-/tmp}/heaptrack-agree.XXXXXX") || exit 1
trap 'rm -rf "$dir"' EXIT
trap 'exit 1' INT TERM
# Nothing inherited may preload into or steer either run.
unset LD_PRELOAD CGPROBE_QUIET CGPROBE_MIN_BYTES CGPROBE_ONLY CGPROBE_FOLLOW \
	CGPROBE_FLUSH_MS CGPROBE_TAGS CGPROBE_ENTRYPOINT CGPROBE_PHASE \
	CGPROBE_CAPTURE_STEP CGPROBE_CORRELATION_ID CGPROBE_DEVICE CGPROBE_MANIFEST

fail() {
	echo "FAIL: $*"
	echo "0 passed, 1 failed"
	exit 1
}

# field NAME LINE: the number after NAME= in the program's report.
field() {
	printf '%s\n' "$2" | sed -n "s/.*[ ]$1=\\([0-9][0-9]*\\).*/\\1/p"
}

# The program alone: its own figures.
own=$("$agree") || fail "agree exited $? natively"
own_allocs=$(field allocs "$own")
own_peak=$(field peak "$own")
if [ -z "$own_allocs" ] || [ -z "$own_peak" ]; then
	fail "agree printed no figures: $own"
fi

# Under cgprobe.
LD_PRELOAD=$probe CGPROBE_OUTPUT="$dir/cgprobe.%e.%p.jsonl" "$agree" >"$dir/cg.out" 2>"$dir/cg.err" ||
	fail "agree exited $? under cgprobe: $(cat "$dir/cg.err")"
cmp -s "$dir/cg.out" - <<EOF || fail "agree printed differently under cgprobe: $(cat "$dir/cg.out")"
$own
EOF
set -- "$dir"/cgprobe.*.jsonl
if [ "$#" -ne 1 ] || [ ! -f "$1" ]; then
	fail "expected one cgprobe trace, found: $*"
fi
cg_trace=$1
"$cgtrace" validate "$cg_trace" >"$dir/validate.out" 2>&1 ||
	fail "cgtrace validate: $(cat "$dir/validate.out")"
cg_json=$("$cgtrace" summary --json "$cg_trace") || fail "cgtrace summary failed"
cg_allocs=$(printf '%s\n' "$cg_json" | sed -n 's/.*"alloc_count":\([0-9][0-9]*\).*/\1/p')
cg_peak=$(printf '%s\n' "$cg_json" | sed -n 's/.*"peak_bytes":\([0-9][0-9]*\).*/\1/p')
if [ -z "$cg_allocs" ] || [ -z "$cg_peak" ]; then
	fail "no alloc_count/peak_bytes in: $cg_json"
fi

# Under heaptrack.
if ! "$heaptrack" -o "$dir/ht" "$agree" >"$dir/heaptrack.log" 2>&1; then
	cat "$dir/heaptrack.log"
	skip "heaptrack could not run agree here"
fi
# ht.zst or ht.gz, by how heaptrack was built.
set -- "$dir"/ht.*
if [ ! -f "$1" ]; then
	cat "$dir/heaptrack.log"
	skip "heaptrack wrote no data file"
fi
"$heaptrack_print" -f "$1" >"$dir/print.txt" 2>&1 || fail "heaptrack_print: $(tail -5 "$dir/print.txt")"
ht_allocs=$(sed -n 's/^calls to allocation functions: \([0-9][0-9]*\).*/\1/p' "$dir/print.txt")
ht_peak_text=$(sed -n 's/^peak heap memory consumption: *\([0-9.]*[BKMGT]\).*/\1/p' "$dir/print.txt")
if [ -z "$ht_allocs" ] || [ -z "$ht_peak_text" ]; then
	fail "cannot read heaptrack_print's summary: $(tail -8 "$dir/print.txt")"
fi

# heaptrack's "9.37M" as bytes, and the rounding that hides behind it.
read -r ht_peak ht_round <<EOF
$(printf '%s\n' "$ht_peak_text" | awk '{
	u = substr($0, length($0), 1); v = substr($0, 1, length($0) - 1)
	m = u == "K" ? 1e3 : u == "M" ? 1e6 : u == "G" ? 1e9 : u == "T" ? 1e12 : 1
	printf "%.0f %.0f\n", v * m, u == "B" ? 0 : m * 0.005 }')
EOF

# within A B PCT: |A - B| <= PCT% of B.
within() {
	awk -v a="$1" -v b="$2" -v p="$3" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= b * p / 100) }'
}
# atleast A B SLACK: A >= B - SLACK.
atleast() {
	awk -v a="$1" -v b="$2" -v s="$3" 'BEGIN { exit !(a + s >= b) }'
}
pct() {
	awk -v a="$1" -v b="$2" 'BEGIN { printf "%+.3f%%", b ? (a - b) * 100 / b : 0 }'
}

printf '%-22s %12s %12s %18s\n' "" agree cgprobe heaptrack
printf '%-22s %12s %12s %18s\n' "allocation calls" "$own_allocs" "$cg_allocs" "$ht_allocs"
printf '%-22s %12s %12s %18s\n' "peak bytes" "$own_peak" "$cg_peak" "$ht_peak ($ht_peak_text)"
printf '%-22s %12s %12s %18s\n' "  vs agree, calls" "" "$(pct "$cg_allocs" "$own_allocs")" "$(pct "$ht_allocs" "$own_allocs")"
printf '%-22s %12s %12s %18s\n' "  vs agree, peak" "" "$(pct "$cg_peak" "$own_peak")" "$(pct "$ht_peak" "$own_peak")"
printf '%-22s %12s %12s\n' "cgprobe vs heaptrack" calls "$(pct "$cg_allocs" "$ht_allocs")"
printf '%-22s %12s %12s\n' "" peak "$(pct "$cg_peak" "$ht_peak")"

bad=
check() {
	if ! "$@"; then
		bad="$bad
  failed: $*"
	fi
}
check atleast "$cg_allocs" "$own_allocs" 0
check atleast "$ht_allocs" "$own_allocs" 0
check within "$cg_allocs" "$own_allocs" 1
check within "$ht_allocs" "$own_allocs" 1
check within "$cg_allocs" "$ht_allocs" 1
check atleast "$cg_peak" "$own_peak" 0
check atleast "$ht_peak" "$own_peak" "$ht_round"
check within "$cg_peak" "$own_peak" 2
check within "$ht_peak" "$own_peak" 2
check within "$cg_peak" "$ht_peak" 2

if [ -n "$bad" ]; then
	echo "FAIL: the profilers disagree:$bad"
	echo "heaptrack_print summary:"
	tail -6 "$dir/print.txt"
	echo "0 passed, 1 failed"
	exit 1
fi
echo "1 passed, 0 failed"

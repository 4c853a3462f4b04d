#!/bin/sh
# SPDX-License-Identifier: MIT
#
# How long CI takes (issue 10: within 90 minutes on 2 cores): a clean clone
# of the source tree's HEAD (committed work only) in a temporary directory,
# then `scripts/setup.sh` (which installs only the Debian packages that are
# missing, so an apt step is there only on a machine that lacks them) and
# `scripts/test.sh` there, each timed, beside the machine conditions.
# CGPROBE_FUZZ_SECONDS is passed on as it is (scripts/test.sh: 60 unless set).
#
#   bench/ci-time.sh [COMMAND]
#
# COMMAND, run by sh in the clone instead of the two scripts, times something
# else the same way (`bench/ci-time.sh 'meson setup b && ninja -C b'`).
# The clone is removed at the end; its log is printed when a step fails.
# Exit status: 0 once the time is printed; the failing step's status
# otherwise.

bench_name="ci-time"
# shellcheck source=bench/bench-env.sh
. "$(dirname -- "$0")/bench-env.sh"

bench_help "$0" "${1:-}"
[ $# -le 1 ] || die "usage: $0 [COMMAND]"
command -v git >/dev/null 2>&1 || die "missing git"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/ci-time.XXXXXX") || die "cannot create a temporary directory"
trap 'rm -rf -- "$tmp"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

git clone -q --no-hardlinks "$src_dir" "$tmp/cgprobe" || die "git clone of $src_dir failed"
clone_rev=$(git -C "$tmp/cgprobe" log -1 --format='%h %s')
bench_conditions "$tmp"
echo "clone        $clone_rev"
echo "fuzzing      CGPROBE_FUZZ_SECONDS=${CGPROBE_FUZZ_SECONDS-60 (unset: scripts/test.sh default)}"
echo

# step LABEL COMMAND: runs COMMAND in the clone; prints and adds its minutes.
total=0
step() {
	log=$tmp/$(printf '%s' "$1" | tr -c 'A-Za-z0-9.-' _).log
	t0=$(now_ns)
	rc=0
	(cd "$tmp/cgprobe" && sh -c "$2") >"$log" 2>&1 || rc=$?
	s=$(seconds_since "$t0")
	total=$(awk -v a="$total" -v b="$s" 'BEGIN { printf "%.3f", a + b }')
	printf '%-22s %8.1f min  (%s s)%s\n' "$1" "$(awk -v s="$s" 'BEGIN { print s / 60 }')" "$s" \
		"$([ "$rc" = 0 ] || echo "  FAILED with status $rc")"
	if [ "$rc" != 0 ]; then
		tail -n 40 "$log"
		exit "$rc"
	fi
}

if [ $# = 1 ]; then
	step "command" "$1"
else
	step "scripts/setup.sh" scripts/setup.sh
	apt=no
	grep -q '^setup: installing' "$log" && apt=yes
	echo "  (apt-get ran: $apt)"
	step "scripts/test.sh" scripts/test.sh
fi
awk -v t="$total" -v n="$(nproc)" 'BEGIN {
	printf "CI total %.1f min on %s cores: target <= 90 min %s\n", t / 60, n, t <= 5400 ? "PASS" : "FAIL"
}'
bench_load
exit 0

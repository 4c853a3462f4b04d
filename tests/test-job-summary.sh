#!/bin/sh
# SPDX-License-Identifier: MIT
# cgtrace summary of a job (docs/jobs.md): the folder tests/jobs/make-job.py
# writes, read as one. Each process's row in tree order on one time axis,
# the small ones folded (their ancestors kept), the machine's sum with a
# fork child's inherited block counted once, the GPU's exact sum and its
# shares; the same in JSON; one reading thread or two; a bad trace named,
# exit 1, the others still answered.
#   test-job-summary.sh CGTRACE
set -u
# shellcheck source=tests/lib/sh-check.sh
. "$(dirname "$0")/lib/sh-check.sh"
need_args 1 "test-job-summary.sh CGTRACE" "$@"
cgtrace=$(abs "$1")
here=$(cd "$(dirname "$0")" && pwd)
make_tmp
command -v python3 >/dev/null 2>&1 || { echo "SKIP: no python3"; exit 77; }
job=$tmp/job
python3 "$here/jobs/make-job.py" "$job" || exit 1

"$cgtrace" summary "$job" >"$tmp/out" 2>"$tmp/err" && ok || ko "summary DIR"
has() { grep -q -- "$1" "$tmp/out" && ok || { cp "$tmp/out" "$tmp/err"; ko "$2"; }; }
has '^job  *7 traces, 1 machine, 12.000 ms' "the job's head"
has "one boot's monotonic clock: times are exact" "one boot: exact"
# Tree order: the launcher, rank 0, its worker (deeper), rank 1.
awk '/^[ 0-9]/ && $1 ~ /^[0-9]+$/ { printf "%s ", $1 }' "$tmp/out" >"$tmp/order"
[ "$(cat "$tmp/order")" = "100 101 103 102 " ] && ok || { cp "$tmp/order" "$tmp/err"; ko "tree order"; }
has '^    103        101     0 ' "the fork child indented under rank 0"
has '^  101 .* 1.2 MiB  10.000 ms  256.0 KiB  python3 train.py --epochs 1$' "rank 0's row on the job's axis"
has 'cuda:1 .* 2.0 MiB   5.000 ms .* GPU-aa$' "rank 1's GPU line on the job's axis"
has '(fork) python3 train.py' "a fork child says so"
has '^\.\.\. and 3 processes with a peak under 64.0 KiB, 3.0 KiB of peaks in all$' "small processes folded"
has '^node1  *7  *1.4 MiB  258.0 KiB$' "the machine's sums"
has '^  peak 5.0 MiB at 5.000 ms, 2 processes on it$' "the GPU's exact peak"
has '^  rank 0 (pid 101)  *3.0 MiB$' "rank 0's share"
has '^  rank 1 (pid 102)  *2.0 MiB$' "rank 1's share"

# --fold 0: every process; the tiny ones under the launcher.
"$cgtrace" summary --fold 0 "$job" >"$tmp/out" 2>"$tmp/err" && ok || ko "--fold 0"
[ "$(grep -c "sh -c 'a | b'" "$tmp/out")" -eq 3 ] && ! grep -q '^\.\.\. and' "$tmp/out" && ok ||
	{ cp "$tmp/out" "$tmp/err"; ko "--fold 0 shows every process"; }

# Listed traces are the same job as their folder; two threads the same answer.
"$cgtrace" summary "$job" >"$tmp/dir.out" 2>/dev/null
"$cgtrace" summary "$job"/*.jsonl >"$tmp/list.out" 2>"$tmp/err" &&
	cmp -s "$tmp/dir.out" "$tmp/list.out" && ok || ko "TRACE... equals DIR"
"$cgtrace" summary --jobs 2 "$job" >"$tmp/j2.out" 2>"$tmp/err" &&
	cmp -s "$tmp/dir.out" "$tmp/j2.out" && ok || ko "--jobs 2 equals one thread"

# JSON: every process, the tree, the sums.
"$cgtrace" summary --json "$job" >"$tmp/json" 2>"$tmp/err" && ok || ko "--json"
python3 - "$tmp/json" >"$tmp/err" 2>&1 <<'PY' && ok || ko "JSON figures"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["process_count"] == 7 and j["error_count"] == 0, j
by_pid = {p["pid"]: p for p in j["processes"]}
assert by_pid[103]["forked_from"] == 101 and by_pid[103]["parent"] is not None
assert j["processes"][by_pid[103]["parent"]]["pid"] == 101
assert by_pid[101]["rank"] == 0 and by_pid[101]["rank_source"] == "RANK"
assert by_pid[101]["world_size"] == 2 and by_pid[101]["leaked_bytes"] == 256 * 1024
assert by_pid[103]["devices"][0]["inherited_at_peak"] == 1 << 20
assert by_pid[102]["start_ns"] == 2_000_000
order = [j["processes"][i]["pid"] for i in j["tree"]]
assert [p for p in order if p < 104] == [100, 101, 103, 102], order
assert len(order) == 7
g = j["gpus"][0]
assert g["uuid"] == "GPU-aa" and g["peak_bytes"] == 5 << 20 and g["peak_ns"] == 5_000_000, g
assert sorted(s["bytes"] for s in g["shares"]) == [2 << 20, 3 << 20]
m = j["machines"][0]
assert m["host_peak_sum_bytes"] == 2048 + (1 << 20) + (256 << 10) + (100 << 10) + 3 * 1024, m
PY

# A bad trace: its line, exit 1, the others still summed.
printf '{"kind":"meta"}\n' >"$job/broken.jsonl"
"$cgtrace" summary "$job" >"$tmp/out" 2>"$tmp/err"
st=$?
[ $st -eq 1 ] && grep -q "broken.jsonl:1: " "$tmp/err" && grep -q '^unreadable  *.*broken.jsonl:1: ' "$tmp/out" &&
	grep -q 'peak 5.0 MiB at 5.000 ms' "$tmp/out" && ok || ko "a bad trace in the job (status $st)"
rm -f "$job/broken.jsonl"

# A device-heavy job (150 000 moments a rank, about 700 KiB of series):
# its series pass the 256 KiB a job holds in memory and
# go to a file; the sum's peak is still the one worked out independently.
mkdir "$tmp/heavy"
want=$(python3 "$here/jobs/make-gpu-heavy.py" "$tmp/heavy" 150000) || exit 1
"$cgtrace" summary --json "$tmp/heavy" >"$tmp/heavy.json" 2>"$tmp/err" &&
	python3 -c 'import json, sys
g = json.load(open(sys.argv[1]))["gpus"][0]
print(g["peak_bytes"], g["peak_ns"])' "$tmp/heavy.json" >"$tmp/got" 2>>"$tmp/err" &&
	[ "$(cat "$tmp/got")" = "$want" ] && ok || { echo "want $want got $(cat "$tmp/got")" >>"$tmp/err"; ko "a device-heavy job's exact sum"; }

# Usage: --brief takes one trace; an empty folder says so.
"$cgtrace" summary --brief "$job" >/dev/null 2>"$tmp/err"
[ $? -eq 2 ] && grep -q -- "--brief takes one TRACE" "$tmp/err" && ok || ko "--brief of a job"
mkdir "$tmp/empty"
"$cgtrace" summary "$tmp/empty" >/dev/null 2>"$tmp/err"
[ $? -eq 1 ] && grep -q "empty: no traces in this folder" "$tmp/err" && ok || ko "an empty folder"
finish

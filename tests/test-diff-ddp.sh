#!/bin/sh
# SPDX-License-Identifier: MIT
# cgtrace diff and check on two runs of a real job (docs/compare.md): the
# two-rank DistributedDataParallel run of tests/jobs/ddp_train.py under one
# wrapper, the second run holding 32 MiB more on rank 1 (its line marked
# EXTRA). diff must show rank 1's host peak 32 MiB higher and rank 0's
# about the same, and the EXTRA line as the site that changed most, by
# exactly 32 MiB; the line both runs hold alike (rank 1's 16 MiB) must not
# change, though the runs' addresses differ: sites match by their frames.
# check with a limit between the runs' rank 1 peaks (a rules file) passes
# the first run and fails the second, exit 1, naming rank 1 and its top
# site at the peak, in text and in a JUnit report xml.etree parses;
# --baseline with --max-increase 10 fails the second against the first,
# naming the EXTRA line as the site that rose most, and passes the first
# against itself. A third run of the script moved three lines down:
# diff --by function matches its sites to the base's, by line it cannot.
# Skipped (77) without /usr/bin/python3 and torch.
#   test-diff-ddp.sh CGTRACE CGPROBE
set -u
# shellcheck source=tests/lib/sh-check.sh
. "$(dirname "$0")/lib/sh-check.sh"
need_args 2 "test-diff-ddp.sh CGTRACE CGPROBE" "$@"
cgtrace=$(abs "$1")
cgprobe=$(abs "$2")
here=$(cd "$(dirname "$0")" && pwd)
py=/usr/bin/python3
[ -x "$py" ] && "$py" -c 'import torch.distributed' 2>/dev/null ||
	{ echo "SKIP: no /usr/bin/python3 with torch"; exit 77; }
make_tmp
port() { "$py" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
extra_line=$(grep -n '# EXTRA$' "$here/jobs/ddp_train.py" | cut -d: -f1)
hold_line=$(grep -n '^    hold = ' "$here/jobs/ddp_train.py" | cut -d: -f1)

mkdir "$tmp/w"
cd "$tmp/w" || exit 1
"$cgprobe" -q -o "$tmp/base/" "$py" "$here/jobs/ddp_train.py" spawn "$(port)" \
	>"$tmp/out" 2>"$tmp/err" && ok || ko "the base run under the wrapper"
"$cgprobe" -q -o "$tmp/new/" "$py" "$here/jobs/ddp_train.py" spawn "$(port)" 32 \
	>"$tmp/out" 2>"$tmp/err" && ok || ko "the new run (32 MiB more on rank 1) under the wrapper"

"$cgtrace" diff "$tmp/base" "$tmp/new" >"$tmp/diff.txt" 2>"$tmp/err" && ok || ko "diff"
"$cgtrace" diff --json -n 0 "$tmp/base" "$tmp/new" >"$tmp/diff.json" 2>"$tmp/err" && ok ||
	ko "diff --json"
# The text: rank 1's peak row, and the first site row.
grep -Eq '^rank 1 +cpu +peak +[0-9.]+ MiB +[0-9.]+ MiB +\+3[12]\.[0-9] MiB +\+[0-9.]+%$' \
	"$tmp/diff.txt" && ok || ko "diff: no +32 MiB peak row for rank 1: $(grep '^rank 1 .* peak ' "$tmp/diff.txt")"
first=$(sed -n '/^sites by bytes at the peak/{n;n;p;q}' "$tmp/diff.txt")
case $first in
"rank 1 "*" +32.0 MiB "*"(ddp_train.py:$extra_line)") ok ;;
*) ko "diff: the first site is not rank 1's EXTRA line, +32.0 MiB: $first" ;;
esac
"$py" - "$tmp/diff.json" "$extra_line" "$hold_line" >"$tmp/err" 2>&1 <<'PY' && ok ||
	ko "diff --json: the figures"
import json, sys
d = json.load(open(sys.argv[1]))
line = int(sys.argv[2])
MiB = 1 << 20
peak = {}
for p in d["processes"]:
    if p["base"] and p["new"] and p["base"]["rank"] is not None:
        cpu = [v for v in p["devices"] if v["device"] == "cpu"][0]
        peak[p["base"]["rank"]] = cpu["peak_bytes"]
        assert p["base"]["rank"] == p["new"]["rank"], p
assert sorted(peak) == [0, 1], sorted(peak)
assert 31 * MiB <= peak[1]["change"] <= 34 * MiB, peak[1]
assert abs(peak[0]["change"]) < 2 * MiB, peak[0]
top = d["sites"][0]
assert top["process"] == "rank 1" and top["site"].endswith("(ddp_train.py:%d)" % line), top
assert 32 * MiB <= top["peak_bytes"]["change"] <= 32 * MiB + 64 * 1024, top
assert top["peak_bytes"]["base"] == 0 and top["peak_bytes"]["percent"] is None, top
# Matched by frame, not by address: no other site moved by 1 MiB or more
# (the 8 and 16 MiB held alike in both runs among them).
moved = [s for s in d["sites"][1:] if abs(s["peak_bytes"]["change"]) >= MiB]
assert not moved, moved
# The line holding 16 MiB in both runs is one site, unchanged: not listed.
hold = "(ddp_train.py:%d)" % int(sys.argv[3])
held = [s for s in d["sites"] if s["site"].endswith(hold)]
assert not held, held
PY

# check: a limit between the two runs' rank 1 peaks.
limit=$("$py" -c '
import json, sys
d = json.load(open(sys.argv[1]))
for p in d["processes"]:
    if p["base"] and p["base"]["rank"] == 1:
        cpu = [v for v in p["devices"] if v["device"] == "cpu"][0]
        print(cpu["peak_bytes"]["base"] + 16 * (1 << 20))' "$tmp/diff.json")
printf '# between the runs\nmax-peak cpu %s rank=1\n' "$limit" >"$tmp/limits.rules"
"$cgtrace" check --rules "$tmp/limits.rules" "$tmp/base" >"$tmp/check.txt" 2>"$tmp/err"
[ $? -eq 0 ] && ok || ko "check: the base run breaks the limit: $(cat "$tmp/check.txt")"
"$cgtrace" check --rules "$tmp/limits.rules" "$tmp/new" >"$tmp/check.txt" 2>"$tmp/err"
[ $? -eq 1 ] && ok || ko "check: the new run is not status 1: $(cat "$tmp/check.txt")"
# The top site is the one holding most at the peak (torch's import, here).
grep -q "^max-peak cpu $limit rank=1: rank 1 (pid [0-9]*), cpu: .* over the limit .*; top site: .* (ddp_train.py:[0-9]*), .* ($tmp/limits.rules:2)\$" \
	"$tmp/check.txt" && ok || ko "check: the broken line: $(cat "$tmp/check.txt")"
"$cgtrace" check --rules "$tmp/limits.rules" --format junit -o "$tmp/junit.xml" "$tmp/new" \
	>"$tmp/check.txt" 2>"$tmp/err"
[ $? -eq 1 ] && ok || ko "check --format junit: not status 1"
"$py" - "$tmp/junit.xml" >"$tmp/err" 2>&1 <<'PY' && ok || ko "check --format junit: the report"
import sys
import xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
assert root.tag == "testsuites" and root.get("failures") == "1", root.attrib
cases = root.findall("./testsuite/testcase")
assert len(cases) == 1, [c.attrib for c in cases]
f = cases[0].find("failure")
assert f is not None and cases[0].get("name").startswith("rank 1 (pid"), cases[0].attrib
assert "ddp_train.py" in f.get("message") and f.text == f.get("message"), f.attrib
PY
"$cgtrace" check --baseline "$tmp/base" --max-increase 10 "$tmp/new" >"$tmp/check.txt" 2>"$tmp/err"
[ $? -eq 1 ] && ok || ko "check --baseline: the new run is not status 1"
grep -q "^max-increase 10: rank 1 (pid [0-9]*), cpu: +[0-9.]*% .*top site: run (ddp_train.py:$extra_line), +32.0 MiB" \
	"$tmp/check.txt" && ok || ko "check --baseline: the broken line: $(cat "$tmp/check.txt")"
"$cgtrace" check --baseline "$tmp/base" --max-increase 10 "$tmp/base" >"$tmp/check.txt" 2>"$tmp/err"
[ $? -eq 0 ] && ok || ko "check --baseline: the base against itself: $(cat "$tmp/check.txt")"

# A commit that moves code: the same script three lines lower, with the
# EXTRA line. By line, sites below the change read as gone and new; with
# --by function they match, and only run()'s 32 MiB more is left.
mkdir "$tmp/moved"
{ printf '# moved\n# by\n# three lines\n'; cat "$here/jobs/ddp_train.py"; } >"$tmp/moved/ddp_train.py"
"$cgprobe" -q -o "$tmp/shifted/" "$py" "$tmp/moved/ddp_train.py" spawn "$(port)" 32 \
	>"$tmp/out" 2>"$tmp/err" && ok || ko "the moved run under the wrapper"
"$cgtrace" diff --json -n 0 "$tmp/base" "$tmp/shifted" >"$tmp/by-line.json" 2>"$tmp/err" && ok ||
	ko "diff of the moved run"
"$cgtrace" diff --json -n 0 --by function "$tmp/base" "$tmp/shifted" >"$tmp/by-function.json" \
	2>"$tmp/err" && ok || ko "diff --by function of the moved run"
"$py" - "$tmp/by-line.json" "$tmp/by-function.json" >"$tmp/err" 2>&1 <<'PY' && ok ||
	ko "diff --by function: the moved run's sites: $(cat "$tmp/err")"
import json, sys
MiB = 1 << 20
by_line = json.load(open(sys.argv[1]))["sites"]
by_function = json.load(open(sys.argv[2]))["sites"]
# By line, the hold line (16 MiB on rank 1) moved: it reads as gone and new.
assert any(abs(s["peak_bytes"]["change"]) >= 8 * MiB and s["peak_bytes"]["new"] == 0
           for s in by_line), by_line[:4]
top = by_function[0]
assert top["process"] == "rank 1" and top["site"] == "run (ddp_train.py)", top
assert 32 * MiB <= top["peak_bytes"]["change"] <= 32 * MiB + 64 * 1024, top
moved = [s for s in by_function[1:] if abs(s["peak_bytes"]["change"]) >= MiB]
assert not moved, moved
PY
finish

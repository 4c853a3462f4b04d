#!/bin/sh
# SPDX-License-Identifier: MIT
# Real jobs of several processes under one wrapper into a job folder
# (docs/jobs.md), read back by cgtrace summary --json: Python multiprocessing
# by fork, spawn and forkserver (tests/jobs/mp_workers.py prints the pid of
# every process it knows of), and a shell pipeline. Each process that ran
# has one trace and no other trace is there; each sits under its real
# parent:
#   fork        main -> 3 workers, each forked_from main
#   spawn       main -> resource tracker, 3 workers (exec'd: no forked_from)
#   forkserver  main -> resource tracker, fork server -> 3 workers, each
#               forked_from the server
#   pipeline    sh -> seq, sort, tail (exec'd)
# and the worker holding 4 MiB shows a host peak of at least that while the
# others stay under it. summary's text of the pipeline folds its tiny
# processes. Skipped (77) without /usr/bin/python3.
#   test-job-mp.sh CGTRACE CGPROBE
set -u
# shellcheck source=tests/lib/sh-check.sh
. "$(dirname "$0")/lib/sh-check.sh"
need_args 2 "test-job-mp.sh CGTRACE CGPROBE" "$@"
cgtrace=$(abs "$1")
cgprobe=$(abs "$2")
here=$(cd "$(dirname "$0")" && pwd)
py=/usr/bin/python3
[ -x "$py" ] || { echo "SKIP: no /usr/bin/python3"; exit 77; }
make_tmp

# gone PID...: waits up to 10 s for the processes to end (the resource
# tracker and the fork server outlive the wrapper's program by a moment:
# they end when it closes their pipes).
gone() {
	for p in "$@"; do
		n=0
		while kill -0 "$p" 2>/dev/null && [ $n -lt 100 ]; do
			sleep 0.1
			n=$((n + 1))
		done
	done
}

for method in fork spawn forkserver; do
	dir=$tmp/$method
	"$cgprobe" -q -o "$dir/" "$py" "$here/jobs/mp_workers.py" "$method" \
		>"$tmp/$method.pids" 2>"$tmp/err" && ok || ko "$method: the workers under the wrapper"
	# shellcheck disable=SC2046 # one word per pid
	gone $(awk '$1 == "tracker" || $1 == "server" { print $2 }' "$tmp/$method.pids")
	"$cgtrace" summary --json "$dir" >"$tmp/$method.json" 2>"$tmp/err" && ok ||
		ko "$method: summary --json"
	"$py" - "$method" "$tmp/$method.json" "$tmp/$method.pids" >"$tmp/err" 2>&1 <<'PY' && ok ||
import json, sys
method, summary, pids = sys.argv[1:4]
MiB = 1 << 20
known = {}
for line in open(pids):
    w = line.split()
    known[w[0] if w[0] != "worker" else "worker%s" % w[1]] = int(w[-1])
workers = [known["worker%d" % i] for i in range(3)]
want = {"fork": 4, "spawn": 5, "forkserver": 6}[method]
assert len(known) == want, ("the script's processes", known)
j = json.load(open(summary))
procs = j["processes"]
assert j["error_count"] == 0, [p for p in procs if "error" in p]
got = sorted(p["pid"] for p in procs)
# Every process that ran has a trace, and one only; no other trace.
assert got == sorted(known.values()), ("traces' pids", got, "processes", known)
assert j["process_count"] == want, j["process_count"]
by = {p["pid"]: p for p in procs}
def parent(pid):
    i = by[pid]["parent"]
    return None if i is None else procs[i]["pid"]
main = known["main"]
assert parent(main) is None, ("main's parent", parent(main))
assert by[main]["forked_from"] is None, by[main]["forked_from"]
if method == "fork":
    for w in workers:
        assert parent(w) == main, (w, parent(w))
        assert by[w]["forked_from"] == main, (w, by[w]["forked_from"])
elif method == "spawn":
    for w in workers + [known["tracker"]]:
        assert parent(w) == main, (w, parent(w))
        assert by[w]["forked_from"] is None, (w, by[w]["forked_from"])
else:
    server = known["server"]
    for w in (server, known["tracker"]):
        assert parent(w) == main, (w, parent(w))
        assert by[w]["forked_from"] is None, (w, by[w]["forked_from"])
    for w in workers:
        assert parent(w) == server, (w, parent(w))
        assert by[w]["forked_from"] == server, (w, by[w]["forked_from"])
# Tree order: each process after its parent, one deeper.
order = [procs[i]["pid"] for i in j["tree"]]
assert sorted(order) == got, order
for pid in got:
    if parent(pid) is not None:
        assert order.index(parent(pid)) < order.index(pid), (pid, order)
        assert by[pid]["depth"] == by[parent(pid)]["depth"] + 1, (pid, by[pid]["depth"])
# The worker that kept 4 MiB, and only it, peaks at 4 MiB or more.
def host_peak(pid):
    cpu = [d for d in by[pid]["devices"] if d["device"] == "cpu"]
    return cpu[0]["peak_bytes"] if cpu else 0
assert host_peak(workers[0]) >= 4 * MiB, host_peak(workers[0])
for w in workers[1:]:
    assert host_peak(w) < 4 * MiB, (w, host_peak(w))
PY
		ko "$method: each process's trace, parent and peak"
done

# A shell pipeline: sh forks and execs each stage.
dir=$tmp/pipe
"$cgprobe" -q -o "$dir/" sh -c 'echo $$ >"$0"; seq 100000 | sort -n | tail -1' "$tmp/sh.pid" \
	>"$tmp/out" 2>"$tmp/err" && [ "$(cat "$tmp/out")" = 100000 ] && ok || ko "pipeline: under the wrapper"
"$cgtrace" summary --json "$dir" >"$tmp/pipe.json" 2>"$tmp/err" && ok || ko "pipeline: summary --json"
"$py" - "$tmp/pipe.json" "$(cat "$tmp/sh.pid")" >"$tmp/err" 2>&1 <<'PY' && ok || ko "pipeline: each stage's trace and parent"
import json, os, sys
j = json.load(open(sys.argv[1]))
sh = int(sys.argv[2])
procs = j["processes"]
assert j["error_count"] == 0, procs
name = lambda p: os.path.basename(p["executable"] or "?")
# The stages, exec'd by sh's fork children, each under sh.
stages = [p for p in procs if p["forked_from"] is None and p["pid"] != sh]
assert sorted(name(p) for p in stages) == ["seq", "sort", "tail"], [name(p) for p in stages]
assert len({p["pid"] for p in stages}) == 3, stages
for p in stages:
    assert procs[p["parent"]]["pid"] == sh, (name(p), p["parent"])
shs = [p for p in procs if p["pid"] == sh]
assert len(shs) == 1 and shs[0]["parent"] is None and name(shs[0]) in ("sh", "dash", "bash"), shs
# Any other trace is one of sh's fork children, which allocated before its
# exec (dash does): forked from sh, under the pid of the stage it became.
rest = [p for p in procs if p not in stages and p not in shs]
for p in rest:
    assert p["forked_from"] == sh and p["pid"] in {s["pid"] for s in stages}, ("a stray trace", p)
    assert procs[p["parent"]]["pid"] == sh, p
assert j["process_count"] == 4 + len(rest) <= 7, j["process_count"]
PY
"$cgtrace" summary "$dir" >"$tmp/out" 2>"$tmp/err" && ok || ko "pipeline: summary DIR"
grep -q '^\.\.\. and [0-9]* processes with a peak under' "$tmp/out" && ok ||
	{ cp "$tmp/out" "$tmp/err"; ko "pipeline: the tiny processes folded"; }
grep -q ' sort -n$' "$tmp/out" && ok || { cp "$tmp/out" "$tmp/err"; ko "pipeline: sort's row kept"; }
finish

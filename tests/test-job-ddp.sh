#!/bin/sh
# SPDX-License-Identifier: MIT
# A real job: a two-rank DistributedDataParallel run on CPU (Debian's torch,
# gloo) whose ranks hold 8 and 16 MiB, under one wrapper into a job folder,
# started the way torchrun starts ranks (tests/jobs/launch.sh) and by
# torch.multiprocessing.spawn. summary, the Perfetto export and the job
# report must each attribute each rank: its rank, and rank 1's host peak at
# least 7 MiB above rank 0's. Skipped (77) without /usr/bin/python3 and torch.
#   test-job-ddp.sh CGTRACE CGPROBE
set -u
# shellcheck source=tests/lib/sh-check.sh
. "$(dirname "$0")/lib/sh-check.sh"
need_args 2 "test-job-ddp.sh CGTRACE CGPROBE" "$@"
cgtrace=$(abs "$1")
cgprobe=$(abs "$2")
here=$(cd "$(dirname "$0")" && pwd)
py=/usr/bin/python3
[ -x "$py" ] && "$py" -c 'import torch.distributed' 2>/dev/null ||
	{ echo "SKIP: no /usr/bin/python3 with torch"; exit 77; }
make_tmp
port() { "$py" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# check MODE DIR: the three readers on the job of DIR.
check() {
	mode=$1 dir=$2
	"$cgtrace" summary --json "$dir" >"$tmp/$mode.json" 2>"$tmp/err" && ok || ko "$mode: summary --json"
	"$cgtrace" export --format perfetto -o "$tmp/$mode.pf.json" "$dir" 2>"$tmp/err" && ok ||
		ko "$mode: the Perfetto export"
	"$cgtrace" report -o "$tmp/$mode.html" "$dir" 2>"$tmp/err" && ok || ko "$mode: the report"
	"$py" - "$tmp/$mode.json" "$tmp/$mode.pf.json" "$tmp/$mode.html" "$mode" >"$tmp/err" 2>&1 <<'PY' &&
import json, sys
summary, perfetto, report, mode = sys.argv[1:5]
MiB = 1 << 20
j = json.load(open(summary))
ranks = {}
for p in j["processes"]:
    # The ranks: a resource tracker or the launcher has none, a fork child
    # inherits its parent's variables.
    if p.get("rank") is None or p.get("forked_from") is not None:
        continue
    cpu = [d for d in p["devices"] if d["device"] == "cpu"]
    ranks.setdefault(p["rank"], []).append((cpu[0]["peak_bytes"] if cpu else 0, p))
# spawn: the parent has no rank; the children get theirs from the process group.
assert sorted(ranks) == [0, 1], sorted(ranks)
assert all(len(v) == 1 for v in ranks.values()), ranks
peak0, p0 = ranks[0][0]
peak1, p1 = ranks[1][0]
assert peak1 >= peak0 + 7 * MiB, (peak0, peak1)
# The process group's rank, recorded by itself once init_process_group returned.
assert p0["rank_source"] == p1["rank_source"] == "cgprobe_rank", (p0["rank_source"], p1["rank_source"])
assert p0["world_size"] == 2 and p1["world_size"] == 2
# Perfetto: a track named for each rank (its pid the process's unless the
# sh that forked it, before its exec, left a trace under the same pid).
pf = json.load(open(perfetto))
names = [e["args"]["name"] for e in pf["traceEvents"]
         if e.get("ph") == "M" and e.get("name") == "process_name"]
for r, (_, p) in ((0, ranks[0][0]), (1, ranks[1][0])):
    assert sum(n.startswith("rank %d (pid %d)" % (r, p["pid"])) for n in names) == 1, (r, names)
# The report names both ranks in its job block.
html = open(report).read()
for r, (_, p) in ((0, ranks[0][0]), (1, ranks[1][0])):
    assert "rank %d (pid %d)" % (r, p["pid"]) in html, r
PY
	ok || ko "$mode: each rank attributed"
}

mkdir "$tmp/w"
cd "$tmp/w" || exit 1
"$cgprobe" -q -o "$tmp/env/" sh "$here/jobs/launch.sh" "$py" "$here/jobs/ddp_train.py" "$(port)" \
	>"$tmp/out" 2>"$tmp/err" && ok || ko "launch.sh: the ranks under the wrapper"
[ -f "$tmp/env/cgprobe.job" ] && ok || ko "launch.sh: the job's manifest kept"
check env "$tmp/env"
"$cgprobe" -q -o "$tmp/spawn/" "$py" "$here/jobs/ddp_train.py" spawn "$(port)" \
	>"$tmp/out" 2>"$tmp/err" && ok || ko "spawn: the ranks under the wrapper"
check spawn "$tmp/spawn"
finish

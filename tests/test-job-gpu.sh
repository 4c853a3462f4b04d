#!/bin/sh
# SPDX-License-Identifier: MIT
# Two processes on one GPU under one wrapper (docs/jobs.md): two gpu-hold
# programs (tests/jobs/gpu-hold.c, on the fake CUDA runtime of tests/cuda)
# started by one sh, cudaMalloc 3 and 5 MiB on device 0 and hold them until
# each has seen the other's file, so the blocks are live at one moment for
# certain. cgtrace summary --json of the folder: one physical GPU, its UUID
# the fake driver's, 2 processes on it, an exact peak of 8 MiB while both
# hold, shares of 3 and 5 MiB, each the right process's; the text says the
# same. Skipped (77) where the fake CUDA libraries are not built.
#   test-job-gpu.sh CGTRACE CGPROBE CUDA_FIXTURES
set -u
# shellcheck source=tests/lib/sh-check.sh
. "$(dirname "$0")/lib/sh-check.sh"
need_args 3 "test-job-gpu.sh CGTRACE CGPROBE CUDA_FIXTURES" "$@"
cgtrace=$(abs "$1")
cgprobe=$(abs "$2")
fixtures=$(abs "$3")
skip_unless_built "$fixtures/gpu-hold"
skip_unless_built "$fixtures/lib/libcudart.so.13"
skip_unless_built "$fixtures/lib/libcuda.so.1"
command -v python3 >/dev/null 2>&1 || { echo "SKIP: no python3"; exit 77; }
make_tmp

dir=$tmp/job
LD_LIBRARY_PATH=$fixtures/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} FAKE_CUDART_VIA_DRIVER=1 \
	"$cgprobe" -q -o "$dir/" sh -c '"$0" 3 "$1/a" "$1/b" & "$0" 5 "$1/b" "$1/a" & wait' \
	"$fixtures/gpu-hold" "$tmp" >"$tmp/out" 2>"$tmp/err" && ok || ko "two gpu-holds under the wrapper"
# Both ran to the end (wait gives no status for them: their own lines do).
[ "$(grep -c ' gpu-hold F cudaFree ' "$tmp/out")" -eq 2 ] && ! grep -q ' R FAILED' "$tmp/out" && ok ||
	{ cp "$tmp/out" "$tmp/err"; ko "both programs allocated, met and freed"; }
awk '$3 == "A" { print $1, $6 }' "$tmp/out" >"$tmp/pids"
"$cgtrace" summary --json "$dir" >"$tmp/json" 2>"$tmp/err" && ok || ko "summary --json"
python3 - "$tmp/json" "$tmp/pids" >"$tmp/err" 2>&1 <<'PY' && ok || ko "the GPU's exact sum and shares"
import json, sys
MiB = 1 << 20
j = json.load(open(sys.argv[1]))
size_of = {int(p): int(n) for p, n in (l.split() for l in open(sys.argv[2]))}
assert sorted(size_of.values()) == [3 * MiB, 5 * MiB], size_of
procs = j["processes"]
assert j["error_count"] == 0, procs
# sh, each gpu-hold, and where sh's fork child allocated before its exec,
# that child's trace under the same pid (forked from sh).
holds = [p for p in procs if (p["executable"] or "").endswith("/gpu-hold")]
assert sorted(p["pid"] for p in holds) == sorted(size_of), ("one trace per gpu-hold", holds)
shells = [p for p in procs if p not in holds and p["forked_from"] is None]
assert len(shells) == 1, ("one sh", shells)
for p in procs:
    if p not in holds and p not in shells:
        assert p["pid"] in size_of and p["forked_from"] == shells[0]["pid"], ("a stray trace", p)
for p in holds:
    assert procs[p["parent"]]["pid"] == shells[0]["pid"], ("gpu-hold's parent", p)
gpus = j["gpus"]
assert len(gpus) == 1, gpus
g = gpus[0]
assert g["uuid"] == "GPU-fa4ec0da-0000-4000-8000-000000000000", g["uuid"]
assert not g["by_name"], g
assert g["process_count"] == 2, g
assert g["peak_bytes"] == 8 * MiB, g["peak_bytes"]
shares = sorted((procs[s["process"]]["pid"], s["bytes"]) for s in g["shares"])
assert shares == sorted(size_of.items()), (shares, size_of)
# The peak lies where both hold their blocks: after each one's own peak
# moment (its cudaMalloc), before its end, all on the job's axis.
for s in g["shares"]:
    p = procs[s["process"]]
    cuda = [d for d in p["devices"] if d["device"].startswith("cuda")]
    assert len(cuda) == 1 and cuda[0]["peak_bytes"] == size_of[p["pid"]], cuda
    assert cuda[0]["uuid"] == g["uuid"], cuda
    assert cuda[0]["peak_ns"] <= g["peak_ns"] <= p["end_ns"], (p, g)
PY
"$cgtrace" summary "$dir" >"$tmp/out" 2>"$tmp/err" && ok || ko "summary DIR"
grep -q '^  peak 8.0 MiB at .*, 2 processes on it$' "$tmp/out" && ok ||
	{ cp "$tmp/out" "$tmp/err"; ko "the text's GPU peak"; }
finish

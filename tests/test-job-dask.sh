#!/bin/sh
# SPDX-License-Identifier: MIT
# The recipe of docs/jobs.md, "Beyond one machine": scripts/cgtrace-dask.py
# on a local Dask cluster reads a job folder trace by trace and gets the
# same totals as `cgtrace summary DIR`: the machines' sums and each GPU's
# exact peak, when, and the shares; a bad trace counted as an error.
# Skipped (77) without Debian's python3-dask and python3-distributed.
#   test-job-dask.sh CGTRACE
set -u
# shellcheck source=tests/lib/sh-check.sh
. "$(dirname "$0")/lib/sh-check.sh"
need_args 1 "test-job-dask.sh CGTRACE" "$@"
cgtrace=$(abs "$1")
here=$(cd "$(dirname "$0")" && pwd)
py=/usr/bin/python3
"$py" -c 'import dask.distributed' 2>/dev/null || { echo "SKIP: no python3-distributed"; exit 77; }
make_tmp
"$py" "$here/jobs/make-job.py" "$tmp/job" || exit 1
# The job twice over: a second machine's copy, its clocks its own.
for f in "$tmp/job"/rank*.jsonl; do
	sed 's/"hostname":"node1"/"hostname":"node2"/; s/"3f0c8a1e-boot"/"other-boot"/' "$f" \
		>"$tmp/job/n2-$(basename "$f")"
done

"$cgtrace" summary --json "$tmp/job" >"$tmp/want.json" 2>"$tmp/err" && ok || ko "summary --json DIR"
cd "$tmp" || exit 1
"$py" "$here/../scripts/cgtrace-dask.py" --workers 2 --cgtrace "$cgtrace" "$tmp/job" \
	>"$tmp/got.json" 2>"$tmp/err" && ok || ko "the Dask recipe"
"$py" - "$tmp/want.json" "$tmp/got.json" >"$tmp/err" 2>&1 <<'PY' && ok || ko "the same totals"
import json, sys
want, got = (json.load(open(p)) for p in sys.argv[1:3])
assert got["process_count"] == want["process_count"] == 9, (got, want)
key = lambda m: m["host"]
w = sorted(want["machines"], key=key)
g = sorted(got["machines"], key=key)
assert [(m["host"], m["process_count"], m["host_peak_sum_bytes"], m["leaked_bytes"]) for m in w] == \
       [(m["host"], m["process_count"], m["host_peak_sum_bytes"], m["leaked_bytes"]) for m in g], (w, g)
pid = {i: p["pid"] for i, p in enumerate(want["processes"])}
def gpu(x, pids):
    return (x["uuid"], x["process_count"], x["peak_bytes"], x["peak_ns"],
            sorted((pids(s), s["bytes"]) for s in x["shares"]))
assert len(want["gpus"]) == len(got["gpus"]) == 1
a = gpu(want["gpus"][0], lambda s: pid[s["process"]])
b = gpu(got["gpus"][0], lambda s: s["pid"])
assert a == b, (a, b)
# The same GPU in both machines' copies: four processes on it.
assert a[1] == 4 and a[2] == 10 << 20, a
PY

# A bad trace: counted as an error, the rest the same.
printf '{"kind":"meta"}\n' >"$tmp/job/broken.jsonl"
"$py" "$here/../scripts/cgtrace-dask.py" --workers 2 --cgtrace "$cgtrace" "$tmp/job" \
	>"$tmp/got.json" 2>"$tmp/err"
st=$?
[ $st -eq 1 ] && grep -q '"error_count": 1' "$tmp/got.json" && grep -q 'broken.jsonl:1:' "$tmp/got.json" &&
	ok || ko "a bad trace (status $st)"
finish

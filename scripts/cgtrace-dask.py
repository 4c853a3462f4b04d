#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A job folder's totals on a Dask cluster (docs/jobs.md, "Beyond one machine").

    cgtrace-dask.py [--workers N] [--scheduler ADDRESS] [--cgtrace PATH] DIR

Each trace of DIR (the names `cgtrace summary DIR` takes) is read by a Dask
task that runs `cgtrace summary --json --series --job TRACE` where the
task runs: the process's figures, its clock readings and its devices'
bytes over time. The gathered figures are then placed on one time axis
and added up as `cgtrace summary DIR` adds them: each machine's process
count, host peaks (less what fork children inherited) and leaked bytes,
and each physical GPU's exact sum over time, its peak, when, and each
process's share then. Prints one JSON object: process_count, error_count,
machines and gpus, in the shape of `cgtrace summary --json DIR`'s.

Without --scheduler a local cluster of N worker processes is started
(default 2); with one, the tasks go to that cluster, whose workers must
see DIR at the same path and have cgtrace (--cgtrace, default: cgtrace on
PATH).
"""
import argparse
import heapq
import json
import os
import subprocess
import sys

TRACE_SUFFIXES = (".cgt", ".jsonl", ".jsonl.zst", ".zst")


def trace_paths(folder):
    """The traces of folder, as cgtrace_job_paths lists them: by name."""
    names = sorted(n for n in os.listdir(folder)
                   if not n.startswith(".") and n.endswith(TRACE_SUFFIXES)
                   and os.path.isfile(os.path.join(folder, n)))
    return [os.path.join(folder, n) for n in names]


def read_one(cgtrace, path):
    """One trace's process, as a task: the figures, or its error line."""
    r = subprocess.run([cgtrace, "summary", "--json", "--series", "--job", path],
                       capture_output=True, text=True)
    try:
        return json.loads(r.stdout)["processes"][0]
    except (ValueError, KeyError, IndexError):
        return {"path": path, "error": (r.stderr.strip() or "no output").splitlines()[0]}


def place(procs):
    """Each process's start on the job's axis: one boot by its monotonic clock."""
    base = {}
    for i, p in enumerate(procs):
        c = p["clock"]
        ref = None
        if c["probe"] and c["boot_id"]:
            same = [q["clock"] for q in procs
                    if q["clock"]["probe"] and q["clock"]["boot_id"] == c["boot_id"]]
            ref = min(same, key=lambda x: x["error_ns"])
        if ref is not None:
            base[i] = ref["realtime_ns"] + (c["monotonic_ns"] - ref["monotonic_ns"])
        else:
            base[i] = c["realtime_ns"]
    zero = min(base.values()) if base else 0
    return [base[i] - zero for i in range(len(procs))]


def machines(procs):
    out = {}
    for p in procs:
        m = out.setdefault(p["host"], {"host": p["host"], "process_count": 0,
                                       "host_peak_sum_bytes": 0, "leaked_bytes": 0})
        m["process_count"] += 1
        m["leaked_bytes"] += p["leaked_bytes"]
        for d in p["devices"]:
            if d["device"] == "cpu":
                m["host_peak_sum_bytes"] += d["peak_bytes"] - d["inherited_at_peak"]
    return list(out.values())


def gpus(procs, starts):
    """Each physical device's sum, a merge of its processes' series in time order."""
    groups = {}
    for i, p in enumerate(procs):
        for d in p["devices"]:
            if "series" not in d:
                continue
            key = d["uuid"] or (p["host"], d["device"])
            groups.setdefault(key, []).append((i, d))
    out = []
    for key, members in groups.items():
        streams = [[(starts[i] + t, k, b) for t, b in d["series"]]
                   for k, (i, d) in enumerate(members)]
        cur = [0] * len(members)
        total, peak, peak_t, at_peak = 0, 0, 0, list(cur)
        merged = list(heapq.merge(*streams))
        for n, (t, k, b) in enumerate(merged):
            total += b - cur[k]
            cur[k] = b
            if n + 1 < len(merged) and merged[n + 1][0] == t:
                continue
            if total > peak:
                peak, peak_t, at_peak = total, t, list(cur)
        shares = sorted(({"process": members[k][0], "pid": procs[members[k][0]]["pid"],
                          "device": members[k][1]["device"], "bytes": b}
                         for k, b in enumerate(at_peak) if b),
                        key=lambda s: (-s["bytes"], s["process"]))
        out.append({"uuid": key if isinstance(key, str) else None,
                    "process_count": len({i for i, _ in members}),
                    "peak_bytes": peak, "peak_ns": peak_t, "shares": shares})
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("folder")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--scheduler")
    ap.add_argument("--cgtrace", default="cgtrace")
    a = ap.parse_args()
    paths = trace_paths(a.folder)
    if not paths:
        sys.exit("%s: no traces in this folder" % a.folder)
    from dask.distributed import Client, LocalCluster
    if a.scheduler:
        client = Client(a.scheduler)
    else:
        client = Client(LocalCluster(n_workers=a.workers, threads_per_worker=1,
                                     processes=True, dashboard_address=None))
    with client:
        results = client.gather(client.map(read_one, [a.cgtrace] * len(paths), paths))
    procs = [p for p in results if "error" not in p]
    errors = [p for p in results if "error" in p]
    starts = place(procs)
    json.dump({"process_count": len(results), "error_count": len(errors),
               "errors": [e["error"] for e in errors],
               "machines": machines(procs), "gpus": gpus(procs, starts)},
              sys.stdout, indent=1)
    print()
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A small job folder for the views of a job (docs/jobs.md), as the probe
writes one with cgprobe -o DIR/: JSONL traces with the probe's meta tags.

Two ranks of one boot share a GPU (one UUID, cuda:0 to rank 0 and cuda:1
to rank 1) and start 1 ms apart; rank 0 forks a child 0.5 ms after its
start, which inherits rank 0's live blocks (cgprobe_preexisting) and adds
its own. Each process has spans on a thread of its own. The records are
kept here as data, so that a test works out what the views must show
(each process's start on the job's axis, the GPU's exact sum) from them
rather than from a number written twice.

    job_traces.py DIR    writes DIR/rank0.jsonl, rank1.jsonl, worker.jsonl
"""
import json
import os
import sys

UUID = "GPU-5f1c-test"
BOOT = "3b9e7c1a-boot"

# Per process: meta tags, its time 0 on the machine's monotonic clock, its
# memory records (own ns, address, device, bytes, alloc or free, preexisting)
# and its spans (id, name, start, duration, thread). The child's first two
# records are the blocks it inherited.
PROCESSES = [
    {
        "file": "rank0.jsonl",
        "pid": 4101,
        "tags": {"ppid": "4000", "RANK": "0", "WORLD_SIZE": "2", "LOCAL_RANK": "0"},
        "cmdline": "python3 train.py --epochs 1",
        "mono": 1000000000,
        "records": [
            (10000, 0x1000, "cuda:0", 1000, "alloc", False),
            (20000, 0x3000, "cpu", 5000, "alloc", False),
            (30000, 0x4000, "cpu", 2000, "alloc", False),
            (40000, 0x4000, "cpu", 2000, "free", False),
            (50000, 0x1000, "cuda:0", 1000, "free", False),
            (400000, 0x1800, "cuda:0", 300, "alloc", False),
            (900000, 0x1800, "cuda:0", 300, "free", False),
            (1002000, 0x2000, "cuda:0", 400, "alloc", False),
            (1100000, 0x2000, "cuda:0", 400, "free", False),
        ],
        "spans": [("s2", "forward", 5000, 60000, 4101), ("s3", "backward", 1000000, 150000, 4101)],
        "end": 1200000,
    },
    {
        "file": "rank1.jsonl",
        "pid": 4102,
        "tags": {"ppid": "4000", "RANK": "1", "WORLD_SIZE": "2", "LOCAL_RANK": "1"},
        "cmdline": "python3 train.py --epochs 1",
        "mono": 1001000000,
        "records": [
            (1000, 0x5000, "cpu", 3000, "alloc", False),
            (5000, 0x1000, "cuda:1", 700, "alloc", False),
            (60000, 0x1000, "cuda:1", 700, "free", False),
            (90000, 0x5000, "cpu", 3000, "free", False),
        ],
        "spans": [("s2", "forward", 2000, 70000, 4102)],
        "end": 100000,
    },
    {
        "file": "worker.jsonl",
        "pid": 4103,
        "tags": {"ppid": "4101", "forked_from": "4101", "RANK": "0", "WORLD_SIZE": "2"},
        "cmdline": "python3 train.py --epochs 1",
        "mono": 1000500000,
        "records": [
            (0, 0x3000, "cpu", 5000, "alloc", True),
            (0, 0x1800, "cuda:0", 300, "alloc", True),
            (200, 0xa000, "cuda:0", 50, "alloc", False),
            (1000, 0x6000, "cpu", 64, "alloc", False),
            (300000, 0xa000, "cuda:0", 50, "free", False),
        ],
        "spans": [("s2", "load", 100, 200000, 4103)],
        "end": 600000,
    },
]


def start_ns(p):
    """The process's time 0 on the job's axis: one boot, so by the monotonic clock."""
    return p["mono"] - min(q["mono"] for q in PROCESSES)


def gpu_sum():
    """The GPU's live bytes summed over the processes on the job's axis, after each moment:
    [(t, bytes)], a fork child's inherited blocks left to its parent."""
    events = []
    for p in PROCESSES:
        live = {}
        for t, addr, dev, nbytes, action, pre in p["records"]:
            if dev == "cpu":
                continue
            if pre:
                continue
            delta = nbytes if action == "alloc" else -live.pop(addr)
            if action == "alloc":
                live[addr] = nbytes
            events.append((start_ns(p) + t, delta))
    events.sort()
    out, total = [], 0
    for i, (t, delta) in enumerate(events):
        total += delta
        if i + 1 < len(events) and events[i + 1][0] == t:
            continue
        out.append((t, total))
    return out


def gpu_sum_at(t):
    """The exact sum on the job's axis at t, once every change at t is made."""
    return ([0] + [v for m, v in gpu_sum() if m <= t])[-1]


def device_peaks(p):
    """Each device's peak in the process's own trace: {device: (bytes, own ns)}."""
    live, peaks = {}, {}
    for t, addr, dev, nbytes, action, pre in p["records"]:
        cur = live.get(dev, 0) + (nbytes if action == "alloc" else -nbytes)
        live[dev] = cur
        if cur > peaks.get(dev, (0, 0))[0]:
            peaks[dev] = (cur, t)
    return peaks


def label(p):
    """What the views call the process: its rank and pid, then its command; a
    fork child by its pid alone, since it inherits its parent's rank variables."""
    if "forked_from" in p["tags"]:
        return "pid %d (fork) %s" % (p["pid"], p["cmdline"])
    return "rank %s (pid %d) %s" % (p["tags"]["RANK"], p["pid"], p["cmdline"])


def lines(p):
    tags = dict(p["tags"])
    tags.update({
        "pid": str(p["pid"]),
        "hostname": "node1",
        "executable": "/usr/bin/python3.12",
        "cmdline": p["cmdline"],
        # Under 10^18: cgtrace_doc_process reads at most 18 digits, and a
        # wall clock of today in ns has 19 (a library limit, reported).
        "cgprobe_clock_realtime_ns": str(p["mono"] + 700000000000000000),
        "cgprobe_clock_monotonic_ns": str(p["mono"]),
        "cgprobe_clock_error_ns": "120",
        "cgprobe_boot_id": BOOT,
    })
    meta = {"kind": "meta", "schema": "candle-graph/trace/6", "run_id": "run-%d" % p["pid"],
            "correlation_id": "job", "entrypoint": "train.py", "phase": "train",
            "timestamp": "2026-01-01T00:00:01.000Z", "capture_step": 1, "warmup_steps": 0,
            "device": "cuda:0", "timing_mode": "host", "tags": tags}
    out = [meta, {"kind": "span_start", "id": "s1", "name": "train.py", "start_ns": 0,
                  "span_kind": "function", "measured": False}]
    records = [(t, 0, r) for r in p["records"] for t in [r[0]]]
    spans = []
    for sid, name, t, dur, thread in p["spans"]:
        spans.append((t, 1, {"kind": "span_start", "id": sid, "parent_id": "s1", "name": name,
                             "start_ns": t, "span_kind": "module", "cgprobe_thread": thread,
                             "cgprobe_thread_name": "MainThread"}))
        spans.append((t + dur, 2, {"kind": "span_end", "id": sid, "duration_ns": dur}))
    seen = set()
    for t, order, r in sorted(records + spans, key=lambda x: (x[0], x[1])):
        if isinstance(r, dict):
            out.append(r)
            continue
        t, addr, dev, nbytes, action, pre = r
        rec = {"kind": "memory", "timestamp_ns": t, "tensor_id": "0x%x" % addr, "span_id": "s1",
               "device": dev, "bytes": nbytes, "action": action, "dtype": "u8",
               "category": "other"}
        if dev != "cpu" and dev not in seen:
            rec.update({"cgprobe_device_uuid": UUID, "cgprobe_device_name": "Fake GPU"})
        seen.add(dev)
        if pre:
            rec["cgprobe_preexisting"] = True
        out.append(rec)
    out.append({"kind": "span_end", "id": "s1", "duration_ns": p["end"]})
    return [json.dumps(r, separators=(",", ":")) for r in out]


def write(folder):
    os.makedirs(folder, exist_ok=True)
    for p in PROCESSES:
        with open(os.path.join(folder, p["file"]), "w", encoding="utf-8") as f:
            f.write("\n".join(lines(p)) + "\n")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: job_traces.py DIR")
    write(sys.argv[1])

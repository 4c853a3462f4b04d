#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Writes a small job folder of JSONL traces: what a launcher's run leaves.

    make-job.py DIR

- a shell launcher (pid 100) that starts two ranks;
- ranks 0 and 1 (pids 101, 102, RANK/WORLD_SIZE set) on one boot, started
  1 ms apart, both on the GPU with UUID GPU-aa (as cuda:0 and cuda:1 of
  their own numbering): rank 0 holds 3 MiB from 2 ms to 9 ms of the job,
  rank 1 2 MiB from 5 ms to 8 ms, so the GPU's sum peaks at 5 MiB at 5 ms;
  rank 0 also leaks 256 KiB on the host;
- a DataLoader worker forked from rank 0 (pid 103) that inherits rank 0's
  1 MiB host block (cgprobe_preexisting) and makes 100 KiB of its own;
- three tiny processes (pids 104-106, 1 KiB peaks), children of the
  launcher: a pipeline's stages on their way to exec.
The job's expected answers are in the test that uses it.
"""
import json
import os
import sys

MiB, KiB = 1 << 20, 1 << 10
BOOT = "3f0c8a1e-boot"
REAL0, MONO0 = 1_790_000_000_000_000_000, 50_000_000_000


def trace(path, pid, ppid, start_ms, cmd, records, end_ns, extra_tags=None):
    tags = {
        "pid": str(pid), "ppid": str(ppid), "hostname": "node1",
        "executable": cmd.split()[0], "cmdline": cmd,
        "cgprobe_clock_realtime_ns": str(REAL0 + start_ms * 1_000_000),
        "cgprobe_clock_monotonic_ns": str(MONO0 + start_ms * 1_000_000),
        "cgprobe_clock_error_ns": "60", "cgprobe_boot_id": BOOT,
    }
    tags.update(extra_tags or {})
    lines = [{"kind": "meta", "schema": "candle-graph/trace/6", "run_id": "r%d" % pid,
              "correlation_id": "c", "entrypoint": cmd.split()[0], "phase": "train",
              "timestamp": "2026-09-21T12:00:00.000Z", "capture_step": 1,
              "warmup_steps": 0, "device": "cpu", "timing_mode": "host", "tags": tags},
             {"kind": "span_start", "id": "s1", "name": "main", "start_ns": 0,
              "span_kind": "function", "measured": False}]
    for ts, addr, size, action, device, extra in records:
        r = {"kind": "memory", "timestamp_ns": ts, "tensor_id": "0x%x" % addr,
             "span_id": "s1", "device": device, "bytes": size, "action": action,
             "dtype": "u8", "category": "other"}
        r.update(extra or {})
        lines.append(r)
    lines.append({"kind": "span_end", "id": "s1", "duration_ns": end_ns})
    with open(path, "w") as f:
        for line in lines:
            f.write(json.dumps(line, separators=(",", ":")) + "\n")


def main():
    d = sys.argv[1]
    os.makedirs(d, exist_ok=True)
    ms = 1_000_000
    uuid = {"cgprobe_device_uuid": "GPU-aa", "cgprobe_device_name": "Fake GPU",
            "cgprobe_device_total_bytes": 16 * MiB}
    trace(os.path.join(d, "launcher.jsonl"), 100, 1, 0, "sh launch.sh",
          [(10, 0x10, 2 * KiB, "alloc", "cpu", None)], 12 * ms)
    trace(os.path.join(d, "rank0.jsonl"), 101, 100, 1, "python3 train.py --epochs 1",
          [(0 * ms + 10, 0x1000, 1 * MiB, "alloc", "cpu", None),
           (1 * ms, 0x9000, 3 * MiB, "alloc", "cuda:0", uuid),
           (8 * ms, 0x9000, 3 * MiB, "free", "cuda:0", None),
           (9 * ms, 0x2000, 256 * KiB, "alloc", "cpu", None),
           (9 * ms + 1, 0x1000, 1 * MiB, "free", "cpu", None)], 10 * ms,
          {"RANK": "0", "LOCAL_RANK": "0", "WORLD_SIZE": "2"})
    trace(os.path.join(d, "rank1.jsonl"), 102, 100, 2, "python3 train.py --epochs 1",
          [(3 * ms, 0x9000, 2 * MiB, "alloc", "cuda:1", uuid),
           (6 * ms, 0x9000, 2 * MiB, "free", "cuda:1", None)], 9 * ms,
          {"RANK": "1", "LOCAL_RANK": "1", "WORLD_SIZE": "2"})
    trace(os.path.join(d, "worker.jsonl"), 103, 101, 3, "python3 train.py --epochs 1",
          [(0, 0x1000, 1 * MiB, "alloc", "cpu", {"cgprobe_preexisting": True}),
           (1 * ms, 0x3000, 100 * KiB, "alloc", "cpu", None),
           (2 * ms, 0x3000, 100 * KiB, "free", "cpu", None)], 4 * ms,
          {"forked_from": "101", "RANK": "0"})
    for k in range(3):
        trace(os.path.join(d, "tiny%d.jsonl" % k), 104 + k, 100, 1, "sh -c 'a | b'",
              [(10, 0x10, KiB, "alloc", "cpu", None), (20, 0x10, KiB, "free", "cpu", None)],
              100)
    with open(os.path.join(d, "cgprobe.job"), "w") as f:
        f.write('{"trace":"rank0.jsonl"}\n')


if __name__ == "__main__":
    main()

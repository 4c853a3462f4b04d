#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Two ranks on one GPU with many moments each (a device-heavy job), and the
exact peak of their sum worked out here, independently of the reader.

    make-gpu-heavy.py DIR MOMENTS   (prints: PEAK_BYTES PEAK_NS)

Rank r starts r * 1000 ns after rank 0 on one boot; each allocates and frees
blocks of pseudo-random sizes, one record per moment, 1024 live at most.
"""
import json
import random
import sys


def main():
    d, n = sys.argv[1], int(sys.argv[2])
    events = []
    for r in range(2):
        rnd = random.Random(r + 7)
        start = r * 1000
        meta = {"kind": "meta", "schema": "candle-graph/trace/6", "run_id": "r%d" % r,
                "correlation_id": "c", "entrypoint": "heavy", "phase": "train",
                "timestamp": "2026-01-01T00:00:00.000Z", "capture_step": 1, "warmup_steps": 0,
                "device": "cuda:0", "timing_mode": "host",
                "tags": {"pid": str(500 + r), "RANK": str(r), "hostname": "h",
                         "cgprobe_boot_id": "b", "cgprobe_clock_error_ns": "10",
                         "cgprobe_clock_realtime_ns": str(1700000000000000000 + start),
                         "cgprobe_clock_monotonic_ns": str(1000000 + start)}}
        lines = [json.dumps(meta), json.dumps({"kind": "span_start", "id": "s1", "name": "m",
                                               "start_ns": 0, "span_kind": "function",
                                               "measured": False})]
        live, ts, sizes = 0, 0, {}
        for i in range(n):
            ts += 1 + rnd.randrange(40)
            k = rnd.randrange(1024)
            if k in sizes:
                b = sizes.pop(k)
                act = "free"
                live -= b
            else:
                b = 256 * (1 + rnd.randrange(1000))
                sizes[k] = b
                act = "alloc"
                live += b
            rec = {"kind": "memory", "timestamp_ns": ts, "tensor_id": "0x%x" % (0x10000 + 4096 * k),
                   "span_id": "s1", "device": "cuda:0", "bytes": b, "action": act,
                   "dtype": "u8", "category": "other"}
            if i == 0:
                rec["cgprobe_device_uuid"] = "GPU-heavy"
            lines.append(json.dumps(rec, separators=(",", ":")))
            events.append((start + ts, r, live))
        lines.append(json.dumps({"kind": "span_end", "id": "s1", "duration_ns": ts + 1}))
        with open("%s/rank%d.jsonl" % (d, r), "w") as f:
            f.write("\n".join(lines) + "\n")
    events.sort()
    cur, peak, peak_t = [0, 0], 0, 0
    for i, (t, r, v) in enumerate(events):
        cur[r] = v
        if i + 1 < len(events) and events[i + 1][0] == t:
            continue
        if sum(cur) > peak:
            peak, peak_t = sum(cur), t
    print(peak, peak_t)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A trace of training updates whose figures are known, for the tests of
the pictures (report, plot, Perfetto export) that draw them.

    updates_trace.py OUT N [--inferred] [--open]

Writes a JSONL trace of N updates on cuda:0 and cpu: update k (from 1)
starts at start_ns(k), 10 ms apart, and is marked (a span with
cgprobe_update k, 8 ms long) unless --inferred (then each runs from one
forward step to the next). In it, a forward step allocates activation
act_mib(k) MiB on cuda:0 and 4 KiB * k of other on cpu; backward 16 MiB
of gradient at start_ns(k) + 3.1 ms and frees the activation; optimizer
frees the gradient and keeps 1 MiB more of optimizer on cuda:0, and frees
the cpu block. 64 MiB of parameters live from the start. So cuda:0's
peak in update k is peak(k) at start_ns(k) + 3.1 ms, and its live bytes
grow by 1 MiB an update. --open leaves the last update's span open (and
the last optimizer step unfinished), so the trace ends inside it.
"""
import json
import sys

MiB = 1 << 20
PERIOD = 10_000_000
T0 = 1_000_000


def start_ns(k):
    return T0 + (k - 1) * PERIOD


def act_mib(k):
    return 8 * (k % 3 + 1)


def peak(k):
    """cuda:0's highest live bytes in update k."""
    return (64 + (k - 1) + act_mib(k) + 16) * MiB


def peak_ns(k):
    return start_ns(k) + 3_100_000


def lines(n, inferred=False, open_end=False):
    out = [json.dumps({"kind": "meta", "schema": "candle-graph/trace/6", "run_id": "run-1-1",
                       "correlation_id": "updates/update-1", "entrypoint": "updates",
                       "phase": "train", "timestamp": "2026-12-01T12:00:00.000Z",
                       "capture_step": 1, "warmup_steps": 0, "device": "cuda:0",
                       "timing_mode": "host", "tags": {}}, separators=(",", ":"))]

    def rec(**r):
        out.append(json.dumps(r, separators=(",", ":")))

    def span(sid, name, t, **extra):
        rec(kind="span_start", id=sid, parent_id="s1", name=name, start_ns=t,
            span_kind="module", **extra)

    def end(sid, t0, t1):
        rec(kind="span_end", id=sid, duration_ns=t1 - t0)

    def mem(t, tensor, sid, dev, size, action, cat):
        rec(kind="memory", timestamp_ns=t, tensor_id=tensor, span_id=sid, device=dev,
            bytes=size, action=action, shape=[size], dtype="u8", category=cat)

    rec(kind="span_start", id="s1", name="updates", start_ns=0, span_kind="function")
    mem(1000, "p0", "s1", "cuda:0", 64 * MiB, "alloc", "parameter")
    for k in range(1, n + 1):
        t, last = start_ns(k), k == n
        u, f, b, o = "u%d" % k, "f%d" % k, "b%d" % k, "o%d" % k
        if not inferred:
            span(u, "update", t, cgprobe_update=k)
        span(f, "forward", t + 100_000, step="forward")
        mem(t + 200_000, "a%d" % k, f, "cuda:0", act_mib(k) * MiB, "alloc", "activation")
        mem(t + 300_000, "c%d" % k, f, "cpu", 4096 * k, "alloc", "other")
        end(f, t + 100_000, t + 3_000_000)
        span(b, "backward", t + 3_000_000, step="backward")
        mem(t + 3_100_000, "g%d" % k, b, "cuda:0", 16 * MiB, "alloc", "gradient")
        mem(t + 3_200_000, "a%d" % k, b, "cuda:0", act_mib(k) * MiB, "free", "activation")
        end(b, t + 3_000_000, t + 6_000_000)
        span(o, "optimizer", t + 6_000_000, step="optimizer")
        mem(t + 6_100_000, "g%d" % k, o, "cuda:0", 16 * MiB, "free", "gradient")
        mem(t + 6_200_000, "k%d" % k, o, "cuda:0", MiB, "alloc", "optimizer")
        mem(t + 6_300_000, "c%d" % k, o, "cpu", 4096 * k, "free", "other")
        if last and open_end:
            break
        end(o, t + 6_000_000, t + 7_500_000)
        if not inferred:
            end(u, t, t + 8_000_000)
    if not open_end:
        end("s1", 0, start_ns(n) + PERIOD)
    return "\n".join(out) + "\n"


def main(argv):
    if len(argv) < 2 or not argv[1].isdigit():
        print(__doc__, file=sys.stderr)
        return 2
    with open(argv[0], "w") as f:
        f.write(lines(int(argv[1]), "--inferred" in argv[2:], "--open" in argv[2:]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

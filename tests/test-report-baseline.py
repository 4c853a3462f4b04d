#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The HTML report against a baseline (cgtrace report --baseline BASE,
docs/report.md, "Against a baseline"), on runs whose differences are
known because this test wrote them.

    test-report-baseline.py data CGTRACE TMPDIR       the command and the pages' data
    test-report-baseline.py trace-selftest FILE       what the browser drew of the trace's page
    test-report-baseline.py job-selftest FILE         ... of the job's page and rank 1's

Two traces of four marked training updates: the baseline's activation is
16 MiB an update, 10 ms apart; the new run's 48 MiB (+32 MiB at the peak
on cuda:0), 15 ms apart, and it leaks 1 MiB on the host (one allocation
more). Two job folders of tests/lib/job_traces.py, the new one's rank 1
holding 32 MiB more on its GPU. Checked: the page's data holds BASE's
series per device (its highest BASE's peak, at most two samples a
bucket, so as small as the page's own), its updates' starts, and each
headline difference, signed, with its percentage; a job's processes
matched by rank, its GPU by UUID, BASE's lanes and each process's own
page against its match; a device of one run only compared with nothing; a bad BASE is one line naming it and status 1
(no page written), a folder against one trace a usage error (2).
"""
import copy
import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
from checks import check, verdict  # noqa: E402
import job_traces as jt  # noqa: E402

MiB = 1 << 20
UPDATES = 4
BASE = {"act": 16 * MiB, "period": 10_000_000, "leak": 0}
NEW = {"act": 48 * MiB, "period": 15_000_000, "leak": MiB}
PARAMS = 64 * MiB


def trace_lines(run):
    out = [{"kind": "meta", "schema": "candle-graph/trace/6", "run_id": "run-1", "correlation_id": "c",
            "entrypoint": "train", "phase": "train", "timestamp": "2026-12-01T12:00:00.000Z",
            "capture_step": 1, "warmup_steps": 0, "device": "cuda:0", "timing_mode": "host", "tags": {}},
           {"kind": "span_start", "id": "s1", "name": "train", "start_ns": 0, "span_kind": "function"}]

    def mem(t, tensor, dev, size, action, cat):
        out.append({"kind": "memory", "timestamp_ns": t, "tensor_id": tensor, "span_id": "s1", "device": dev,
                    "bytes": size, "action": action, "shape": [size], "dtype": "u8", "category": cat})

    mem(1000, "p", "cuda:0", PARAMS, "alloc", "parameter")
    period = run["period"]
    for k in range(1, UPDATES + 1):
        t = 1_000_000 + (k - 1) * period
        out.append({"kind": "span_start", "id": "u%d" % k, "parent_id": "s1", "name": "update", "start_ns": t,
                    "span_kind": "module", "cgprobe_update": k})
        mem(t + 1000, "c%d" % k, "cpu", 4096, "alloc", "other")
        mem(t + 100_000, "a%d" % k, "cuda:0", run["act"], "alloc", "activation")
        mem(t + 2000, "c%d" % k, "cpu", 4096, "free", "other")
        mem(t + period // 2, "a%d" % k, "cuda:0", run["act"], "free", "activation")
        out.append({"kind": "span_end", "id": "u%d" % k, "duration_ns": period - 1000})
    end = 1_000_000 + UPDATES * period
    if run["leak"]:
        mem(end - 1000, "leak", "cpu", run["leak"], "alloc", "other")
    out.append({"kind": "span_end", "id": "s1", "duration_ns": end})
    return "".join(json.dumps(r, separators=(",", ":")) + "\n" for r in out)


def expected(run):
    """Each device's peak, the bytes never freed, the allocations."""
    return {"peaks": {"cpu": max(4096, run["leak"]), "cuda:0": PARAMS + run["act"]},
            "leaked": PARAMS + run["leak"], "allocs": 1 + 2 * UPDATES + (1 if run["leak"] else 0)}


def run(cgtrace, *args):
    p = subprocess.run([cgtrace, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return p.returncode, p.stdout, p.stderr


def blocks(path):
    """The page's data blocks by id, parsed."""
    page = open(path, encoding="utf-8").read()
    found = re.findall(r'<script type="application/json" id="([^"]+)">(.*?)</script>', page, re.S)
    return {k: json.loads(v) for k, v in found}


def check_pair(pair, new, base, what):
    check(pair["new"] == new and pair["base"] == base, "%s: %r, expected new %r, base %r" % (what, pair, new, base))
    if new is None or base is None:
        return
    check(pair["delta"] == new - base, "%s: delta %r, expected %d" % (what, pair["delta"], new - base))
    want = 100.0 * (new - base) / base if base else None
    check(want is None and pair["pct"] is None or abs(pair["pct"] - want) < 1e-9,
          "%s: pct %r, expected %r" % (what, pair["pct"], want))


def check_series(dev, n_buckets, what):
    check(len(dev["t"]) == len(dev["v"]) and 0 < len(dev["t"]) <= 2 * n_buckets,
          "%s: %d samples for %d buckets" % (what, len(dev["t"]), n_buckets))
    check(max(dev["v"]) == dev["peak"], "%s: the series reaches %d, its peak is %d" % (what, max(dev["v"]), dev["peak"]))
    check(dev["t"] == sorted(dev["t"]), "%s: samples out of time order" % what)


def check_trace(cgtrace, tmp):
    base, new = os.path.join(tmp, "base.jsonl"), os.path.join(tmp, "new.jsonl")
    for path, r in ((base, BASE), (new, NEW)):
        with open(path, "w") as f:
            f.write(trace_lines(r))
    page = os.path.join(tmp, "trace.html")
    st, _, err = run(cgtrace, "report", "--baseline", base, "-o", page, new)
    check(st == 0 and not err, "report --baseline: status %d, %r" % (st, err))
    d = blocks(page)["cg-data"]
    b, eb, en = d["baseline"], expected(BASE), expected(NEW)
    check(b["trace"] == "base.jsonl", "the baseline's name: %r" % b["trace"])
    check([x["name"] for x in b["devices"]] == ["cpu", "cuda:0"], "the baseline's devices")
    for x in b["devices"]:
        check(x["peak"] == eb["peaks"][x["name"]], "baseline %s: peak %d" % (x["name"], x["peak"]))
        check_series(x, b["grid"]["n"], "baseline " + x["name"])
    u = b["updates"]
    check(u["from"] == "marked" and u["total"] == UPDATES and u["marks"]["update"] == list(range(1, UPDATES + 1)),
          "the baseline's updates: %r" % u)
    check(u["marks"]["t0"] == [1_000_000 + k * BASE["period"] for k in range(UPDATES)], "the baseline's update starts")
    diff = d["diff"]
    check([x["name"] for x in diff["devices"]] == ["cpu", "cuda:0"], "diff: the devices")
    for x in diff["devices"]:
        check_pair(x["peak"], en["peaks"][x["name"]], eb["peaks"][x["name"]], "diff: peak on " + x["name"])
    cuda = diff["devices"][1]["peak"]
    check(cuda["delta"] == 32 * MiB and abs(cuda["pct"] - 40.0) < 1e-9, "diff: cuda:0 +32 MiB (+40%%): %r" % cuda)
    check_pair(diff["leaked"], en["leaked"], eb["leaked"], "diff: never freed")
    check(diff["leaked"]["delta"] == MiB, "diff: 1 MiB more never freed")
    check_pair(diff["allocs"], en["allocs"], eb["allocs"], "diff: allocations")
    check(diff["allocs"]["delta"] == 1, "diff: one allocation more")

    # The baseline's series is bounded by its buckets, as the page's own: --buckets applies to both.
    st, _, err = run(cgtrace, "report", "--buckets", "16", "--baseline", base, "-o", page, new)
    d = blocks(page)["cg-data"]
    check(st == 0 and d["baseline"]["grid"]["n"] <= 16, "--buckets 16: the baseline's grid %r" % d["baseline"]["grid"])
    for x in d["baseline"]["devices"]:
        check_series(x, d["baseline"]["grid"]["n"], "--buckets 16: baseline " + x["name"])
    # Without --baseline, no member of it.
    st, _, err = run(cgtrace, "report", "-o", page, new)
    d = blocks(page)["cg-data"]
    check(st == 0 and "baseline" not in d and "diff" not in d, "a page without --baseline has none")

    # A bad BASE: one line naming it, status 1, the page left as it was.
    golden = os.path.join(os.path.dirname(os.path.abspath(__file__)), "golden", "traces")
    for bad in (os.path.join(tmp, "missing.cgt"), os.path.join(golden, "bad.jsonl")):
        with open(page, "w") as f:
            f.write("old")
        st, out, err = run(cgtrace, "report", "--baseline", bad, "-o", page, new)
        check(st == 1 and len(err.splitlines()) == 1 and bad in err, "bad BASE %s: status %d, %r" % (bad, st, err))
        check(open(page).read() == "old", "bad BASE %s: the page was replaced" % bad)
    st, _, err = run(cgtrace, "report", "--baseline", tmp, "-o", page, new)
    check(st == 2 and "--baseline" in err, "a folder against one trace: status %d, %r" % (st, err))
    # Two folders of one process each, other programs (train_a, train_b): the same program.
    for name, r, exe in (("one", BASE, "./train_a"), ("two", NEW, "./train_b")):
        os.makedirs(os.path.join(tmp, name), exist_ok=True)
        with open(os.path.join(tmp, name, "t.jsonl"), "w") as f:
            f.write(trace_lines(r).replace('"tags":{}', '"tags":{"pid":"7","executable":"%s"}' % exe, 1))
    st, _, err = run(cgtrace, "report", "--baseline", os.path.join(tmp, "one"), "-o", page,
                     os.path.join(tmp, "two"))
    procs = blocks(page)["cg-data"].get("processes", []) if st == 0 else []
    check(len(procs) == 1 and procs[0]["baseline"] == 0,
          "one process each side, other programs: matched %r" % [p.get("baseline") for p in procs])
    st, _, err = run(cgtrace, "report", new, "--baseline")
    check(st == 2, "--baseline without BASE: status %d" % st)


def write_job(folder, extra):
    """job_traces's job, rank 1's GPU block `extra` bytes larger."""
    procs = copy.deepcopy(jt.PROCESSES)
    for p in procs:
        if p["pid"] == 4102:
            p["records"] = [(t, a, dev, n + extra if dev != "cpu" else n, act, pre)
                            for t, a, dev, n, act, pre in p["records"]]
    saved, jt.PROCESSES = jt.PROCESSES, procs
    try:
        jt.write(folder)
        peak = max(v for _, v in jt.gpu_sum())
    finally:
        jt.PROCESSES = saved
    return procs, peak


def check_job(cgtrace, tmp):
    base_dir, new_dir = os.path.join(tmp, "jbase"), os.path.join(tmp, "jnew")
    _, base_peak = write_job(base_dir, 0)
    _, new_peak = write_job(new_dir, 32 * MiB)
    page = os.path.join(tmp, "job.html")
    st, _, err = run(cgtrace, "report", "--baseline", base_dir, "-o", page, new_dir)
    check(st == 0 and not err, "job report --baseline: status %d, %r" % (st, err))
    bl = blocks(page)
    j, bj = bl["cg-data"], bl["cg-base"]
    check(j["job"]["baseline"] == {"name": "jbase", "traces": 3}, "job.baseline: %r" % j["job"].get("baseline"))
    check(bj["format"] == "cgprobe-job-report/1" and len(bj["processes"]) == 3, "the baseline's block")
    for p in j["processes"]:
        m = p["baseline"]
        check(m is not None and bj["processes"][m]["pid"] == p["pid"],
              "process %d matched to %r" % (p["pid"], m if m is None else bj["processes"][m]["pid"]))
    g, bg = j["gpus"][0], bj["gpus"][j["gpus"][0]["baseline"]]
    check(g["key"] == bg["key"] == jt.UUID, "the GPU matched by UUID")
    check(bg["peak"] == base_peak and max(bg["v"]) == base_peak, "the baseline GPU's sum: %d, expected %d" % (bg["peak"], base_peak))
    check(g["peak"] == new_peak == base_peak + 32 * MiB, "the GPU's sum: %d, expected %d" % (g["peak"], new_peak))
    r1 = next(i for i, p in enumerate(j["processes"]) if p["pid"] == 4102)
    m = j["processes"][r1]["baseline"]
    lane = bl.get("cg-base-lane-%d" % m)
    check(lane is not None and {d["name"]: d["peak"] for d in lane["devices"]} == {"cpu": 3000, "cuda:1": 700},
          "rank 1's baseline lane: %r" % lane)
    # Two processes' traces of other devices: each device of either run, BASE's only last, with nulls.
    st, _, err = run(cgtrace, "report", "--baseline", os.path.join(base_dir, "rank1.jsonl"), "-o", page,
                     os.path.join(base_dir, "rank0.jsonl"))
    devs = blocks(page)["cg-data"]["diff"]["devices"] if st == 0 else []
    check([(x["name"], x["peak"]["new"], x["peak"]["base"]) for x in devs] ==
          [("cpu", 7000, 3000), ("cuda:0", 1000, None), ("cuda:1", None, 700)], "devices of one run only: %r" % devs)
    check([(x["peak"]["delta"], x["peak"]["pct"]) for x in devs[1:]] == [(1000, None), (-700, -100.0)],
          "a device of one run only: against 0, no percentage of nothing: %r" % devs[1:])
    own = bl["cg-p-%d" % r1]
    peaks = {x["name"]: x["peak"] for x in own["diff"]["devices"]}
    check(own["baseline"]["trace"] == "rank1.jsonl", "rank 1's page against %r" % own["baseline"]["trace"])
    check_pair(peaks["cuda:1"], 700 + 32 * MiB, 700, "rank 1's page: peak on cuda:1")
    check_pair(peaks["cpu"], 3000, 3000, "rank 1's page: peak on cpu")

    # One unreadable trace in BASE: said, status 1, no page.
    with open(os.path.join(base_dir, "broken.jsonl"), "w") as f:
        f.write("{not json\n")
    os.unlink(page)
    st, _, err = run(cgtrace, "report", "--baseline", base_dir, "-o", page, new_dir)
    check(st == 1 and "broken.jsonl" in err and len(err.splitlines()) == 1 and not os.path.exists(page),
          "an unreadable trace in BASE: status %d, %r" % (st, err))
    os.unlink(os.path.join(base_dir, "broken.jsonl"))
    print("job: GPU sum %d against %d, rank 1's cuda:1 +32 MiB" % (new_peak, base_peak))


def selftest(path, kind):
    r = json.load(open(path))
    check(r["rendered"] and r["errors"] == [], "the page: rendered %r, errors %r" % (r["rendered"], r["errors"]))
    if kind == "trace":
        e = expected(BASE)
        check(r["baseline_max"] == max(e["peaks"].values()), "the baseline's line reached %r" % r["baseline_max"])
        check(r["peak_shown"] == max(expected(NEW)["peaks"].values()), "the summary's peak %r" % r["peak_shown"])
        deltas = [d["delta"] for d in (r["deltas"] or [])]
        check(32 * MiB in deltas and MiB in deltas and 1 in deltas, "the cards' differences: %r" % r["deltas"])
        check(any(d["text"] == "baseline 80.0 MiB, +32.0 MiB (+40.0%)" for d in r["deltas"]),
              "cuda:0's card: %r" % r["deltas"])
        if "interact" in r:
            check(r["interact"] == "ok", "hover, zoom, click: %r" % r["interact"])
        return
    _, base_peak = write_job(os.path.join(os.path.dirname(path), "jcheck"), 0)
    gpu = r["gpus"][0]
    check(gpu["base_drawn_max"] == base_peak, "the GPU's baseline line reached %r, expected %d" % (gpu["base_drawn_max"], base_peak))
    for lane in r["lanes"]:
        check(lane["base_drawn_max"] is not None and lane["base_drawn_max"] > 0,
              "lane %s: no baseline line drawn (%r)" % (lane["name"], lane["base_drawn_max"]))
    r1 = next(lane for lane in r["lanes"] if lane["pid"] == 4102)
    check(r1["base_drawn_max"] == 3000, "rank 1's baseline line reached %r, expected 3000" % r1["base_drawn_max"])
    check(r["page"] and r["page"]["baseline_max"] == 3000, "rank 1's own page: its baseline's line %r" % r["page"])


def main(argv):
    if len(argv) == 3 and argv[0] == "data":
        check_trace(argv[1], argv[2])
        check_job(argv[1], argv[2])
    elif len(argv) == 2 and argv[0] in ("trace-selftest", "job-selftest"):
        selftest(argv[1], argv[0].split("-")[0])
    else:
        sys.exit(__doc__)
    return verdict()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

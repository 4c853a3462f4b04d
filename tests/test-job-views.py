#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The views of a job (docs/perfetto.md and docs/report.md, "A job") on the
small job of tests/lib/job_traces.py: two ranks on one GPU and a fork
child, whose every figure the test works out from the records it wrote.

    test-job-views.py data CGTRACE TMPDIR    the Perfetto file and the page's data
    test-job-views.py selftest FILE          what the browser drew (job-selftest.js)

The Perfetto file: one process per process, named by rank, pid and
command, sorted by rank then parent before child; each process's counters
and spans those of its trace's own export, shifted by its start on the
job's axis; one counter per physical GPU whose samples lie on the exact
sum of its processes' bytes and whose highest is the sum's peak, at most
two samples a bucket however coarse the buckets; a pid two
processes share made unique; an unreadable trace said and the rest kept.
The page: the job's block naming every process and the GPU's peak, each
process's lane and own page; a job's pages shared out past 8 processes.
"""
import json
import os
import re
import subprocess
import sys
from decimal import Decimal

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
from checks import check, verdict  # noqa: E402
import job_traces as jt  # noqa: E402

# rank 0 first, its fork child after it (parent before child), then rank 1.
ORDER = [4101, 4103, 4102]


def run(cgtrace, *args):
    p = subprocess.run([cgtrace, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return p.returncode, p.stdout, p.stderr


def us(ns):
    return Decimal(ns) / 1000


def proc(pid):
    return next(p for p in jt.PROCESSES if p["pid"] == pid)


def counters(events, pid, suffix):
    """{name: [(ts, args)]} of the counters of pid whose names end with suffix."""
    out = {}
    for e in events:
        if e["ph"] == "C" and e["pid"] == pid and e["name"].endswith(suffix):
            out.setdefault(e["name"], []).append((e["ts"], e["args"]))
    return out


def spans(events, pid):
    return sorted((e["name"], e["ts"], e["dur"]) for e in events if e["ph"] == "X" and e["pid"] == pid)


def single_export(cgtrace, tmp, p):
    """A trace's own Perfetto file: its device counters (on their pseudo-processes) and spans."""
    out = os.path.join(tmp, p["file"] + ".perfetto.json")
    st, _, err = run(cgtrace, "export", "--format", "perfetto", "-o", out, os.path.join(tmp, "job", p["file"]))
    check(st == 0, "%s: the trace's own export failed: %s" % (p["file"], err))
    with open(out) as f:
        ev = json.load(f, parse_float=Decimal)["traceEvents"]
    live = {}
    for e in ev:
        if e["ph"] == "C" and e["name"].endswith(" live"):
            live.setdefault(e["name"], []).append((e["ts"], e["args"]))
    return live, spans(ev, p["pid"])


def check_perfetto(cgtrace, tmp, summary):
    out = os.path.join(tmp, "job.json")
    st, _, err = run(cgtrace, "export", "--format", "perfetto", "-o", out, os.path.join(tmp, "job"))
    check(st == 0 and not err, "perfetto: status %d, stderr %r" % (st, err))
    text = open(out).read()
    d = json.loads(text, parse_float=Decimal)
    ev = d["traceEvents"]
    check(all({"ph", "pid", "tid", "ts", "name"} <= set(e) for e in ev), "perfetto: an event lacks ph, pid, tid, ts or name")
    stamps = re.findall(r'"(?:ts|dur)":([0-9.]+)', text)
    check(stamps and all(re.fullmatch(r"\d+\.\d{3}", s) for s in stamps), "perfetto: a ts or dur without three decimals")
    names = {e["pid"]: e["args"]["name"] for e in ev if e["ph"] == "M" and e["name"] == "process_name"}
    sort = {e["pid"]: e["args"]["sort_index"] for e in ev if e["ph"] == "M" and e["name"] == "process_sort_index"}
    gpu_pids = [pid for pid, n in names.items() if n.startswith(jt.UUID)]
    check(len(names) == len(jt.PROCESSES) + 1 and len(gpu_pids) == 1,
          "perfetto: a process track per process and one per GPU: %s" % names)
    for p in jt.PROCESSES:
        check(names.get(p["pid"]) == jt.label(p), "perfetto: pid %d named %r, not %r" % (p["pid"], names.get(p["pid"]), jt.label(p)))
    check(sorted(ORDER, key=lambda pid: sort.get(pid, 99)) == ORDER and sort.get(gpu_pids[0] if gpu_pids else 0, -1) == 3,
          "perfetto: sorted by rank, then parent before child, the GPU after: %s" % sort)
    starts = {q["pid"]: q["start_ns"] for q in summary["processes"]}
    for p in jt.PROCESSES:
        check(starts[p["pid"]] == jt.start_ns(p), "summary: pid %d starts at %d, not %d" % (p["pid"], starts[p["pid"]], jt.start_ns(p)))
        live, own_spans = single_export(cgtrace, tmp, p)
        shift = us(jt.start_ns(p))
        job_live = counters(ev, p["pid"], " live")
        check(set(job_live) == set(live) and len(live) == 2, "perfetto: pid %d's counters %s, its own export's %s" % (p["pid"], sorted(job_live), sorted(live)))
        for name, samples in live.items():
            want = [(ts + shift, args) for ts, args in samples]
            check(job_live.get(name) == want, "perfetto: pid %d's %s not its own export's, shifted by %s us" % (p["pid"], name, shift))
        want = sorted((n, ts + shift, dur) for n, ts, dur in own_spans)
        check(spans(ev, p["pid"]) == want, "perfetto: pid %d's spans not its own export's, shifted" % p["pid"])
    # The GPU: every sample on the exact sum, the highest its peak.
    exact = jt.gpu_sum()
    peak = max(v for _, v in exact)
    gpu = counters(ev, gpu_pids[0] if gpu_pids else -1, " live")
    samples = gpu.get(jt.UUID + " live", [])
    check(samples, "perfetto: no counter %s live" % jt.UUID)
    off = [(ts, a["bytes"]) for ts, a in samples if jt.gpu_sum_at(int(ts * 1000)) != a["bytes"]]
    check(not off, "perfetto: GPU samples off the exact sum: %s" % off)
    top = max((a["bytes"] for _, a in samples), default=None)
    check(top == peak == summary["gpus"][0]["peak_bytes"], "perfetto: the GPU counter peaks at %s, the exact sum at %d" % (top, peak))
    at = [ts for ts, a in samples if a["bytes"] == peak]
    check(at and at[0] == us(summary["gpus"][0]["peak_ns"]), "perfetto: the GPU's peak at %s" % at)
    inst = [e for e in ev if e["ph"] == "i" and e["name"] == jt.UUID + " peak"]
    check(len(inst) == 1 and inst[0]["args"]["bytes"] == peak and sum(s["bytes"] for s in inst[0]["args"]["shares"]) == peak,
          "perfetto: the GPU's peak instant and its shares")
    meta = d["metadata"]
    check(len(meta["processes"]) == 3 and all(m["perfetto_pid"] == m["pid"] for m in meta["processes"]),
          "perfetto: the metadata's processes")


def check_perfetto_coarse(cgtrace, tmp):
    """Four buckets over the job: at most two GPU samples each, the peak among them."""
    out = os.path.join(tmp, "coarse.json")
    st, _, err = run(cgtrace, "export", "--format", "perfetto", "--buckets", "4", "-o", out, os.path.join(tmp, "job"))
    check(st == 0, "--buckets 4: status %d: %s" % (st, err))
    ev = json.load(open(out), parse_float=Decimal)["traceEvents"]
    samples = [(e["ts"], e["args"]["bytes"]) for e in ev if e["ph"] == "C" and e["name"] == jt.UUID + " live"]
    peak = max(v for _, v in jt.gpu_sum())
    check(len(samples) <= 8 and max(v for _, v in samples) == peak, "--buckets 4: the GPU's samples %s" % samples)
    check(all(jt.gpu_sum_at(int(ts * 1000)) == v for ts, v in samples), "--buckets 4: a GPU sample off the exact sum")


def check_perfetto_edges(cgtrace, tmp):
    """A pid two machines share, and an unreadable trace beside readable ones."""
    two = os.path.join(tmp, "two")
    os.makedirs(two)
    text = open(os.path.join(tmp, "job", "rank0.jsonl")).read()
    for host in ("node1", "node2"):
        with open(os.path.join(two, host + ".jsonl"), "w") as f:
            f.write(text.replace('"hostname":"node1"', '"hostname":"%s"' % host).replace(jt.BOOT, jt.BOOT + host))
    out = os.path.join(tmp, "two.json")
    st, _, err = run(cgtrace, "export", "--format", "perfetto", "-o", out, two)
    check(st == 0, "two machines: status %d: %s" % (st, err))
    ev = json.load(open(out))["traceEvents"]
    names = {e["pid"]: e["args"]["name"] for e in ev if e["ph"] == "M" and e["name"] == "process_name"}
    procs = [pid for pid, n in names.items() if n.startswith("rank 0 (pid 4101)")]
    check(len(procs) == 2 and all(pid >= 1 << 23 for pid in procs), "two machines: pid 4101 twice, made unique: %s" % names)
    out = os.path.join(tmp, "part.json")
    st, _, err = run(cgtrace, "export", "--format", "perfetto", "-o", out, os.path.join(tmp, "job"), os.path.join(tmp, "missing.jsonl"))
    check(st == 1 and "missing.jsonl" in err, "an unreadable trace: status %d, stderr %r" % (st, err))
    meta = json.load(open(out))["metadata"]
    check(len(meta["processes"]) == 4 and "error" in meta["processes"][3] and "1 of 4" in meta.get("cgtrace_note", ""),
          "an unreadable trace: the file holds the others and says so")
    for cmd in (["export", "--format", "perfetto"], ["report"]):
        out = os.path.join(tmp, "none.out")
        st, _, err = run(cgtrace, *cmd, "-o", out, os.path.join(tmp, "a.jsonl"), os.path.join(tmp, "b.jsonl"))
        check(st == 1 and len(err.splitlines()) == 2 and not os.path.exists(out),
              "%s of no readable trace: status %d, %r, a file left" % (cmd[0], st, err))


def blocks(page):
    """The page's data blocks by id."""
    found = re.findall(r'<script type="application/json" id="([^"]+)">(.*?)</script>', page, re.S)
    return {k: json.loads(v) for k, v in found}


def check_report(cgtrace, tmp, summary):
    out = os.path.join(tmp, "job.html")
    st, _, err = run(cgtrace, "report", "-o", out, os.path.join(tmp, "job"))
    check(st == 0 and not err, "report: status %d, stderr %r" % (st, err))
    page = open(out, encoding="utf-8").read()
    check(not re.search(r"(src|href)\s*=|https?://|@import|url\(", page, re.I), "report: the page names a resource")
    check(page.count("</script>") == 2 + 2 * len(jt.PROCESSES), "report: a block ended early or one is missing")
    b = blocks(page)
    d = b["cg-data"]
    check(d["format"] == "cgprobe-job-report/1", "report: format %s" % d["format"])
    by_pid = {p["pid"]: i for i, p in enumerate(d["processes"])}
    check(set(by_pid) == set(ORDER), "report: the processes %s" % sorted(by_pid))
    for p in jt.PROCESSES:
        check(d["processes"][by_pid[p["pid"]]]["label"] == jt.label(p), "report: pid %d's label" % p["pid"])
    check(d["order"] == [by_pid[pid] for pid in ORDER], "report: the lanes' order %s" % d["order"])
    peak = max(v for _, v in jt.gpu_sum())
    g = d["gpus"][0] if d["gpus"] else {}
    check(len(d["gpus"]) == 1 and g["key"] == jt.UUID and g["peak"] == peak == summary["gpus"][0]["peak_bytes"],
          "report: the GPU's peak %s, the exact sum's %d" % (g.get("peak"), peak))
    check(g and max(g["v"]) == peak and g["t"][g["v"].index(peak)] == g["peak_ns"], "report: the GPU's series reaches its peak then")
    for q in summary["processes"]:
        i = by_pid[q["pid"]]
        own, lane = b.get("cg-p-%d" % i), b.get("cg-lane-%d" % i)
        check(own and own["format"] == "cgprobe-report/1" and own["trace"] == os.path.basename(q["path"]),
              "report: pid %d's own page" % q["pid"])
        want = {x["device"]: x["peak_bytes"] for x in q["devices"]}
        check(own and {x["name"]: x["peak"] for x in own["devices"]} == want, "report: pid %d's page's peaks" % q["pid"])
        check(lane and {x["name"]: max(x["v"]) for x in lane["devices"]} == want, "report: pid %d's lane's peaks" % q["pid"])
    check(d["job"]["page"]["buckets"] == 2000 and d["job"]["page"]["updates"] == 2000, "report: three pages are whole")


def check_report_bound(cgtrace, tmp):
    """40 processes: each page gets a share, 400 buckets and 100 allocations, shorter tables."""
    many = os.path.join(tmp, "many")
    os.makedirs(many)
    text = open(os.path.join(tmp, "job", "rank1.jsonl")).read()
    for k in range(40):
        with open(os.path.join(many, "p%02d.jsonl" % k), "w") as f:
            f.write(text.replace('"pid":"4102"', '"pid":"%d"' % (5000 + k)))
    out = os.path.join(tmp, "many.html")
    st, _, err = run(cgtrace, "report", "-o", out, many)
    check(st == 0, "40 processes: status %d: %s" % (st, err))
    b = blocks(open(out, encoding="utf-8").read())
    page = b["cg-data"]["job"]["page"]
    check((page["buckets"], page["allocs"], page["updates"], page["breakdown"]) == (400, 100, 400, 40),
          "40 processes: each page's share %s" % page)
    grids = [b["cg-p-%d" % i]["grid"]["n"] for i in range(40)]
    check(len(grids) == 40 and max(grids) <= 400 and all(b["cg-p-%d" % i]["updates"]["limit"] == 400 for i in range(40)),
          "40 processes: a page past its share: %s" % max(grids))


def check_selftest(path):
    r = json.load(open(path))
    check(r["rendered"] and not r["errors"], "browser: rendered %s, errors %s" % (r["rendered"], r["errors"]))
    lanes = r["lanes"] or []
    check([x["pid"] for x in lanes] == ORDER, "browser: the lanes %s" % [x["pid"] for x in lanes])
    for x in lanes:
        p = proc(x["pid"])
        check(x["name"] == jt.label(p), "browser: lane %d named %r" % (x["pid"], x["name"]))
        top = max(v for v, _ in jt.device_peaks(p).values())
        check(x["drawn_max"] == top, "browser: lane %d drew up to %s, its peak is %d" % (x["pid"], x["drawn_max"], top))
    peak = max(v for _, v in jt.gpu_sum())
    gpus = r["gpus"] or [{}]
    check(len(gpus) == 1 and gpus[0].get("drawn_max") == peak and (gpus[0].get("peak_marked") or {}).get("bytes") == peak,
          "browser: the GPU lane drew %s, marked %s, the sum's peak is %d" % (gpus[0].get("drawn_max"), gpus[0].get("peak_marked"), peak))
    check(r["table_rows"] == len(jt.PROCESSES), "browser: %s rows in the process table" % r["table_rows"])
    pg = r["page"] or {}
    rank1 = proc(4102)
    top = max(v for v, _ in jt.device_peaks(rank1).values())
    check(pg.get("trace") == rank1["file"] and pg.get("job_hidden") and jt.label(rank1) in (pg.get("nav") or ""),
          "browser: the click on pid 4102's lane opened %s" % pg)
    check(pg.get("peak_shown") == top and pg.get("timeline_max") == top,
          "browser: pid 4102's page shows %s, drew %s, its peak is %d" % (pg.get("peak_shown"), pg.get("timeline_max"), top))


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "selftest":
        check_selftest(sys.argv[2])
        return verdict()
    if len(sys.argv) != 4 or sys.argv[1] != "data":
        sys.exit(__doc__)
    cgtrace, tmp = sys.argv[2], sys.argv[3]
    jt.write(os.path.join(tmp, "job"))
    st, out, err = run(cgtrace, "summary", "--json", os.path.join(tmp, "job"))
    check(st == 0, "summary --json: %s" % err)
    summary = json.loads(out)
    check_perfetto(cgtrace, tmp, summary)
    check_perfetto_coarse(cgtrace, tmp)
    check_perfetto_edges(cgtrace, tmp)
    check_report(cgtrace, tmp, summary)
    check_report_bound(cgtrace, tmp)
    return verdict()


if __name__ == "__main__":
    sys.exit(main())

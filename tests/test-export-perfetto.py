#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""cgtrace export --format perfetto, checked against the Chrome Trace Event
rules a viewer relies on (docs/perfetto.md): the object form, ph/pid/tid/ts
on every event, ts and dur in microseconds with exactly three decimals,
complete events that nest per thread, counters whose summed categories
peak at the reported peak, instant events for each peak, out-of-memory
failure and the capture window, names for every process and thread, the
span cap and its note, a slice per training update on a thread of its own
carrying cgtrace steps --json's figures. On a hand-written trace of two
devices and two threads, on traces of six marked and six inferred updates
(tests/lib/updates_trace.py), and on the demo trainer run under the probe.
    test-export-perfetto.py CGTRACE LIBCGPROBE DEMO
"""
import json
import os
import re
import subprocess
import sys
import tempfile
from decimal import Decimal

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
from checks import check, verdict  # noqa: E402
import updates_trace  # noqa: E402


META = ('{"kind":"meta","schema":"candle-graph/trace/6","run_id":"run-900-1",'
        '"correlation_id":"two/update-1","entrypoint":"two","phase":"train",'
        '"timestamp":"2026-11-29T12:00:00.000Z","capture_step":1,"warmup_steps":0,'
        '"device":"cuda:0","timing_mode":"host","tags":{%s}}')


def span(sid, name, start, parent=None, thread=None, tname=None, kind="function", step=None):
    r = {"kind": "span_start", "id": sid}
    if parent:
        r["parent_id"] = parent
    r.update({"name": name, "start_ns": start, "span_kind": kind})
    if step:
        r["step"] = step
    if thread is not None:
        r["cgprobe_thread"] = thread
    if tname:
        r["cgprobe_thread_name"] = tname
    return json.dumps(r, separators=(",", ":"))


def end(sid, dur):
    return '{"kind":"span_end","id":"%s","duration_ns":%d}' % (sid, dur)


def mem(ts, tid, sid, dev, nbytes, action, cat, op="cudaMalloc"):
    return ('{"kind":"memory","timestamp_ns":%d,"tensor_id":"%s","span_id":"%s","op_name":"%s",'
            '"device":"%s","bytes":%d,"action":"%s","shape":[%d],"dtype":"u8","category":"%s"}'
            % (ts, tid, sid, op, dev, nbytes, action, nbytes, cat))


def devmem(ts, dev, used, free, extra=""):
    return ('{"kind":"device_memory","timestamp_ns":%d,"device":"%s","used_bytes":%d,'
            '"free_bytes":%d%s}' % (ts, dev, used, free, extra))


def hand_trace(capture):
    """Two devices, spans on two threads (one left open, one outliving its parent), checkpoints
    and an out-of-memory failure; capture: the CGPROBE_CAPTURE=update tags."""
    tags = '"pid":"900"' + (',"cgprobe_capture":"update"' if capture else "")
    lines = [
        META % tags,
        span("s1", "two", 0),
        span("s2", "step", 1000, "s1", 901, "main", step="forward"),
        span("s3", "matmul", 2000, "s2", 901, kind="op"),
        mem(1500, "0xa", "s2", "cuda:0", 1000, "alloc", "parameter"),
        mem(2500, "0xb", "s3", "cuda:0", 3000, "alloc", "activation", "matmul"),
        devmem(2600, "cuda:0", 8000, 100000, ',"reserved_bytes":6000'),
        span("s4", "backward", 3000, "s1", 902, "worker", step="backward"),
        mem(3100, "0xc", "s4", "cuda:1", 700, "alloc", "gradient"),
        mem(4000, "0xb", "s3", "cuda:0", 3000, "free", "activation", "cudaFree"),
        span("s5", "left-open", 5000, "s4", 902),
        mem(6000, "0xd", "s5", "cuda:1", 900, "alloc", "optimizer"),
        end("s3", 10000),
        mem(7000, "0xe", "s2", "cuda:0", 500, "alloc", "gradient"),
        devmem(9000, "cuda:0", 9000, 99000, ',"oom_request_bytes":2000000'),
        mem(9500, "0xc", "s4", "cuda:1", 700, "free", "gradient", "cudaFree"),
        end("s2", 50000),
        end("s4", 40000),
        span("s6", "open-at-end", 60000, "s1", 902),
        mem(70000, "0xf", "s6", "cuda:1", 100, "alloc", "other"),
        end("s1", 100000),
    ]
    return "\n".join(lines) + "\n"


def run(*args, stdin=None):
    p = subprocess.run(list(args), capture_output=True, text=True, input=stdin)
    return p.returncode, p.stdout, p.stderr


def export(cgtrace, trace, out, *extra):
    if os.path.exists(out):
        os.unlink(out)
    rc, _, err = run(cgtrace, "export", "--format", "perfetto", *extra, "-o", out, trace)
    check(rc == 0, "%s: export exits 0 (%s)" % (trace, err.strip()))
    if rc != 0:
        return None, None
    with open(out) as f:
        text = f.read()
    return text, json.loads(text, parse_float=Decimal)


def ns(v):
    return int(Decimal(v) * 1000)


def peaks_of(cgtrace, trace):
    rc, out, err = run(cgtrace, "memory", "--json", trace)
    check(rc == 0, "memory --json: " + err.strip())
    return {d["device"]: (d["peak_bytes"], d["peak_timestamp_ns"]) for d in
            json.loads(out)["by_device"]} if rc == 0 else {}


def nest_ok(events):
    """X events of one thread nest: each starts after the open one ends, or ends within it."""
    by_thread = {}
    for e in events:
        by_thread.setdefault((e["pid"], e["tid"]), []).append((ns(e["ts"]), ns(e["ts"]) + ns(e["dur"])))
    for spans in by_thread.values():
        spans.sort(key=lambda s: (s[0], -s[1]))
        stack = []
        for s, e in spans:
            while stack and stack[-1] <= s:
                stack.pop()
            if stack and e > stack[-1]:
                return False
            stack.append(e)
    return True


def check_updates(name, by, doc, cgtrace, trace):
    """The training updates: a slice each on the thread "training updates", as cgtrace steps
    --json says; returns the slices by update number."""
    rc, out, err = run(cgtrace, "steps", "--json", trace)
    check(rc == 0, "%s: steps --json: %s" % (name, err.strip()))
    if rc != 0:
        return {}
    st = json.loads(out)
    tids = {(e["pid"], e["tid"]) for e in by.get("M", [])
            if e["name"] == "thread_name" and e["args"]["name"] == "training updates"}
    check(len(tids) == (1 if st["updates"] else 0), "%s: %d threads of updates" % (name, len(tids)))
    slices = [e for e in by.get("X", []) if (e["pid"], e["tid"]) in tids]
    check(all(e["cat"] == "update" and e["name"] == "update %d" % e["args"]["update"] for e in slices),
          name + ": slices named \"update N\", of category update")
    got = {e["args"]["update"]: e for e in slices}
    check(sorted(got) == sorted(u["update"] for u in st["updates"]),
          "%s: the updates %s, cgtrace steps has %s" % (name, sorted(got), [u["update"] for u in st["updates"]]))
    meta = doc["metadata"]
    check((meta.get("updates"), meta.get("updates_kept"), meta.get("updates_from")) ==
          (len(st["updates"]), len(got), st["updates_from"]), "%s: metadata of updates" % name)
    for u in st["updates"]:
        e = got.get(u["update"])
        if e is None:
            continue
        a = e["args"]
        check(ns(e["ts"]) == u["start_ns"] and ns(e["ts"]) + ns(e["dur"]) == u["end_ns"],
              "%s: update %d from %d to %d ns" % (name, u["update"], u["start_ns"], u["end_ns"]))
        check((a["warmup"], a["open"], a["updates_from"]) == (u["warmup"], u["open"], st["updates_from"]),
              "%s: update %d's flags" % (name, u["update"]))
        want = {d.pop("device"): d for d in u["devices"]}
        check(a["devices"] == want, "%s: update %d's figures %s, cgtrace steps says %s" %
              (name, u["update"], a["devices"], want))
    return got


def check_rules(name, text, doc, cgtrace, trace):
    """The rules every export follows; returns the events by phase."""
    check(doc.get("displayTimeUnit") == "ns", name + ": displayTimeUnit ns")
    check(isinstance(doc.get("traceEvents"), list), name + ": traceEvents is a list")
    check(isinstance(doc.get("metadata"), dict), name + ": metadata is an object")
    evs = doc["traceEvents"]
    for e in evs:
        missing = [k for k in ("ph", "pid", "tid", "ts", "name") if k not in e]
        if missing:
            check(False, "%s: event without %s: %s" % (name, missing, e))
            break
    else:
        check(True, "")
    # Every ts and dur in the raw text: digits, a point, exactly three decimals.
    ts = re.findall(r'"(ts|dur)":([^,}]*)', text)
    bad = [v for _, v in ts if not re.fullmatch(r"\d+\.\d{3}", v)]
    check(not bad, "%s: ts/dur with three decimals, not %s" % (name, bad[:3]))
    n_dur = sum(1 for e in evs if "dur" in e)
    check(len(ts) == len(evs) + n_dur, name + ": every ts and dur seen in the text")
    by = {}
    for e in evs:
        by.setdefault(e["ph"], []).append(e)
    xs = by.get("X", [])
    check(all(Decimal(e["dur"]) >= 0 for e in xs), name + ": dur >= 0")
    check(nest_ok(xs), name + ": complete events nest per thread")
    # Names: the program, every device, every thread with spans.
    procs = {e["pid"]: e["args"]["name"] for e in by.get("M", []) if e["name"] == "process_name"}
    threads = {(e["pid"], e["tid"]) for e in by.get("M", []) if e["name"] == "thread_name"}
    check(all(e["pid"] in procs for e in evs), name + ": every pid named")
    check(all((e["pid"], e["tid"]) in threads for e in xs), name + ": every span's thread named")
    # Counters: the summed categories' highest point is the device's peak, at its instant.
    peaks = peaks_of(cgtrace, trace)
    for dev, (peak, peak_ns) in peaks.items():
        pid = [p for p, n in procs.items() if n == dev + " memory"]
        check(len(pid) == 1, "%s: a process for %s" % (name, dev))
        live = [e for e in by.get("C", []) if pid and e["pid"] == pid[0] and e["name"] == dev + " live"]
        check(all(list(e["args"]) == ["parameter", "activation", "gradient", "optimizer", "other"]
                  for e in live), "%s: %s: five categories in order" % (name, dev))
        top = max(live, key=lambda e: sum(e["args"].values()), default=None)
        check(top is not None and sum(top["args"].values()) == peak,
              "%s: %s: counters peak at %d" % (name, dev, peak))
        check(top is not None and ns(top["ts"]) == peak_ns,
              "%s: %s: counter peak at %d ns" % (name, dev, peak_ns))
        times = [ns(e["ts"]) for e in live]
        check(times == sorted(set(times)), "%s: %s: one sample per instant, in order" % (name, dev))
        marks = [e for e in by.get("i", []) if pid and e["pid"] == pid[0] and e["name"] == dev + " peak"]
        check(len(marks) == 1 and marks[0]["args"]["bytes"] == peak and ns(marks[0]["ts"]) == peak_ns,
              "%s: %s: a peak instant" % (name, dev))
    by["updates"] = check_updates(name, by, doc, cgtrace, trace)
    return by, procs


def main():
    if len(sys.argv) != 4:
        print("usage: test-export-perfetto.py CGTRACE LIBCGPROBE DEMO", file=sys.stderr)
        return 2
    cgtrace, probe, demo = (os.path.abspath(a) for a in sys.argv[1:])
    overlap = [{"pid": 1, "tid": 1, "ts": "0.000", "dur": "2.000"},
               {"pid": 1, "tid": 1, "ts": "1.000", "dur": "2.000"}]
    check(not nest_ok(overlap) and nest_ok(overlap[:1]), "the nesting check catches an overlap")
    with tempfile.TemporaryDirectory() as tmp:
        hand = os.path.join(tmp, "two.jsonl")
        with open(hand, "w") as f:
            f.write(hand_trace(False))
        out = os.path.join(tmp, "two.json")
        text, doc = export(cgtrace, hand, out)
        if doc is not None:
            by, procs = check_rules("hand", text, doc, cgtrace, hand)
            xs = {e["args"]["span_id"]: e for e in by.get("X", []) if "span_id" in e["args"]}
            check(sorted(xs) == ["s1", "s2", "s3", "s4", "s5", "s6"], "hand: every span")
            check(xs["s3"]["args"].get("kind") == "op" and xs["s3"]["cat"] == "op", "hand: kind op")
            check(xs["s2"]["args"].get("step") == "forward", "hand: step forward")
            check(xs["s2"]["tid"] == 901 and xs["s4"]["tid"] == 902, "hand: spans on their threads")
            check(xs["s1"]["tid"] not in (901, 902), "hand: the root on a thread of its own")
            check(xs["s3"]["ts"] == Decimal("2.000") and xs["s3"]["dur"] == Decimal("10.000"),
                  "hand: s3 at 2 us for 10 us")
            check("unclosed" in xs["s6"]["args"] and ns(xs["s6"]["ts"]) + ns(xs["s6"]["dur"]) == 100000,
                  "hand: an open span drawn to the trace's end")
            check("unclosed" in xs["s5"]["args"] and "clamped" in xs["s5"]["args"] and
                  ns(xs["s5"]["ts"]) + ns(xs["s5"]["dur"]) == 43000,
                  "hand: an open span inside a closed one ends with it")
            names = {(e["pid"], e["tid"]): e["args"]["name"] for e in by["M"] if e["name"] == "thread_name"}
            check(names.get((900, 901)) == "main" and names.get((900, 902)) == "worker",
                  "hand: thread names")
            check(procs.get(900) == "two (run-900-1)", "hand: the process named")
            check("cuda:1 memory" in procs.values(), "hand: the second device")
            ooms = [e for e in by.get("i", []) if e["name"] == "cuda:0 out of memory"]
            check(len(ooms) == 1 and ooms[0]["args"]["request_bytes"] == 2000000 and
                  ns(ooms[0]["ts"]) == 9000, "hand: the out-of-memory instant")
            cks = [e for e in by.get("C", []) if e["name"] == "cuda:0 device"]
            check([(ns(e["ts"]), e["args"].get("used"), e["args"].get("reserved")) for e in cks] ==
                  [(2600, 8000, 6000), (9000, 9000, None)], "hand: device checkpoints")
            check(not [e for e in by.get("i", []) if e["name"].startswith("capture")],
                  "hand: no capture window")
            check(doc["metadata"].get("spans") == 6 and "cgtrace_note" not in doc["metadata"],
                  "hand: metadata without a note")
        # The span cap: the two longest, said in the metadata.
        text, doc = export(cgtrace, hand, out, "--max-spans", "2")
        if doc is not None:
            by, _ = check_rules("cap", text, doc, cgtrace, hand)
            kept = sorted(e["args"]["span_id"] for e in by.get("X", []) if "span_id" in e["args"])
            check(kept == ["s1", "s2"], "cap: the two longest kept, not %s" % kept)
            check(doc["metadata"].get("cgtrace_note") == "2 of 6 spans kept: the longest",
                  "cap: the note, not %s" % doc["metadata"].get("cgtrace_note"))
        # An existing file is replaced (through a temporary file: tests/test-output.sh).
        with open(out, "w") as f:
            f.write("old")
        rc, _, err = run(cgtrace, "export", "--format", "perfetto", "-o", out, hand)
        with open(out) as f:
            check(rc == 0 and f.read() != "old", "an existing file is replaced")
        # The capture window.
        with open(hand, "w") as f:
            f.write(hand_trace(True))
        text, doc = export(cgtrace, hand, out)
        if doc is not None:
            by, _ = check_rules("capture", text, doc, cgtrace, hand)
            cap = {e["name"]: ns(e["ts"]) for e in by.get("i", []) if e["name"].startswith("capture")}
            check(cap == {"capture window begins": 0, "capture window ends": 100000},
                  "capture: begin and end instants, not %s" % cap)
        # Six marked updates, the last open; six inferred ones (no span of their own).
        for kind, extra in (("marked", ["--open"]), ("inferred", ["--inferred"])):
            trace = os.path.join(tmp, kind + ".jsonl")
            with open(trace, "w") as f:
                f.write(updates_trace.lines(6, "--inferred" in extra, "--open" in extra))
            text, doc = export(cgtrace, trace, out)
            if doc is None:
                continue
            by, _ = check_rules(kind, text, doc, cgtrace, trace)
            ups = by["updates"]
            check(sorted(ups) == [1, 2, 3, 4, 5, 6], "%s: six updates, not %s" % (kind, sorted(ups)))
            if len(ups) != 6:
                continue
            cuda = ups[5]["args"]["devices"]["cuda:0"]
            check(cuda["peak_bytes"] == updates_trace.peak(5) == 108 << 20, kind + ": update 5's peak, 108 MiB")
            check([u for u in ups if ups[u]["args"]["warmup"]] == [1], kind + ": update 1 is warm-up")
            check([u for u in ups if ups[u]["args"]["open"]] == ([6] if kind == "marked" else []),
                  kind + ": the open update")
            if kind == "marked":
                check(ns(ups[2]["ts"]) == updates_trace.start_ns(2) and ns(ups[2]["dur"]) == 8000000,
                      "marked: update 2 at 11 ms for 8 ms")
                check(cuda["peak_ns"] == updates_trace.peak_ns(5), "marked: update 5's peak at 44.1 ms")
        # Bad options.
        for args in (["--buckets", "0"], ["--buckets", "x"], ["--max-spans", "-1"],
                     ["--by", "total"], ["--order", "stream"]):
            rc, _, _ = run(cgtrace, "export", "--format", "perfetto", *args, hand)
            check(rc == 2, "usage error for %s" % args)
        rc, _, _ = run(cgtrace, "export", "--buckets", "5", hand)
        check(rc == 2, "--buckets without perfetto: usage error")
        # The demo trainer under the probe: threads, steps, a real peak.
        asan = b"__asan_init" in open(probe, "rb").read()
        if asan:
            print("SKIP demo: the probe is built with AddressSanitizer")
        else:
            real = os.path.join(tmp, "demo.cgt")
            env = dict(os.environ, LD_PRELOAD=probe, CGPROBE_OUTPUT=real, CGPROBE_QUIET="1")
            p = subprocess.run([demo, "--steps", "3", "--threads", "2"], env=env,
                               capture_output=True)
            check(p.returncode == 0, "the demo under the probe")
            text, doc = export(cgtrace, real, os.path.join(tmp, "demo.json"), "--buckets", "500")
            if doc is not None:
                by, _ = check_rules("demo", text, doc, cgtrace, real)
                steps = [e for e in by.get("X", []) if e["name"] == "step"]
                check(len(steps) == 3, "demo: three step spans")
                check(len(by["updates"]) >= 3, "demo: its updates, %d" % len(by["updates"]))
                check(len({e["tid"] for e in by.get("X", []) if "span_id" in e["args"]}) > 2,
                      "demo: spans on several threads")
                check(doc["metadata"].get("buckets", 0) <= 500, "demo: at most 500 buckets")
                n_c = sum(1 for e in by.get("C", []) if e["name"].endswith(" live"))
                check(n_c <= 2 * 500, "demo: two samples per bucket at most (%d)" % n_c)
    return verdict()


if __name__ == "__main__":
    sys.exit(main())

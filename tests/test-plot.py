#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""What test-plot.sh asks of a plot, and the large trace it plots.

  test-plot.py check SVG MEMORY_JSON [--max-bytes N] [--devices N]
                     [--legend NAME,...] [--bands STEP,...]
                     [--updates STEPS_JSON] [--update-marks all|thinned]
      The SVG is well-formed XML; each panel's peak (value, time, label)
      is cgtrace memory --json's; the stacked area's highest point is the
      peak's dot, on a plateau that holds it; tick labels do not overlap;
      no font is under 11 px; the file is at most N bytes. With --updates
      (cgtrace steps --json): the training updates' starts are drawn where
      those updates start, their numbers beside them, not overlapping;
      all: a line and a number for every update; thinned: lines only at
      the numbers, fewer than the updates.
  test-plot.py gen OUT STEPS
      A JSONL trace of STEPS training steps on cpu, cuda:0 and cuda:1.
Prints what failed and exits 1.
"""
import json
import os
import re
import sys
import xml.etree.ElementTree as ET

NS = "{http://www.w3.org/2000/svg}"
UNITS = ["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"]


def fmt_bytes(b):
    """cgtrace plot's plot_bytes_text."""
    v, u = float(b), 0
    while v >= 1024 and u + 1 < len(UNITS):
        v /= 1024
        u += 1
    if u + 1 < len(UNITS) and round(v * 100) / 100 >= 1024:
        v /= 1024
        u += 1
    return "%d B" % b if u == 0 else "%.2f %s" % (v, UNITS[u])


def fmt_time(ns):
    """cgtrace plot's plot_time_text."""
    if ns >= 10**9:
        return "%.2f s" % (ns / 1e9)
    if ns >= 10**6:
        return "%.2f ms" % (ns / 1e6)
    if ns >= 10**3:
        return "%.2f us" % (ns / 1e3)
    return "%d ns" % ns


def path_points(d):
    """(x, y) after each command of an M/L/H/V/Z path, and (x0, x1, y) per H."""
    pts, flats = [], []
    x = y = None
    for cmd, args in re.findall(r"([MLHVZ])([^MLHVZ]*)", d):
        nums = [float(n) for n in args.split()]
        if cmd in "ML":
            x, y = nums
        elif cmd == "H":
            flats.append((x, nums[0], y))
            x = nums[0]
        elif cmd == "V":
            y = nums[0]
        if cmd != "Z":
            pts.append((x, y))
    return pts, flats


class Check:
    def __init__(self):
        self.failed = 0

    def expect(self, cond, what):
        if not cond:
            print("FAIL", what)
            self.failed += 1


def check_ticks(c, panel, device):
    yt = panel.findall("./" + NS + "g[@class='y-ticks']/" + NS + "text")
    ys = sorted(float(t.get("y")) for t in yt)
    c.expect(len(ys) >= 2, "%s: %d y ticks" % (device, len(ys)))
    for a, b in zip(ys, ys[1:]):
        c.expect(b - a >= 14, "%s: y tick labels %.1f px apart" % (device, b - a))
    xt = panel.findall("./" + NS + "g[@class='x-ticks']/" + NS + "text")
    labels = sorted((float(t.get("x")), t.text) for t in xt)
    for (xa, ta), (xb, tb) in zip(labels, labels[1:]):
        # DejaVu Sans digits are 0.64 em wide: the labels' halves, and a gap.
        need = (len(ta) + len(tb)) / 2 * 12 * 0.64 + 4
        c.expect(xb - xa >= need, "%s: x ticks %s and %s %.1f px apart" % (device, ta, tb, xb - xa))
    return len(labels)


def check_panel(c, panel, mem):
    device = panel.get("data-device")
    dev = next((d for d in mem["by_device"] if d["device"] == device), None)
    c.expect(dev is not None, "panel of %s, a device cgtrace memory does not know" % device)
    if dev is None:
        return 0
    peak, at = dev["peak_bytes"], dev["peak_timestamp_ns"]
    c.expect(int(panel.get("data-peak-bytes")) == peak,
             "%s: data-peak-bytes %s, memory says %d" % (device, panel.get("data-peak-bytes"), peak))
    c.expect(int(panel.get("data-peak-ns")) == at,
             "%s: data-peak-ns %s, memory says %d" % (device, panel.get("data-peak-ns"), at))
    label = panel.find(".//" + NS + "text[@class='peak-label']")
    want = "peak %s at %s" % (fmt_bytes(peak), fmt_time(at))
    c.expect(label is not None and label.text == want,
             "%s: peak label %r, expected %r" % (device, label is not None and label.text, want))
    dot = panel.find(".//" + NS + "circle[@class='peak']")
    cx, cy = float(dot.get("cx")), float(dot.get("cy"))
    top, bottom = float(panel.get("data-plot-top")), float(panel.get("data-plot-bottom"))
    c.expect(top < cy <= bottom, "%s: the peak's dot at y %.1f outside [%.1f, %.1f]" %
             (device, cy, top, bottom))
    areas = panel.findall(".//" + NS + "path[@class='area']")
    c.expect(areas, "%s: no stacked area" % device)
    all_pts, all_flats = [], []
    for a in areas:
        pts, flats = path_points(a.get("d"))
        all_pts += pts
        all_flats += flats
    if not all_pts:
        return 0
    high = min(y for _, y in all_pts)
    c.expect(abs(high - cy) < 1e-9,
             "%s: the stack's highest point at y %.1f, the peak's dot at %.1f" % (device, high, cy))
    c.expect(any(y == high and min(x0, x1) - 0.051 <= cx <= max(x0, x1) + 0.051
                 for x0, x1, y in all_flats),
             "%s: no plateau at the peak's height holds the dot's x %.1f" % (device, cx))
    c.expect(all(top - 1e-9 <= y <= bottom + 1e-9 for _, y in all_pts),
             "%s: the stack leaves its panel" % device)
    return check_ticks(c, panel, device)


def check_updates(c, root, steps, marks):
    """The updates' starts: lines where updates start, numbers beside them."""
    ups = steps["updates"]
    c.expect(int(root.get("data-updates")) == len(ups),
             "data-updates %s, cgtrace steps has %d" % (root.get("data-updates"), len(ups)))
    path = root.find("./%sdefs/%spath[@id='updates']" % (NS, NS))
    panels = root.findall(NS + "g[@class='panel']")
    if not ups:
        c.expect(path is None and root.find(".//%suse[@class='updates']" % NS) is None,
                 "update starts drawn for a trace without updates")
        return
    c.expect(path is not None, "no path of update starts in <defs>")
    if path is None:
        return
    xs = [x for x, y in path_points(path.get("d"))[0] if y == 0]
    c.expect(len(xs) == int(path.get("data-lines")), "data-lines %s, %d lines" %
             (path.get("data-lines"), len(xs)))
    t0, t1 = int(root.get("data-start-ns")), int(root.get("data-end-ns"))
    left, right = float(panels[0].get("data-plot-left")), float(panels[0].get("data-plot-right"))

    def x_of(t):
        t = min(max(t, t0), t1)
        return left + (t - t0) / (t1 - t0) * (right - left)

    starts = [x_of(u["start_ns"]) for u in ups]
    c.expect(xs == sorted(xs), "update starts out of order")
    c.expect(all(any(abs(x - s) <= 0.051 for s in starts) for x in xs),
             "a line where no update starts: %s" % [x for x in xs if all(abs(x - s) > 0.051 for s in starts)][:3])
    for p in panels:
        uses = p.findall(NS + "use[@class='updates']")
        c.expect(len(uses) == 1, "%s: %d uses of the update starts" % (p.get("data-device"), len(uses)))
        labels = [(float(t.get("x")), t.text) for t in p.findall("./%sg[@class='update-labels']/%stext" % (NS, NS))]
        c.expect(len(labels) == int(path.get("data-labels")), "%s: %d labels, data-labels %s" %
                 (p.get("data-device"), len(labels), path.get("data-labels")))
        for x, text in labels:
            u = [k for k, s in enumerate(starts) if str(ups[k]["update"]) == text]
            c.expect(u and abs(starts[u[0]] + 2 - x) <= 0.051,
                     "label %s at x %.1f, not beside its update's start" % (text, x))
        for (xa, ta), (xb, tb) in zip(labels, labels[1:]):
            c.expect(xb - xa >= len(ta) * 11 * 0.6 + 6 - 0.1, "labels %s and %s overlap" % (ta, tb))
        if marks == "all":
            c.expect([t for _, t in labels] == [str(u["update"]) for u in ups], "%s: a number for every update: %s" %
                     (p.get("data-device"), [t for _, t in labels]))
        elif marks == "thinned":
            c.expect(len(xs) == len(labels) < len(ups), "thinned: %d lines, %d labels, %d updates" %
                     (len(xs), len(labels), len(ups)))
    if marks == "all":
        c.expect(len(xs) == len(ups) and all(abs(x - s) <= 0.051 for x, s in zip(xs, starts)),
                 "a line at every update's start: %d lines, %d updates" % (len(xs), len(ups)))


def check(argv):
    svg, memory = argv[0], argv[1]
    opts = dict(zip(argv[2::2], argv[3::2]))
    c = Check()
    try:
        root = ET.parse(svg).getroot()
    except ET.ParseError as e:
        print("FAIL %s is not well-formed XML: %s" % (svg, e))
        return 1
    with open(memory) as f:
        mem = json.load(f)
    c.expect(root.tag == NS + "svg", "the root is %s" % root.tag)
    panels = root.findall(NS + "g[@class='panel']")
    if "--devices" in opts:
        c.expect(len(panels) == int(opts["--devices"]),
                 "%d panels, expected %s" % (len(panels), opts["--devices"]))
    drawn = {p.get("data-device") for p in panels}
    peaks = [d["peak_bytes"] for d in mem["by_device"] if d["device"] in drawn]
    c.expect(int(root.get("data-peak-bytes")) == max(peaks, default=0),
             "root data-peak-bytes %s, memory's highest %s" % (root.get("data-peak-bytes"), peaks))
    x_labels = sum(check_panel(c, p, mem) for p in panels)
    c.expect(x_labels >= 2, "%d time labels" % x_labels)
    for el in root.iter():
        fs = el.get("font-size")
        if fs is not None:
            c.expect(float(fs) >= 11, "a %s in a %s px font" % (el.tag, fs))
    legend = [t.text for t in root.findall("./" + NS + "g[@class='legend']/" + NS + "text")]
    for name in filter(None, opts.get("--legend", "").split(",")):
        c.expect(name in legend, "no %r in the legend %s" % (name, legend))
    bands = {u.get("data-step") for u in root.iter(NS + "use") if u.get("class") == "bands"}
    for step in filter(None, opts.get("--bands", "").split(",")):
        c.expect(step in bands, "no %s bands (%s)" % (step, sorted(bands)))
    # Merged bands: never more than one a pixel per step kind.
    width = float(root.get("width"))
    for p in root.iter(NS + "path"):
        if p.get("data-bands") is not None:
            c.expect(int(p.get("data-bands")) <= width, "%s bands" % p.get("data-bands"))
    if "--updates" in opts:
        with open(opts["--updates"]) as f:
            check_updates(c, root, json.load(f), opts.get("--update-marks"))
    size = os.path.getsize(svg)
    if "--max-bytes" in opts:
        c.expect(size <= int(opts["--max-bytes"]),
                 "%s: %d bytes, at most %s wanted" % (svg, size, opts["--max-bytes"]))
    return 1 if c.failed else 0


META = ('{"kind":"meta","schema":"candle-graph/trace/6","run_id":"run-1-1","correlation_id":'
        '"gen/update-1","entrypoint":"gen","phase":"train","timestamp":"2026-12-01T12:00:00.000Z",'
        '"capture_step":1,"warmup_steps":0,"device":"cuda:0","timing_mode":"host","tags":{}}\n')


def gen(argv):
    """Steps of forward, backward, optimizer spans with allocations on three devices."""
    out, steps = argv[0], int(argv[1])
    lines = [META, '{"kind":"span_start","id":"s1","name":"gen","start_ns":0,'
             '"span_kind":"function"}\n']
    ids, sid, t, tid = [], 1, 1000, 0
    cats = {"forward": "activation", "backward": "gradient", "optimizer": "optimizer"}

    def mem(ts, span, dev, tensor, size, action, cat):
        lines.append('{"kind":"memory","timestamp_ns":%d,"tensor_id":"%s","span_id":"%s",'
                     '"device":"%s","bytes":%d,"action":"%s","shape":[%d],"dtype":"u8",'
                     '"category":"%s"%s}\n' % (ts, tensor, span, dev, size, action, size, cat,
                                               ',"cgprobe_device_total_bytes":4294967296'
                                               if dev == "cuda:1" else ""))

    for dev in ("cpu", "cuda:0", "cuda:1"):
        tid += 1
        mem(t, "s1", dev, "p%d" % tid, 64 << 20, "alloc", "parameter")
        t += 10
    for step in range(steps):
        sid += 1
        step_id = "s%d" % sid
        lines.append('{"kind":"span_start","id":"%s","parent_id":"s1","name":"step","start_ns":%d,'
                     '"span_kind":"function"}\n' % (step_id, t))
        t0 = t
        for phase in ("forward", "backward", "optimizer"):
            sid += 1
            span = "s%d" % sid
            lines.append('{"kind":"span_start","id":"%s","parent_id":"%s","name":"%s",'
                         '"start_ns":%d,"span_kind":"module","step":"%s"}\n' %
                         (span, step_id, phase, t, phase))
            start = t
            live = []
            for k in range(6):
                dev = ("cpu", "cuda:0", "cuda:1")[(k + step) % 3]
                tid += 1
                size = (1 << 20) * (1 + (step * 7 + k * 13) % 40)
                mem(t, span, dev, "t%d" % tid, size, "alloc", cats[phase])
                live.append((dev, "t%d" % tid, size))
                t += 5000
            if phase == "forward" and step % 50 == 7:
                lines.append('{"kind":"device_memory","timestamp_ns":%d,"device":"cuda:1",'
                             '"used_bytes":4000000000,"free_bytes":294967296,'
                             '"oom_request_bytes":1073741824}\n' % t)
            lines.append('{"kind":"device_memory","timestamp_ns":%d,"device":"cuda:0",'
                         '"used_bytes":%d,"free_bytes":%d}\n' % (t, (300 << 20) + step % 9 * (1 << 20),
                                                                  8 << 30))
            for dev, tensor, size in live:
                mem(t, span, dev, tensor, size, "free", cats[phase])
                t += 1000
            lines.append('{"kind":"span_end","id":"%s","duration_ns":%d}\n' % (span, t - start))
        lines.append('{"kind":"span_end","id":"%s","duration_ns":%d}\n' % (step_id, t - t0))
        t += 2000
    lines.append('{"kind":"span_end","id":"s1","duration_ns":%d}\n' % t)
    with open(out, "w") as f:
        f.writelines(lines)
    return 0


def main():
    if len(sys.argv) >= 4 and sys.argv[1] == "check":
        return check(sys.argv[2:])
    if len(sys.argv) == 4 and sys.argv[1] == "gen":
        return gen(sys.argv[2:])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())

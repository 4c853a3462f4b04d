#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""cgtrace export --format massif, read back by ms_print and by a parser of
massif's format written here (docs/massif.md): the header, snapshots in
time order, the peak snapshot at the device's peak bytes, its tree's
counts and sums (a node's children sum to no more than it, largest first,
the below-threshold line last), call stacks named from the allocation
site outwards, op_name and span without stacks, a device that is not the
global peak's, a trace without memory records.
    test-export-massif.py CGTRACE SYM_TARGET LIBCGPROBE DEMO
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
from checks import check, verdict  # noqa: E402


def mem(ts, tid, sid, dev, nbytes, action, op="cudaMalloc"):
    return ('{"kind":"memory","timestamp_ns":%d,"tensor_id":"%s","span_id":"%s","op_name":"%s",'
            '"device":"%s","bytes":%d,"action":"%s","shape":[%d],"dtype":"u8","category":"other"}'
            % (ts, tid, sid, op, dev, nbytes, action, nbytes))


# cuda:0 peaks at 6000 bytes (t=400), cuda:1 at 1500 (t=600, after cuda:0's peak is gone).
HAND = "\n".join([
    '{"kind":"meta","schema":"candle-graph/trace/6","run_id":"run-5-1","correlation_id":"m/update-1",'
    '"entrypoint":"m","phase":"train","timestamp":"2026-11-29T12:00:00.000Z","capture_step":1,'
    '"warmup_steps":0,"device":"cuda:0","timing_mode":"host","tags":{"cmdline":"./m --run #1"}}',
    '{"kind":"span_start","id":"s1","name":"m","start_ns":0,"span_kind":"function"}',
    '{"kind":"span_start","id":"s2","parent_id":"s1","name":"layer#1","start_ns":50,"span_kind":"module"}',
    mem(100, "0xa", "s2", "cuda:0", 4000, "alloc"),
    mem(200, "0xb", "s2", "cuda:0", 1000, "alloc", "matmul"),
    mem(300, "0xc", "s1", "cuda:0", 10, "alloc", "tiny"),
    mem(400, "0xd", "s1", "cuda:0", 990, "alloc"),
    mem(450, "0xe", "s1", "cuda:1", 1000, "alloc"),
    mem(500, "0xa", "s2", "cuda:0", 4000, "free"),
    mem(600, "0xf", "s1", "cuda:1", 500, "alloc"),
    mem(700, "0xe", "s1", "cuda:1", 1000, "free"),
    '{"kind":"span_end","id":"s2","duration_ns":800}',
    '{"kind":"span_end","id":"s1","duration_ns":1000}',
]) + "\n"


def run(*args, env=None):
    p = subprocess.run(list(args), capture_output=True, text=True, env=env)
    return p.returncode, p.stdout, p.stderr


def parse(text):
    """The massif file: header, then snapshots with their trees as (depth, children, bytes, label)."""
    lines = text.split("\n")
    check(lines[-1] == "", "the file ends with a newline")
    lines = lines[:-1]
    check(lines[0].startswith("desc: ") and lines[1].startswith("cmd: ") and
          lines[2] == "time_unit: ms", "header lines")
    check("#" not in lines[0] + lines[1], "no '#' in desc and cmd (ms_print's comments)")
    snaps, i = [], 3
    while i < len(lines):
        check(lines[i] == "#-----------" and lines[i + 2] == "#-----------", "separator at %d" % i)
        fields = dict(ln.partition("=")[::2] for ln in [lines[i + 1]] + lines[i + 3:i + 8])
        check(list(fields) == ["snapshot", "time", "mem_heap_B", "mem_heap_extra_B", "mem_stacks_B",
                               "heap_tree"], "snapshot fields at %d" % i)
        i += 8
        tree = []
        if fields.get("heap_tree") in ("detailed", "peak"):
            while i < len(lines) and lines[i] != "#-----------":
                m = re.fullmatch(r"( *)n(\d+): (\d+) (.+)", lines[i])
                check(m is not None, "tree line: %r" % lines[i])
                if m:
                    tree.append((len(m.group(1)), int(m.group(2)), int(m.group(3)), m.group(4)))
                i += 1
        snaps.append((fields, tree))
    return lines[0], snaps


def check_tree(name, tree, total):
    """Counts, sums and order of a detailed tree; the labels of its nodes."""
    check(tree and tree[0][0] == 0 and tree[0][2] == total, "%s: the root holds the snapshot's bytes" % name)
    pos = 0

    def node(depth):
        nonlocal pos
        d, n, b, label = tree[pos]
        check(d == depth, "%s: depth %d at %r" % (name, depth, label))
        pos += 1
        kids = []
        for _ in range(n):
            if pos >= len(tree):
                check(False, "%s: %r lacks children" % (name, label))
                return b
            kids.append((tree[pos][2], tree[pos][3]))
            node(depth + 1)
        check(sum(k[0] for k in kids) <= b, "%s: children of %r sum to at most it" % (name, label))
        folded = [k for k in kids if "below massif's threshold" in k[1]]
        rest = [k for k in kids if "below massif's threshold" not in k[1]]
        check(len(folded) <= 1 and (not folded or kids[-1] == folded[0]), "%s: the folded line last" % name)
        check([k[0] for k in rest] == sorted((k[0] for k in rest), reverse=True),
              "%s: children of %r largest first" % (name, label))
        check(all(k[0] * 100 >= total for k in rest), "%s: shown children are 1%% or more" % name)
        return b

    if tree:
        node(0)
        check(pos == len(tree), "%s: the tree's counts cover its lines" % name)
    return [t[3] for t in tree]


def export(cgtrace, trace, out, *extra):
    if os.path.exists(out):
        os.unlink(out)
    rc, _, err = run(cgtrace, "export", "--format", "massif", *extra, "-o", out, trace)
    check(rc == 0, "%s %s: export exits 0 (%s)" % (trace, extra, err.strip()))
    if rc != 0:
        return None
    with open(out) as f:
        return f.read()


def peaks_of(cgtrace, trace):
    rc, out, _ = run(cgtrace, "memory", "--json", trace)
    check(rc == 0, "memory --json " + trace)
    j = json.loads(out)
    return j["summary"]["peak_device"], {d["device"]: d["peak_bytes"] for d in j["by_device"]}


def check_file(name, cgtrace, trace, out, device=None):
    """ms_print reads it, the peak is the device's; returns desc and the peak tree's labels."""
    text = export(cgtrace, trace, out, *(["--device", device] if device else []))
    if text is None:
        return "", []
    rc, printed, err = run("ms_print", out)
    check(rc == 0, "%s: ms_print exits 0 (%s)" % (name, err.strip()))
    desc, snaps = parse(text)
    check(1 <= len(snaps) <= 102, "%s: %d snapshots, at most 102" % (name, len(snaps)))
    check([int(s[0]["snapshot"]) for s in snaps] == list(range(len(snaps))), "%s: numbered" % name)
    times = [float(s[0]["time"]) for s in snaps]
    check(times == sorted(times), "%s: snapshots in time order" % name)
    peaks = [s for s in snaps if s[0]["heap_tree"] == "peak"]
    peak_dev, by_dev = peaks_of(cgtrace, trace)
    dev = device or peak_dev
    if not by_dev:
        check(not peaks, "%s: no peak without memory records" % name)
        return desc, []
    check(len(peaks) == 1, "%s: one peak snapshot" % name)
    if len(peaks) != 1:
        return desc, []
    fields, tree = peaks[0]
    peak = int(fields["mem_heap_B"])
    check(peak == by_dev[dev], "%s: peak snapshot holds %s's peak %d, not %d" % (name, dev, by_dev[dev], peak))
    check(max(int(s[0]["mem_heap_B"]) for s in snaps) == peak, "%s: no snapshot above the peak" % name)
    check(re.search(r"Detailed snapshots: \[\d+ \(peak\)\]", printed) is not None,
          "%s: ms_print shows the peak snapshot" % name)
    check(("(%s B)" % format(peak, ",")).replace(" ", "") in printed.replace(" ", ""),
          "%s: ms_print prints the peak's bytes" % name)
    return desc, check_tree(name, tree, peak)


def main():
    if len(sys.argv) != 5:
        print("usage: test-export-massif.py CGTRACE SYM_TARGET LIBCGPROBE DEMO", file=sys.stderr)
        return 2
    if not shutil.which("ms_print"):
        print("SKIP: no ms_print (valgrind)")
        return 77
    cgtrace, target, probe, demo = (os.path.abspath(a) for a in sys.argv[1:])
    with tempfile.TemporaryDirectory() as tmp:
        hand, out = os.path.join(tmp, "m.jsonl"), os.path.join(tmp, "m.massif")
        with open(hand, "w") as f:
            f.write(HAND)
        # Without stacks: by op_name, then span; the peak device by default.
        desc, labels = check_file("hand", cgtrace, hand, out)
        check("device cuda:0" in desc and "every allocation live then" in desc, "hand: desc, %s" % desc)
        check(labels[1:3] == ["cudaMalloc", "in span layer_1 (s2)"], "hand: by op, span: %s" % labels)
        check("matmul" in labels and "in span m (s1)" in labels, "hand: the second op and span")
        check(any("in 1 place, below massif's threshold (1.00%)" in l for l in labels),
              "hand: the 10 bytes folded")
        with open(out) as f:
            check("cmd: ./m --run _1\n" in f.read(), "hand: cmd from the cmdline tag, no '#'")
        # A device that is not the global peak's: from the largest allocations.
        desc, labels = check_file("cuda:1", cgtrace, hand, out, "cuda:1")
        check("device cuda:1" in desc and "largest allocations" in desc, "cuda:1: desc, %s" % desc)
        check(len(labels) >= 2, "cuda:1: a tree below the root")
        rc, _, err = run(cgtrace, "export", "--format", "massif", "--device", "cuda:7", hand)
        check(rc == 1 and "cuda:7" in err, "an unknown device: exit 1 naming it")
        # An existing file is replaced (through a temporary file: tests/test-output.sh).
        with open(out, "w") as f:
            f.write("old")
        rc, _, err = run(cgtrace, "export", "--format", "massif", "-o", out, hand)
        with open(out) as f:
            check(rc == 0 and f.read() != "old", "an existing file is replaced")
        # No memory records: one empty snapshot, still read.
        nomem = os.path.join(tmp, "nomem.jsonl")
        with open(nomem, "w") as f:
            f.write(HAND.split("\n")[0] + "\n" + HAND.split("\n")[1] + "\n")
        desc, _ = check_file("nomem", cgtrace, nomem, out)
        check("no memory records" in desc, "nomem: desc says so")
        # Thousands of stacks live at the peak: each item keeps its stack while more resolve.
        many = os.path.join(tmp, "many.jsonl")
        with open(many, "w") as f:
            f.write(HAND.split("\n")[0] + "\n" + HAND.split("\n")[1] + "\n")
            for i in range(3000):
                rec = json.loads(mem(100 + i, "0x%x" % (0x1000 + i), "s1", "cuda:0", 1000 + i, "alloc"))
                rec["cgprobe_stack"] = i + 1
                # Three sites, each called from a thousand places.
                rec["cgprobe_stack_frames"] = ["0x%x" % (0x400000 + 16 * (i % 3)), "0x%x" % (0x500000 + 16 * i)]
                f.write(json.dumps(rec, separators=(",", ":")) + "\n")
        desc, labels = check_file("many", cgtrace, many, out)
        check("by call stack" in desc and any("0x400010" in l for l in labels),
              "many stacks: the peak by call stack, %s" % labels[:3])
        # Call stacks: the program's own trace with known lines, from the site outwards.
        if os.path.exists(target):
            sym = os.path.join(tmp, "sym.jsonl")
            with open(sym, "w") as f, open(os.path.join(tmp, "expect"), "w") as e:
                p = subprocess.run([target, "trace"], stdout=f, stderr=e)
            check(p.returncode == 0, "sym-target ran")
            with open(os.path.join(tmp, "expect")) as e:
                lines = e.read().split()
            desc, labels = check_file("stacks", cgtrace, sym, out)
            check("by call stack" in desc, "stacks: desc says by call stack")
            site = [l for l in labels if "inl_helper (sym-target.c:%s)" % lines[2] in l]
            check(len(site) == 1 and re.match(r"0x[0-9A-F]+: ", site[0]) is not None,
                  "stacks: the site with its address, %s" % labels)
            k = labels.index(site[0]) if site else 0
            check(labels[k + 1:k + 3] and "alloc_twice" in labels[k + 1] and "fill_a" in labels[k + 2],
                  "stacks: the callers outwards, %s" % labels[k:k + 3])
        # The demo trainer under the probe (stacks recorded), unless the probe has ASan.
        if b"__asan_init" not in open(probe, "rb").read():
            real = os.path.join(tmp, "demo.cgt")
            env = dict(os.environ, LD_PRELOAD=probe, CGPROBE_OUTPUT=real, CGPROBE_QUIET="1")
            p = subprocess.run([demo, "--steps", "2"], env=env, capture_output=True)
            check(p.returncode == 0, "the demo under the probe")
            desc, labels = check_file("demo", cgtrace, real, out)
            check(any("alloc_floats (mlp.c:" in l for l in labels), "demo: a site of mlp.c")
        else:
            print("SKIP demo: the probe is built with AddressSanitizer")
    return verdict()


if __name__ == "__main__":
    sys.exit(main())

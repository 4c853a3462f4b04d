#!/usr/bin/env python3
"""Writes the seed corpus for the reader fuzz target (tests/fuzz/corpus).

Each file is a small trace or fragment exercising one part of the format:
every record kind, optional and defaulted fields, escapes, edge integers,
extension records, and the classic ways a line is broken.
"""
import json
import os
import sys

out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "corpus")
os.makedirs(out, exist_ok=True)

META = {"kind": "meta", "schema": "candle-graph/trace/6", "run_id": "run-1",
        "correlation_id": "demo/update-1", "entrypoint": "demo::train::loss", "phase": "train",
        "timestamp": "2026-08-04T18:00:00Z", "capture_step": 1, "warmup_steps": 0,
        "device": "cpu", "timing_mode": "host", "tags": {"pid": "42", "k\u00e9y": "v\u2603"}}


def line(obj):
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


def mem(ts, tid, nbytes, action, **extra):
    r = {"kind": "memory", "timestamp_ns": ts, "tensor_id": tid, "span_id": "s1",
         "op_name": "malloc", "device": "cpu", "bytes": nbytes, "action": action,
         "shape": [nbytes], "dtype": "u8", "category": "other"}
    r.update(extra)
    return r


base = [META,
        {"kind": "span_start", "id": "s1", "name": "root", "start_ns": 0, "span_kind": "function"},
        {"kind": "span_start", "id": "s2", "parent_id": "s1", "name": "fwd", "start_ns": 5,
         "span_kind": "module", "measured": True, "step": "forward"},
        {"kind": "op", "span_id": "s2", "op_name": "matmul", "inputs": ["t0", "t1"], "output": "t2",
         "shape": [32, 32], "dtype": "f32", "device": "cpu", "duration_ns": 1200, "timestamp_ns": 1200},
        {"kind": "tensor", "span_id": "s2", "tensor_id": "t2", "shape": [32, 32], "dtype": "f32",
         "device": "cpu", "requires_grad": True, "category": "activation"},
        mem(10, "t2", 4096, "alloc", shape=[32, 32], dtype="f32", category="activation"),
        mem(20, "0x7f00", 64, "alloc"),
        mem(30, "0x7f00", 64, "free"),
        {"kind": "device_memory", "timestamp_ns": 40, "device": "cuda:0", "used_bytes": 100,
         "free_bytes": 900, "reserved_bytes": 50, "cgprobe_device_uuid": "GPU-0",
         "cgprobe_device_total_bytes": 1000},
        {"kind": "gradient", "event_id": "gradient-1", "root": "vb", "key": "encoder.weight",
         "state": "present", "norm": 0.42},
        {"kind": "edge", "from_span": "s1", "to_span": "s2", "duration_ns": 1200},
        {"kind": "span_end", "id": "s2", "duration_ns": 1200},
        {"kind": "span_end", "id": "s1", "duration_ns": 2000}]

files = {}
files["full.jsonl"] = "\n".join(line(r) for r in base) + "\n"
files["no-newline-end.jsonl"] = "\n".join(line(r) for r in base)
files["truncated.jsonl"] = files["full.jsonl"][:-25]
files["blank-lines.jsonl"] = "\n\n" + "\n \t\r\n".join(line(r) for r in base) + "\n\n"
files["crlf.jsonl"] = "\r\n".join(line(r) for r in base) + "\r\n"
files["spaced.jsonl"] = "\n".join(json.dumps(r, indent=None) for r in base) + "\n"
files["ascii-escapes.jsonl"] = "\n".join(json.dumps(r, ensure_ascii=True) for r in base) + "\n"
files["empty.jsonl"] = ""
files["meta-only.jsonl"] = line(META) + "\n"
# The form earlier probes wrote: the identity as a record of its own, after the device's records.
files["device-kind.jsonl"] = "\n".join(line(r) for r in base + [
    {"kind": "cgprobe_device", "device": "cuda:0", "uuid": "GPU-0", "name": "G", "total_bytes": 1000},
    {"kind": "cgprobe_device", "device": "cuda:7", "uuid": "GPU-7"}]) + "\n"
# Identities that repeat, differ, lack a UUID or are null, in both forms.
ident = [META,
         mem(1, "a", 8, "alloc", device="cuda:1", cgprobe_device_uuid="GPU-1",
             cgprobe_device_name="\u2603", cgprobe_device_total_bytes=18446744073709551615),
         mem(2, "a", 8, "free", device="cuda:1", cgprobe_device_uuid="GPU-other"),
         {"kind": "cgprobe_device", "device": "cuda:1", "uuid": "GPU-1"},
         mem(3, "b", 8, "alloc", device="cuda:2", cgprobe_device_name="n",
             cgprobe_device_total_bytes=5),
         {"kind": "device_memory", "timestamp_ns": 4, "device": "cuda:2", "used_bytes": 1,
          "free_bytes": 2, "cgprobe_device_uuid": "GPU-2", "cgprobe_device_name": None,
          "cgprobe_device_total_bytes": None}]
files["device-identity.jsonl"] = "\n".join(line(r) for r in ident) + "\n"

edge = [META,
        mem(18446744073709551615, "a", 9007199254740993, "alloc"),
        mem(0, "b\\\"q\u0001", 0, "free", op_name=None, shape=[]),
        mem(5, "c", 5, "alloc", managed=True, extra={"x": [1, 2.5e300, None, True]}),
        {"kind": "device_memory", "timestamp_ns": 1, "device": "cpu", "used_bytes": 1,
         "free_bytes": 2, "oom_request_bytes": 3},
        {"kind": "gradient", "event_id": "g", "root": "r", "key": "k", "state": "non_finite",
         "norm": -1.5e-300},
        {"kind": "gradient", "event_id": "g2", "root": "r", "key": "k", "state": "zero"},
        {"kind": "span_start", "id": "s10", "parent_id": "ghost", "name": "x", "start_ns": 1,
         "span_kind": "op", "step": None}]
files["edge.jsonl"] = "\n".join(line(r) for r in edge) + "\n"

cycle = [META] + [{"kind": "span_start", "id": f"s{i}", "parent_id": f"s{(i + 1) % 5}",
                   "name": "c", "start_ns": i, "span_kind": "op"} for i in range(5)]
files["cycle.jsonl"] = "\n".join(line(r) for r in cycle) + "\n"

bad_lines = [
    '{"kind":"memory","timestamp_ns":01}', '{"kind":"memory","timestamp_ns":1.}',
    '{"kind":"span_end","id":"s1"} x', '{"kind":"span_end","kind":"span_end","id":"s1"}',
    '{"kind":"span_end","id":"\\ud800"}', '{"kind":"span_end","id":"\\u0000"}',
    '{"kind":"span_end","id":"s\xff"}', '[1,2]', '{"kind":"nope"}', '{"id":"s1"}',
    '{"kind":"memory","timestamp_ns":-1}', '{"kind":"memory","timestamp_ns":18446744073709551616}',
    '{"kind":"gradient","event_id":"g","root":"r","param_key":"k","state":"present"}',
    '{"kind":"span_end","id":"missing"}', '{"kind":"gradient","norm":1e400}', '{',
    '{"kind":"meta"}', '{"kind":"span_start","id":"s1","name":"r","start_ns":0,"span_kind":"op","measured":null}',
    '{"kind":"device_memory","timestamp_ns":1,"device":"cuda:0","used_bytes":1,"free_bytes":2,"cgprobe_device_uuid":1}',
]
for i, bad in enumerate(bad_lines):
    files[f"bad-{i:02d}.jsonl"] = line(META) + "\n" + bad + "\n"

deep = [META] + [{"kind": "span_start", "id": f"s{i}", **({"parent_id": f"s{i - 1}"} if i else {}),
                  "name": "d", "start_ns": i, "span_kind": "function"} for i in range(300)]
files["deep-chain.jsonl"] = "\n".join(line(r) for r in deep) + "\n"
files["nested-unknown.jsonl"] = line(META) + "\n" + '{"kind":"edge","from_span":"a","to_span":"b","duration_ns":1,"x":' + "[" * 128 + "]" * 128 + "}\n"

# Python frames (docs/python-frames.md): a code object and a hybrid stack;
# then the ways they break (an undefined code, a cut line table, odd hex,
# a code defined twice, a mark that marks nothing).
PY_META = dict(META, tags={"pid": "42", "cgprobe_python": "auto"})
code = {"id": 1, "name": "make", "qualname": "f.<locals>.make", "file": "/u/train.py", "line": 30,
        "format": "locations", "linetable": "80008c0ee0081f"}
py_frame = "0x%x" % ((1 << 63) | (1 << 32) | 8)
py = [PY_META, base[1],
      mem(10, "0x1000", 64, "alloc", cgprobe_stack=2,
          cgprobe_stack_frames=["0x401000", py_frame], cgprobe_stack_parent=0,
          cgprobe_py_codes=[code]),
      mem(20, "0x1000", 64, "free")]
files["python-frames.jsonl"] = "\n".join(line(r) for r in py) + "\n"
py_bad = {
    "undefined": dict(code, id=7),
    "cut-table": dict(code, linetable="f0"),
    "odd-hex": dict(code, linetable="800"),
    "bad-format": dict(code, format="bytecode"),
}
for k, c in py_bad.items():
    recs = [PY_META, base[1], dict(py[2], cgprobe_py_codes=[c])]
    files[f"python-bad-{k}.jsonl"] = "\n".join(line(r) for r in recs) + "\n"
recs = [PY_META, base[1], dict(py[2], cgprobe_py_codes=[code, code])]
files["python-bad-twice.jsonl"] = "\n".join(line(r) for r in recs) + "\n"
recs = [PY_META, base[1], dict(py[2], cgprobe_stack_frames=["0x401000", "0x%x" % ((1 << 63) | 5)])]
files["python-bad-mark.jsonl"] = "\n".join(line(r) for r in recs) + "\n"

# Training (docs/steps.md): marked updates with phases, a parameter mark
# over a live block, then the ways the fields break.
def span(sid, ts, **extra):
    r = {"kind": "span_start", "id": sid, "parent_id": "s1", "name": sid, "start_ns": ts,
         "span_kind": "function"}
    r.update(extra)
    return r


def end(sid, dur):
    return {"kind": "span_end", "id": sid, "duration_ns": dur}


train = [META, base[1], mem(5, "0x1000", 4096, "alloc"),
         span("p", 6, cgprobe_parameters=["0x1000", "0x1000"]), end("p", 0)]
for u in (1, 2, 3):
    t = u * 100
    train += [span("u%d" % u, t, cgprobe_update=u), span("d%d" % u, t + 1, cgprobe_phase="data"),
              mem(t + 2, "0x2000", 64, "alloc"), end("d%d" % u, 2),
              span("f%d" % u, t + 5, step="forward"), mem(t + 6, "0x%x" % (0x3000 + u), 32, "alloc"),
              end("f%d" % u, 5), mem(t + 20, "0x2000", 64, "free"), end("u%d" % u, 30)]
files["training.jsonl"] = "\n".join(line(r) for r in train) + "\n"
train_bad = {
    "update-zero": {"cgprobe_update": 0},
    "phase-empty": {"cgprobe_phase": ""},
    "params-odd": {"cgprobe_parameters": ["0x10"]},
    "params-empty": {"cgprobe_parameters": ["0x10", "0x0"]},
    "params-wrap": {"cgprobe_parameters": ["0xffffffffffffff00", "0x200"]},
}
for k, extra in train_bad.items():
    recs = [META, base[1], span("x", 5, **extra)]
    files[f"training-bad-{k}.jsonl"] = "\n".join(line(r) for r in recs) + "\n"

for name, text in files.items():
    with open(os.path.join(out, name), "wb") as f:
        f.write(text.encode("utf-8", "surrogateescape") if "\xff" not in text else text.encode("latin-1", "replace"))

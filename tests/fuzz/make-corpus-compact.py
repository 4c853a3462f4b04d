#!/usr/bin/env python3
"""Writes the seed corpus for the compact decoder's fuzz target (tests/fuzz/corpus-compact).

Files named *.cgt are whole compact traces (docs/compact-format.md), built
here item by item; *.items are items only, which the target wraps into a
file itself (first byte: bit 0 selects zstd blocks; "BLK!" splits blocks).
zstd blocks need the zstd program; without it they are stored instead.
"""
import os
import shutil
import struct
import subprocess
import sys
import zlib

out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "corpus-compact")
os.makedirs(out, exist_ok=True)
HAVE_ZSTD = shutil.which("zstd") is not None

META = ('{"kind":"meta","schema":"candle-graph/trace/6","run_id":"run-1",'
        '"correlation_id":"demo/update-1","entrypoint":"demo","phase":"train",'
        '"timestamp":"2026-08-04T18:00:00Z","capture_step":1,"warmup_steps":0,'
        '"device":"cpu","timing_mode":"host","tags":{"pid":"42"}}')


def var(v):
    b = bytearray()
    while v >= 0x80:
        b.append((v & 0x7F) | 0x80)
        v >>= 7
    b.append(v)
    return bytes(b)


def zz(v):
    return ((v << 1) ^ (v >> 63)) & (2**64 - 1)


def string(s):
    s = s.encode()
    return b"\x01" + var(len(s)) + s


def text(line):
    line = line.encode()
    return b"\x03" + var(len(line)) + line


def klass(span, op, dev, cat, flags):
    return b"\x05" + var(span) + var(op) + var(dev) + bytes([cat, flags])


def alloc(cls, dts, daddr, size):
    return bytes([0x80 | cls]) + var(dts) + var(zz(daddr) * 2 + 1) + var(size)


def alloc_hist(cls, dts, back, size):
    """back: 0 is the block's most recent memory record, alloc or free."""
    return bytes([0x80 | cls]) + var(dts) + var(back * 2) + var(size)


def free_hist(cls, dts, back):
    return bytes([0xC0 | cls]) + var(dts) + var(back * 2)


def free_delta(cls, dts, daddr):
    return bytes([0xC0 | cls]) + var(dts) + var(zz(daddr) * 2 + 1)


def span_start(dts, sid, parent, name, kind, step, flags):
    return b"\x10" + var(dts) + var(sid) + var(parent) + var(name) + bytes([kind, step, flags])


def span_end(sid, dur):
    return b"\x11" + var(sid) + var(dur)


def devmem(dts, dev, used, free, reserved=None, oom=None):
    flags = (1 if reserved is not None else 0) | (2 if oom is not None else 0)
    b = b"\x12" + var(dts) + var(dev) + var(used) + var(free) + bytes([flags])
    if reserved is not None:
        b += var(reserved)
    if oom is not None:
        b += var(oom)
    return b


def delta(f, prev):
    """The frame's delta from the one before, as a signed 64-bit number (zigzag takes it)."""
    d = (f - prev) & (2**64 - 1)
    return d - 2**64 if d >= 2**63 else d


def stack(sid, frames):
    """A STACK item (docs/stacks.md): frames as zigzag deltas, the first from 0."""
    b, prev = b"\x06" + var(sid) + var(len(frames)), 0
    for f in frames:
        b += var(zz(delta(f, prev)))
        prev = f
    return b


def tree(sid, parent, frames):
    """A TREE item (docs/stacks.md): stacks sid-n+1 .. sid on parent, frames innermost first."""
    b, prev = b"\x08" + var(sid) + var(parent) + var(len(frames)), 0
    for f in frames:
        b += var(zz(delta(f, prev)))
        prev = f
    return b


def module(path, base, start, end, bid=b""):
    path = path.encode()
    return b"\x07" + var(len(path)) + path + var(base) + var(start) + var(end) + var(len(bid)) + bid


def alloc_stack(cls, dts, daddr, size, sid):
    """An alloc whose extension area holds key 1, its stack id."""
    ext = var(1) + var(sid)
    return bytes([0xA0 | cls]) + var(dts) + var(zz(daddr) * 2 + 1) + var(size) + var(len(ext)) + ext


def zstd1(raw):
    return subprocess.run(["zstd", "-q", "-1", "-c"], input=raw, capture_output=True,
                          check=True).stdout


def block(raw, kind="R"):
    payload = raw
    if kind == "Z" and HAVE_ZSTD:
        payload = zstd1(raw)
    else:
        kind = "R"
    return struct.pack("<B3xIII", ord(kind), len(payload), len(raw), zlib.crc32(payload)) + payload


def stack_block(first, last, raw, kind="s"):
    """A stack block (docs/stacks.md): its ids' range, then STACK and TREE items."""
    payload = raw
    if kind == "S" and HAVE_ZSTD:
        payload = zstd1(raw)
    else:
        kind = "s"
    payload = struct.pack("<QQ", first, last) + payload
    return struct.pack("<B3xIII", ord(kind), len(payload), len(raw), zlib.crc32(payload)) + payload


HEADER = b"\x89CGTRACE" + struct.pack("<II", 1, 0)

TABLES = (string("s1") + string("malloc") + string("cpu") + string("cuda:0") + string("root")
          + klass(0, 2, 2, 4, 0) + klass(4, 0, 3, 1, 3))

FIRST = (text(META) + TABLES + b"\x02" + var(4242)
         + span_start(0, 1, 0, 4, 0, 0, 0)
         + alloc(0, 100, 0x5583A6C012A0, 1024)
         + alloc(0, 5, 0x40, 32)
         + alloc(1, 1, -0x5583A6C012E0, 4096)
         + free_hist(0, 2, 1)
         + free_delta(0, 3, -0x40)
         + alloc_hist(0, 1, 0, 512)
         + alloc_hist(0, 1, 2, 64)
         + b"\x47" + var(2) + b"ok"
         + devmem(4, 3, 1000, 9000, 2000, 512) + devmem(1, 3, 1000, 9000)
         + span_start(10, 2, 2, 4, 2, 1, 1) + span_end(2, 20))
SECOND = (free_delta(1, 7, 0)
          + bytes([0x9F]) + var(0) + var(1) + var(zz(0x10) * 2 + 1) + var(16)
          + text('{"kind":"memory","timestamp_ns":9,"tensor_id":"t7","span_id":"s1",'
                 '"device":"cpu","bytes":4,"action":"alloc","shape":[2,2],"dtype":"u8",'
                 '"category":"other"}')
          + bytes([0xE0]) + var(1) + var(0) + var(2) + var(3) + var(5)
          + span_end(1, 100))

# A trace whose probe read Python frames, a frame of code 1 at byte 8, and
# a record that defines code 1 (TEXT, as the probe writes it).
PY_META = META.replace('"tags":{"pid":"42"}', '"tags":{"pid":"42","cgprobe_python":"auto"}')
PY_FRAME = (1 << 63) | (1 << 32) | 8
PY_TEXT = ('{"kind":"memory","timestamp_ns":1,"tensor_id":"0x20","span_id":"s1",'
           '"device":"cpu","bytes":4,"action":"alloc","shape":[4],"dtype":"u8",'
           '"category":"other","cgprobe_py_codes":[{"id":1,"name":"make","file":"/u/t.py",'
           '"line":3,"format":"locations","linetable":"80008c0ee0081f"}]}')

files = {}
full = HEADER + block(FIRST, "R") + block(SECOND, "Z")
files["full.cgt"] = full
files["truncated.cgt"] = full[:-3]
files["cut-header.cgt"] = full[:11]
files["header-only.cgt"] = HEADER
files["empty-blocks.cgt"] = HEADER + block(b"", "R") + block(b"", "Z") + block(FIRST, "R")
files["bad-crc.cgt"] = full[:28] + bytes([full[28] ^ 1]) + full[29:]
files["bad-version.cgt"] = HEADER[:8] + struct.pack("<II", 2, 0) + full[16:]
files["bad-type.cgt"] = HEADER + b"Q" + full[17:]
files["huge-raw.cgt"] = HEADER + struct.pack("<B3xIII", ord("R"), 8, 1 << 30, 0)
files["zstd-lies.cgt"] = HEADER + block(b"\x02\x01", "R").replace(b"R", b"Z", 1)

items = {
    "unknown-op": text(META) + b"\x04",
    "free-not-live": text(META) + TABLES + free_delta(0, 1, 0x10),
    "hist-range": text(META) + TABLES + alloc(0, 1, 16, 8) + free_hist(0, 1, 5),
    "alloc-hist-range": text(META) + TABLES + alloc_hist(0, 1, 0, 8),
    "ts-wrap": text(META) + TABLES + alloc(0, 2**64 - 1, 16, 8) + alloc(0, 1, 16, 8),
    "string-undefined": text(META) + klass(9, 0, 0, 0, 0),
    "class-undefined": text(META) + TABLES + alloc(7, 1, 1, 1),
    "bad-varint": text(META) + TABLES + b"\x80" + b"\xff" * 10 + b"\x01",
    "huge-len": text(META) + b"\x01" + var(1 << 40),
    "cut-item": text(META) + TABLES + alloc(0, 1, 16, 8)[:-1],
    "bad-text": text('{"kind":"meta"'),
    "ext-area": (text(META) + TABLES + bytes([0xA0]) + var(1) + var(zz(8) * 2 + 1) + var(8)
                 + var(2) + var(3) + var(9)),
    # Stacks and modules (docs/stacks.md): one good trace, then each way to break one.
    "stacks": (text(META) + TABLES + module("/usr/bin/prog", 0x400000, 0x400000, 0x405000, b"4f1a")
               + module("/lib/libc.so.6", 0x7F0000, 0x7F1000, 0x7F9000)
               + stack(1, [0x4011A6, 0x401230, 0x7F3E1C229D90]) + alloc_stack(0, 5, 0x40, 32, 1)
               + alloc_stack(0, 1, 0x40, 16, 1) + stack(2, [0x4011C0]) + free_hist(0, 1, 0)
               + alloc_stack(0, 1, 0x80, 8, 2)),
    "stack-undefined": text(META) + TABLES + alloc_stack(0, 1, 0x40, 8, 7),
    # Undefined on a later record of a class already seen whole: a streamed read takes its gist.
    "stack-undefined-later": (text(META) + TABLES + stack(1, [0x4011A6]) + alloc_stack(0, 5, 0x40, 32, 1)
                              + alloc_stack(0, 1, 0x100, 16, 9)),
    "stack-zero-id": text(META) + TABLES + stack(0, [1]) + alloc_stack(0, 1, 0x40, 8, 0),
    "stack-huge-n": text(META) + TABLES + b"\x06" + var(1) + var(1 << 40) + var(2),
    "stack-no-frames": text(META) + TABLES + b"\x06" + var(1) + var(0),
    "stack-bad-varint": text(META) + TABLES + b"\x06" + var(1) + var(2) + b"\xff" * 11,
    "stack-cut": text(META) + TABLES + stack(1, [0x4011A6, 0x401230])[:-2],
    "stack-twice": text(META) + TABLES + stack(3, [1]) + stack(3, [2]) + alloc_stack(0, 1, 0, 8, 3),
    "stack-redefined": (text(META) + TABLES + stack(3, [1]) + alloc_stack(0, 1, 0, 8, 3)
                        + stack(3, [2]) + alloc_stack(0, 1, 8, 8, 3)),
    "stack-on-free": (text(META) + TABLES + stack(1, [1]) + alloc_stack(0, 1, 0x40, 8, 1)
                      + bytes([0xE0]) + var(1) + var(0) + var(2) + var(1) + var(1)),
    # Stacks as a tree: one good trace (a shared prefix, a stack named that
    # another's definition made), then each way to break one.
    "tree": (text(META) + TABLES + module("/usr/bin/prog", 0x400000, 0x400000, 0x405000, b"4f1a")
             + tree(3, 0, [0x4011A6, 0x401230, 0x7F3E1C229D90]) + alloc_stack(0, 5, 0x40, 32, 3)
             + tree(4, 2, [0x4011C0]) + alloc_stack(0, 1, 0x80, 16, 4)
             + alloc_stack(0, 1, 0xC0, 8, 2) + stack(5, [0x401300]) + alloc_stack(0, 1, 0x100, 8, 5)),
    "tree-parent-undefined": text(META) + TABLES + tree(2, 9, [1]) + alloc_stack(0, 1, 0x40, 8, 2),
    "tree-parent-self": text(META) + TABLES + tree(2, 2, [1]) + alloc_stack(0, 1, 0x40, 8, 2),
    "tree-cycle": text(META) + TABLES + tree(3, 2, [1, 2]) + alloc_stack(0, 1, 0x40, 8, 3),
    "tree-parent-pending": (text(META) + TABLES + tree(1, 0, [1]) + tree(2, 1, [2])
                            + alloc_stack(0, 1, 0x40, 8, 2) + alloc_stack(0, 1, 0x80, 8, 1)),
    "tree-below-one": text(META) + TABLES + tree(2, 0, [1, 2, 3]) + alloc_stack(0, 1, 0x40, 8, 2),
    "tree-twice": (text(META) + TABLES + tree(3, 0, [1, 2, 3]) + alloc_stack(0, 1, 0x40, 8, 3)
                   + tree(2, 0, [4]) + alloc_stack(0, 1, 0x80, 8, 2)),
    "tree-too-deep": (text(META) + TABLES + tree(1000, 0, list(range(1, 1001)))
                      + alloc_stack(0, 1, 0x40, 8, 1000) + tree(1025, 1000, list(range(1, 26)))
                      + alloc_stack(0, 1, 0x80, 8, 1025)),
    "tree-cut": text(META) + TABLES + tree(1, 0, [0x4011A6, 0x401230])[:-2],
    "module-bad-bid": text(META) + TABLES + module("/x", 0, 0, 1, b"ABC") + alloc(0, 1, 1, 1),
    "module-backwards": text(META) + TABLES + module("/x", 0, 9, 1) + alloc(0, 1, 1, 1),
    "module-nul": text(META) + TABLES + module("/x\0y", 0, 0, 1) + alloc(0, 1, 1, 1),
    # Python frames (docs/python-frames.md): a TREE item with a Python frame
    # whose code object rides on a TEXT record; then a frame naming no code.
    "python-frames": (text(PY_META) + TABLES + tree(2, 0, [0x4011A6, PY_FRAME])
                      + text(PY_TEXT) + alloc_stack(0, 1, 0x40, 8, 2)),
    "python-undefined": (text(PY_META) + TABLES + tree(2, 0, [0x4011A6, PY_FRAME])
                         + alloc_stack(0, 1, 0x40, 8, 2)),
}
# Stack blocks: trees in blocks of their own, ahead of the records that take them.
HEAD_BLOCK = block(text(META) + TABLES, "R")
TREES = tree(3, 0, [0x4011A6, 0x401230, 0x7F3E1C229D90]) + tree(4, 2, [0x4011C0])
TAKERS = alloc_stack(0, 5, 0x40, 32, 3) + alloc_stack(0, 1, 0x80, 16, 4) + alloc_stack(0, 1, 0xC0, 8, 2)
files["stack-blocks.cgt"] = HEADER + HEAD_BLOCK + stack_block(1, 4, TREES) + block(TAKERS, "R")
files["stack-blocks-zstd.cgt"] = (HEADER + HEAD_BLOCK + stack_block(1, 4, TREES, "S")
                                  + block(TAKERS, "Z"))
files["stack-block-item.cgt"] = HEADER + HEAD_BLOCK + stack_block(1, 4, TREES + string("x")) + block(TAKERS)
files["stack-block-range.cgt"] = HEADER + HEAD_BLOCK + stack_block(2, 4, TREES) + block(TAKERS)
files["stack-block-zero.cgt"] = HEADER + HEAD_BLOCK + stack_block(0, 4, TREES) + block(TAKERS)
files["stack-block-short.cgt"] = HEADER + HEAD_BLOCK + struct.pack("<B3xIII", ord("s"), 8, 0, 0) + b"\0" * 8
files["stack-block-undefined.cgt"] = (HEADER + HEAD_BLOCK + stack_block(1, 4, TREES)
                                      + block(TAKERS + alloc_stack(0, 1, 0x100, 8, 9)))

for name, raw in items.items():
    files[name + ".items"] = b"\x00" + raw
files["blocks.items"] = b"\x01" + FIRST + b"BLK!" + SECOND
files["blocks-stored.items"] = b"\x00" + FIRST + b"BLK!" + SECOND

for name, data in files.items():
    with open(os.path.join(out, name), "wb") as f:
        f.write(data)
print(f"{len(files)} files in {out}")

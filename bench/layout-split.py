#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""layout-split.py TRACE INTERLEAVED COLUMNS: a compact trace's blocks in two layouts.

Each record block's raw bytes are written as they are (INTERLEAVED: the
compact encoding's items one after another) and as field streams
(COLUMNS): every MEMORY item's op byte, then its escaped class ids,
timestamps, address refs, sizes and extension areas, each stream whole,
then every other item's bytes in order. The bytes are the same, only
their order differs. Each block is written as raw_len:u32 events:u32 then
the bytes, for zstd-blocks; stack blocks are left out. Prints per event
bytes of each stream on stderr. Reads through the reference decoder
(tests/compact_decode.py), which checks the trace as it goes.
"""
import os
import struct
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))
import compact_decode as cd  # noqa: E402

STREAMS = ("op", "cls", "ts", "ref", "size", "ext")


def varint_end(raw, p):
    while raw[p] & 0x80:
        p += 1
    return p + 1


class Split(cd.Decoder):
    """The reference decoder, noting where each MEMORY item's fields lie."""

    def block(self, raw, rng=None):
        self.raw = raw
        self.cols = {k: bytearray() for k in STREAMS}
        self.spans = []
        return super().block(raw, rng)

    def memory(self, it, op):
        raw, c, p = self.raw, self.cols, it.pos
        start = p - 1
        c["op"].append(op)
        fields = ["cls"] if op & 0x1F == 31 else []
        fields += ["ts", "ref"] + ([] if op & 0x40 else ["size"])
        for name in fields:
            q = varint_end(raw, p)
            c[name] += raw[p:q]
            p = q
        if op & 0x20:
            q = varint_end(raw, p)
            n = 0
            for i, b in enumerate(raw[p:q]):
                n |= (b & 0x7F) << (7 * i)
            c["ext"] += raw[p:q + n]
            p = q + n
        rec = super().memory(it, op)
        if it.pos != p:
            raise cd.DecodeError("MEMORY item's fields end at %d, the decoder's at %d" % (p, it.pos))
        self.spans.append((start, p))
        return rec


def main():
    if len(sys.argv) != 4:
        print(__doc__.splitlines()[0], file=sys.stderr)
        return 2
    dec = Split()
    totals = dict.fromkeys(STREAMS + ("other",), 0)
    events = 0
    with open(sys.argv[1], "rb") as f, open(sys.argv[2], "wb") as fi, open(sys.argv[3], "wb") as fc:
        for raw, rng in cd.blocks(f):
            if rng:
                continue
            for _ in dec.block(raw, rng):
                pass
            other, q = bytearray(), 0
            for a, b in dec.spans:
                other += raw[q:a]
                q = b
            other += raw[q:]
            cols = b"".join(bytes(dec.cols[k]) for k in STREAMS) + bytes(other)
            n = len(dec.cols["op"])
            fi.write(struct.pack("<II", len(raw), n) + raw)
            fc.write(struct.pack("<II", len(cols), n) + cols)
            for k in STREAMS:
                totals[k] += len(dec.cols[k])
            totals["other"] += len(other)
            events += n
    if not events:
        print("layout-split: %s: no MEMORY items" % sys.argv[1], file=sys.stderr)
        return 1
    print("events %d; bytes per event: %s" % (events, ", ".join(
        "%s %.3f" % (k, v / events) for k, v in totals.items())), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

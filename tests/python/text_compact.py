# SPDX-License-Identifier: MIT
# text_compact.py IN.jsonl OUT.cgt: IN's records, each a TEXT item, in
# stored blocks of the compact encoding (docs/compact-format.md), written
# without checking them, so that a hostile JSONL trace is as hostile in the
# compact encoding (tests/test-py-frames.sh).
import struct
import sys
import zlib

BLOCK = 1 << 20


def varint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def block(raw):
    return b"R\0\0\0" + struct.pack("<III", len(raw), len(raw), zlib.crc32(raw)) + raw


src, dst = sys.argv[1:3]
with open(src, "rb") as f, open(dst, "wb") as out:
    out.write(b"\x89CGTRACE" + struct.pack("<II", 1, 0))
    raw = bytearray()
    for line in f:
        line = line.rstrip(b"\n")
        if not line:
            continue
        item = b"\x03" + varint(len(line)) + line
        if raw and len(raw) + len(item) > BLOCK:
            out.write(block(bytes(raw)))
            raw = bytearray()
        raw += item
    if raw:
        out.write(block(bytes(raw)))

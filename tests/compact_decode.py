#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A reader of cgprobe's compact trace encoding, written from
docs/compact-format.md and docs/stacks.md alone, so that the pages are
shown to be the whole definition and the C reader has an independent one
to agree with.

  compact_decode.py [--check] [--compare JSONL] FILE

Prints each trace record of FILE as one JSON object a line, in stream
order: packed records built as the page says, TEXT records as their text.
--check also applies the trace/6 rules every record obeys
(docs/trace-format.md: strict JSON, the fields of each kind and their types,
one meta first, span ids). --compare JSONL prints nothing and compares the
records with those of the JSONL trace as JSON values, record by record.

Bad input: one line `FILE: record N: message` on stderr, exit 1. A cut
file: `FILE: trace truncated after N records` on stderr, exit 0. Exit 77
when a zstd block is met and neither the zstandard module nor the zstd
command is there.
"""
import json
import shutil
import subprocess
import sys
import zlib

try:
    import zstandard
except ImportError:
    zstandard = None

MAGIC = b"\x89CGTRACE"
VERSION = 1
HEADER_LEN = 16
BLOCK_HEADER_LEN = 16
MAX_RAW = 64 << 20
MAX_SLACK = 65536
HISTORY = 4096
U64_MAX = (1 << 64) - 1

CATEGORIES = ("parameter", "activation", "gradient", "optimizer", "other")
SPAN_KINDS = ("function", "op", "module")
STEPS = (None, "forward", "backward", "optimizer")


class DecodeError(Exception):
    """Bad input; `record` is False for the file as a whole."""

    def __init__(self, message, record=True):
        super().__init__(message)
        self.record = record
        self.number = None


class Skip(Exception):
    """No way to read a zstd block here."""


# --- Blocks -------------------------------------------------------------------


def unzstd(payload, raw_len):
    """The raw bytes of a Z block's payload: one whole zstd frame."""
    if zstandard is not None:
        obj = zstandard.ZstdDecompressor().decompressobj()
        try:
            out = obj.decompress(payload)
        except zstandard.ZstdError as e:
            raise DecodeError("zstd payload does not decompress: %s" % e)
        if not obj.eof:
            raise DecodeError("zstd payload is not a complete frame")
        if obj.unused_data:
            raise DecodeError("zstd payload holds more than one frame")
    elif shutil.which("zstd"):
        run = subprocess.run(["zstd", "-dcq"], input=payload, capture_output=True)
        if run.returncode != 0:
            raise DecodeError("zstd payload does not decompress")
        out = run.stdout
    else:
        raise Skip()
    if len(out) != raw_len:
        msg = "zstd payload decompresses to %d bytes, not raw_len %d" % (len(out), raw_len)
        raise DecodeError(msg)
    return out


def read_exact(f, n):
    """Up to n bytes: fewer only at the end of the file."""
    parts, got = [], 0
    while got < n:
        b = f.read(n - got)
        if not b:
            break
        parts.append(b)
        got += len(b)
    return b"".join(parts)


STACK_BLOCKS = (0x53, 0x73)  # 'S' (zstd) and 's' (stored): STACK and TREE items only


def blocks(f):
    """Yields (raw bytes, stack block's id range or None) per block; returns True when cut."""
    head = read_exact(f, HEADER_LEN)
    if len(head) < HEADER_LEN:
        if head and MAGIC.startswith(head[:8]):
            return True
        raise DecodeError("not a compact trace (no magic)", record=False)
    if head[:8] != MAGIC:
        raise DecodeError("not a compact trace (no magic)", record=False)
    version = int.from_bytes(head[8:12], "little")
    if version != VERSION:
        raise DecodeError("compact version %d not supported (only 1)" % version, record=False)
    while True:
        bh = read_exact(f, BLOCK_HEADER_LEN)
        if not bh:
            return False
        if len(bh) < BLOCK_HEADER_LEN:
            return True
        btype = bh[0]
        payload_len = int.from_bytes(bh[4:8], "little")
        raw_len = int.from_bytes(bh[8:12], "little")
        crc = int.from_bytes(bh[12:16], "little")
        if btype not in (0x52, 0x5A) + STACK_BLOCKS:
            raise DecodeError("block type 0x%02x unknown" % btype)
        if bh[1:4] != b"\0\0\0":
            raise DecodeError("block header's reserved bytes are not 0")
        if raw_len > MAX_RAW:
            raise DecodeError("block raw_len %d over 64 MiB" % raw_len)
        head = 16 if btype in STACK_BLOCKS else 0
        if payload_len < head:
            raise DecodeError("stack block payload_len %d under 16" % payload_len)
        if payload_len - head > raw_len + MAX_SLACK:
            raise DecodeError("block payload_len %d over raw_len + 65536" % payload_len)
        if btype in (0x52, 0x73) and payload_len - head != raw_len:
            raise DecodeError("stored block with payload_len %d, raw_len %d" % (payload_len, raw_len))
        payload = read_exact(f, payload_len)
        if len(payload) < payload_len:
            return True
        if zlib.crc32(payload) != crc:
            raise DecodeError("block CRC-32 mismatch")
        rng = None
        if head:
            rng = (int.from_bytes(payload[:8], "little"), int.from_bytes(payload[8:16], "little"))
            if rng[0] == 0 or rng[0] > rng[1]:
                raise DecodeError("stack block of ids %d to %d" % rng)
            payload = payload[16:]
        yield (payload if btype in (0x52, 0x73) else unzstd(payload, raw_len)), rng


# --- Items --------------------------------------------------------------------


class Items:
    """Reads the fields of items from one block's raw bytes."""

    def __init__(self, raw):
        self.raw = raw
        self.pos = 0

    def more(self):
        return self.pos < len(self.raw)

    def u8(self):
        if self.pos >= len(self.raw):
            raise DecodeError("item cut by the end of its block")
        self.pos += 1
        return self.raw[self.pos - 1]

    def varint(self):
        v = 0
        for i in range(10):
            b = self.u8()
            if i == 9 and b > 1:
                raise DecodeError("varint longer than 64 bits")
            v |= (b & 0x7F) << (7 * i)
            if not b & 0x80:
                return v
        raise AssertionError("unreachable")

    def take(self, n):
        if n > len(self.raw) - self.pos:
            raise DecodeError("item cut by the end of its block")
        self.pos += n
        return self.raw[self.pos - n : self.pos]


def unzigzag(u):
    return (u >> 1) ^ -(u & 1)


def skip_ext(it):
    """An extension area: key:varint value:varint pairs; returns them as a dict."""
    area = Items(it.take(it.varint()))
    pairs = {}
    while area.more():
        k = area.varint()
        pairs[k] = area.varint()
    return pairs


PENDING_MAX = 65536
FRAMES_MAX = 1024
HEX_DIGITS = set(b"0123456789abcdef")


class Decoder:
    def __init__(self):
        self.strings = []
        self.classes = []
        self.live = {}
        self.records = 0  # trace records decoded so far
        self.pending_stacks = {}  # id -> frames, until a packed record takes them
        self.pending_modules = []
        self.py_codes = set()
        self.py_frames = False

    def string(self, sid):
        if sid >= len(self.strings):
            raise DecodeError("string %d not defined" % sid)
        return self.strings[sid]

    def timestamp(self, it):
        t = self.prev_ts + it.varint()
        if t > U64_MAX:
            raise DecodeError("timestamp over 2^64 - 1")
        self.prev_ts = t
        return t

    def block(self, raw, rng=None):
        """Yields (record, text): each trace record of one block (a stack block has none)."""
        self.prev_ts = 0
        self.prev_addr = 0
        self.history = []
        self.thread = 0
        self.threads = []  # the block's THREAD items, the first 32: THREAD_AGAIN's numbers
        self.stack_range = rng
        it = Items(raw)
        while it.more():
            op = it.u8()
            if rng and op not in (0x06, 0x08):
                raise DecodeError("item 0x%02x in a stack block" % op)
            if op >= 0x80:
                rec = self.memory(it, op)
                self.records += 1
                yield rec, None
            elif op in ITEMS:
                out = ITEMS[op](self, it)
                if out is not None:
                    self.records += 1
                    yield out
            elif 0x20 <= op <= 0x3F:
                i = op - 0x20
                if i >= len(self.threads):
                    raise DecodeError("THREAD_AGAIN %d: the block's THREAD items named %d"
                                      % (i, len(self.threads)))
                self.thread = self.threads[i]
            elif 0x40 <= op <= 0x7F:
                it.take(it.varint())
            else:
                raise DecodeError("opcode 0x%02x not defined in version 1" % op)

    def item_string(self, it):
        data = it.take(it.varint())
        if b"\0" in data:
            raise DecodeError("string %d holds a NUL byte" % len(self.strings))
        # Python's replacement is Unicode's: one U+FFFD per maximal subpart.
        self.strings.append(data.decode("utf-8", errors="replace"))

    def item_stack(self, it, tree=False):
        sid = it.varint()
        parent = it.varint() if tree else None
        n = it.varint()
        what = "TREE" if tree else "STACK"
        if sid == 0:
            raise DecodeError("%s item: stack id 0" % what)
        if not 1 <= n <= FRAMES_MAX:
            raise DecodeError("%s item: %d frames" % (what, n))
        rng = self.stack_range
        if rng and not (rng[0] <= sid - (n - 1 if tree else 0) and sid <= rng[1]):
            raise DecodeError("stack %d outside its block's ids %d to %d" % (sid, rng[0], rng[1]))
        if sid in self.pending_stacks:
            raise DecodeError("stack %d defined twice" % sid)
        if len(self.pending_stacks) >= PENDING_MAX:
            raise DecodeError("too many pending stacks")
        frames, prev = [], 0
        for _ in range(n):
            prev = (prev + unzigzag(it.varint())) & U64_MAX
            frames.append("0x%x" % prev)
        self.pending_stacks[sid] = (frames, parent)

    def item_tree(self, it):
        self.item_stack(it, tree=True)

    def item_module(self, it):
        path = it.take(it.varint())
        base, start, end = it.varint(), it.varint(), it.varint()
        bid = it.take(it.varint())
        if b"\0" in path:
            raise DecodeError("MODULE item: NUL in the path")
        if start > end:
            raise DecodeError("MODULE item: start past end")
        if len(bid) % 2 or len(bid) > 128 or not set(bid) <= HEX_DIGITS:
            raise DecodeError("MODULE item: bad build id")
        if len(self.pending_modules) >= PENDING_MAX:
            raise DecodeError("too many pending modules")
        mod = {"path": path.decode("utf-8", errors="replace"), "base": "0x%x" % base,
               "start": "0x%x" % start, "end": "0x%x" % end}
        if bid:
            mod["build_id"] = bid.decode("ascii")
        self.pending_modules.append(mod)

    def item_thread(self, it):
        self.thread = it.varint()
        if len(self.threads) < 32:
            self.threads.append(self.thread)

    def item_text(self, it):
        text = it.take(it.varint())
        if CHECK:
            rec = parse_line(text)
        else:
            try:
                rec = json.loads(text)
            except ValueError as e:
                raise DecodeError("TEXT record is not JSON: %s" % e)
        if isinstance(rec, dict) and rec.get("kind") == "meta":
            tags = rec.get("tags") or {}
            self.py_frames = self.py_frames or tags.get("cgprobe_python") in ("auto", "on")
        if isinstance(rec, dict) and rec.get("kind") == "memory":
            self.track(rec.get("device"), rec.get("tensor_id"), rec.get("action"), rec.get("bytes"))
            self.learn_codes(rec)
        return rec, text

    # docs/python-frames.md: code objects ride on records; a Python frame
    # (bit 63) names one defined by then, or is a mark (code 0, offset 0 or 1).
    def learn_codes(self, rec):
        codes = rec.get("cgprobe_py_codes") or []
        if codes:
            self.py_frames = True
        for c in codes:
            if c.get("id") in self.py_codes:
                raise DecodeError("Python code %s defined twice" % c.get("id"))
            self.py_codes.add(c.get("id"))
        self.check_py(rec.get("cgprobe_stack_frames") or [])

    def check_py(self, frames):
        if not self.py_frames:
            return
        for f in frames:
            v = int(f, 16)
            if not v >> 63:
                continue
            code, off = (v >> 32) & 0x7FFFFFFF, v & 0xFFFFFFFF
            if code == 0 and off > 1:
                raise DecodeError("Python frame of code 0 at offset %d marks nothing" % off)
            if code and code not in self.py_codes:
                raise DecodeError("Python frame names code %d, not defined" % code)

    def item_class(self, it):
        span = self.string(it.varint())
        op = it.varint()
        op = None if op == 0 else self.string(op - 1)
        device = self.string(it.varint())
        cat = it.u8()
        flags = it.u8()
        if cat >= len(CATEGORIES):
            raise DecodeError("class category %d unknown" % cat)
        if flags & 0xFC:
            raise DecodeError("class flag bits 2-7 set (0x%02x)" % flags)
        self.classes.append((span, op, device, CATEGORIES[cat], bool(flags & 1), bool(flags & 2)))

    def item_span_start(self, it):
        ts = self.timestamp(it)
        sid = it.varint()
        parent = it.varint()
        name = self.string(it.varint())
        kind = it.u8()
        step = it.u8()
        flags = it.u8()
        if kind >= len(SPAN_KINDS):
            raise DecodeError("span kind %d unknown" % kind)
        if step >= len(STEPS):
            raise DecodeError("span step %d unknown" % step)
        if flags & 0x7E:
            raise DecodeError("span flag bits 1-6 set (0x%02x)" % flags)
        if flags & 0x80:
            skip_ext(it)
        rec = {"kind": "span_start", "id": "s%d" % sid}
        if parent:
            rec["parent_id"] = "s%d" % (parent - 1)
        rec.update(name=name, start_ns=ts, span_kind=SPAN_KINDS[kind], measured=bool(flags & 1))
        if STEPS[step]:
            rec["step"] = STEPS[step]
        return rec, None

    def item_span_end(self, it):
        sid = it.varint()
        return {"kind": "span_end", "id": "s%d" % sid, "duration_ns": it.varint()}, None

    def item_device_memory(self, it):
        ts = self.timestamp(it)
        device = self.string(it.varint())
        used = it.varint()
        free = it.varint()
        flags = it.u8()
        if flags & 0x7C:
            raise DecodeError("device_memory flag bits 2-6 set (0x%02x)" % flags)
        rec = {"kind": "device_memory", "timestamp_ns": ts, "device": device}
        rec.update(used_bytes=used, free_bytes=free)
        if flags & 1:
            rec["reserved_bytes"] = it.varint()
        if flags & 2:
            rec["oom_request_bytes"] = it.varint()
        if flags & 0x80:
            skip_ext(it)
        return rec, None

    def memory(self, it, op):
        cid = op & 0x1F
        if cid == 31:
            cid = it.varint()
        if cid >= len(self.classes):
            raise DecodeError("class %d not defined" % cid)
        span, op_name, device, category, managed, vmm = self.classes[cid]
        free = bool(op & 0x40)
        ts = self.timestamp(it)
        ref = it.varint()
        if ref & 1:
            addr = (self.prev_addr + unzigzag(ref >> 1)) & U64_MAX
        else:
            back = ref >> 1
            if back >= HISTORY or back >= len(self.history):
                raise DecodeError("history ref %d out of range" % back)
            addr = self.history[len(self.history) - 1 - back]
        if not free:
            nbytes = it.varint()
        stack = 0
        pre = False
        if op & 0x20:
            ext = skip_ext(it)
            if ext.get(1) == 0:
                raise DecodeError("stack id 0 in a MEMORY item")
            stack = ext.get(1, 0)
            # Key 2: the pre-existing mark, 1 on allocs only.
            if ext.get(2, 0) > 1 or (free and 2 in ext):
                raise DecodeError("bad pre-existing mark in a MEMORY item")
            pre = ext.get(2, 0) == 1
        tid = ("vmm:" if vmm else "") + "0x%x" % addr
        if free:
            nbytes = self.live.get((device, tid))
            if nbytes is None:
                raise DecodeError("packed free of %s on %s, which is not live" % (tid, device))
        rec = {"kind": "memory", "timestamp_ns": ts, "tensor_id": tid, "span_id": span}
        if op_name is not None:
            rec["op_name"] = op_name
        rec.update(device=device, bytes=nbytes, action="free" if free else "alloc")
        rec.update(shape=[nbytes], dtype="u8", category=category)
        if managed and not free:
            rec["managed"] = True
        if pre:
            rec["cgprobe_preexisting"] = True
        # docs/stacks.md: the stack id, and the pending items this record takes.
        if stack:
            rec["cgprobe_stack"] = stack
            if stack in self.pending_stacks:
                frames, parent = self.pending_stacks.pop(stack)
                self.check_py(frames)
                rec["cgprobe_stack_frames"] = frames
                if parent is not None:
                    rec["cgprobe_stack_parent"] = parent
        if self.pending_modules:
            rec["cgprobe_modules"] = self.pending_modules
            self.pending_modules = []
        self.prev_addr = addr
        self.history.append(addr)
        if len(self.history) > 2 * HISTORY:
            del self.history[:HISTORY]
        self.track(device, tid, rec["action"], nbytes)
        return rec

    def track(self, device, tid, action, nbytes):
        """The live table, kept by every memory record, packed or TEXT."""
        if action == "alloc":
            self.live[(device, tid)] = nbytes
        elif action == "free":
            self.live.pop((device, tid), None)


ITEMS = {
    0x01: Decoder.item_string,
    0x02: Decoder.item_thread,
    0x03: Decoder.item_text,
    0x05: Decoder.item_class,
    0x06: Decoder.item_stack,
    0x08: Decoder.item_tree,
    0x07: Decoder.item_module,
    0x10: Decoder.item_span_start,
    0x11: Decoder.item_span_end,
    0x12: Decoder.item_device_memory,
}

# --- The trace/6 rules (--check) ----------------------------------------------

CHECK = False


class NegZero(int):
    """The literal -0, which no u64 field accepts."""


def no_constant(name):
    raise ValueError("%s is not JSON" % name)


def unique_pairs(pairs):
    obj = {}
    for k, v in pairs:
        if k in obj:
            raise ValueError("duplicate key `%s`" % k)
        obj[k] = v
    return obj


def check_value(v, depth=1):
    """Nesting, NUL and lone surrogates anywhere in a parsed line."""
    if depth > 128:
        raise DecodeError("nesting deeper than 128 arrays/objects")
    if isinstance(v, str):
        check_string(v)
    elif isinstance(v, dict):
        for k, x in v.items():
            check_string(k)
            check_value(x, depth + 1)
    elif isinstance(v, list):
        for x in v:
            check_value(x, depth + 1)


def check_string(s):
    if "\0" in s:
        raise DecodeError("NUL in a string")
    for c in s:
        if 0xD800 <= ord(c) <= 0xDFFF:
            raise DecodeError("lone surrogate in a string")


def parse_line(text):
    """One JSONL line, strictly (trace-format.md, "Strict JSON")."""
    try:
        s = text.decode("utf-8")
    except UnicodeDecodeError:
        raise DecodeError("invalid UTF-8 in a TEXT record")
    if "\n" in s:
        raise DecodeError("newline inside a TEXT record")
    try:
        v = json.loads(
            s,
            object_pairs_hook=unique_pairs,
            parse_constant=no_constant,
            parse_int=lambda x: NegZero(0) if x == "-0" else int(x),
        )
    except ValueError as e:
        raise DecodeError("invalid JSON: %s" % e)
    check_value(v)
    return v


def is_u64(v):
    return type(v) is int and 0 <= v <= U64_MAX


STR, U64, BOOL, F64 = "string", "unsigned 64-bit integer", "boolean", "number"
REQ, OPT, DEF = "required", "optional", "defaulted"  # null means absent only for OPT


def enum(*names):
    return ("one of " + ", ".join(names), names)


STR_LIST = ("array of strings", None)
U64_LIST = ("array of u64", None)
TAGS = ("object of strings", None)
MODULES = ("array of module objects", None)
CATEGORY = enum(*CATEGORIES)
DEVICE_ID = [
    ("cgprobe_device_uuid", STR, OPT),
    ("cgprobe_device_name", STR, OPT),
    ("cgprobe_device_total_bytes", U64, OPT),
]

# Each kind's fields (docs/trace-format.md, The records, and Extensions).
KINDS = {
    "meta": [
        ("schema", STR, REQ), ("run_id", STR, REQ), ("correlation_id", STR, REQ),
        ("entrypoint", STR, REQ), ("phase", enum("train", "infer"), REQ),
        ("timestamp", STR, REQ), ("capture_step", U64, REQ), ("warmup_steps", U64, REQ),
        ("device", STR, REQ), ("measured_region_device_synchronized", BOOL, OPT),
        ("timing_mode", enum("host", "device_synchronized"), REQ), ("tags", TAGS, REQ),
        ("candle_version", STR, OPT),
    ],
    "span_start": [
        ("id", STR, REQ), ("parent_id", STR, OPT), ("name", STR, REQ), ("start_ns", U64, REQ),
        ("span_kind", enum(*SPAN_KINDS), REQ), ("measured", BOOL, DEF),
        ("step", enum(*STEPS[1:]), OPT),
    ],
    "span_end": [("id", STR, REQ), ("duration_ns", U64, DEF)],
    "op": [
        ("span_id", STR, REQ), ("op_name", STR, REQ), ("inputs", STR_LIST, DEF),
        ("output", STR, OPT), ("shape", U64_LIST, REQ), ("dtype", STR, REQ),
        ("device", STR, REQ), ("duration_ns", U64, REQ), ("timestamp_ns", U64, DEF),
        ("storage_bytes", U64, OPT), ("input_storage_bytes", U64, DEF),
    ],
    "tensor": [
        ("span_id", STR, REQ), ("tensor_id", STR, REQ), ("shape", U64_LIST, REQ),
        ("dtype", STR, REQ), ("device", STR, REQ), ("requires_grad", BOOL, DEF),
        ("storage_bytes", U64, OPT), ("category", CATEGORY, REQ),
    ],
    "memory": [
        ("timestamp_ns", U64, REQ), ("tensor_id", STR, REQ), ("span_id", STR, REQ),
        ("op_name", STR, OPT), ("device", STR, REQ), ("bytes", U64, REQ),
        ("action", enum("alloc", "free"), REQ), ("shape", U64_LIST, DEF), ("dtype", STR, REQ),
        ("category", CATEGORY, DEF), ("managed", BOOL, OPT),
        ("cgprobe_preexisting", BOOL, OPT),
    ] + DEVICE_ID + [
        # docs/stacks.md
        ("cgprobe_stack", U64, OPT), ("cgprobe_stack_frames", STR_LIST, OPT),
        ("cgprobe_stack_parent", U64, OPT), ("cgprobe_modules", MODULES, OPT),
    ],
    "device_memory": [
        ("timestamp_ns", U64, REQ), ("device", STR, REQ), ("used_bytes", U64, REQ),
        ("free_bytes", U64, REQ), ("reserved_bytes", U64, OPT), ("oom_request_bytes", U64, OPT),
    ] + DEVICE_ID,
    "gradient": [
        ("event_id", STR, REQ), ("root", STR, REQ), ("key", STR, REQ),
        ("state", enum("present", "missing", "zero", "non_finite"), REQ), ("norm", F64, OPT),
    ],
    "edge": [("from_span", STR, REQ), ("to_span", STR, REQ), ("duration_ns", U64, REQ)],
    "cgprobe_device": [
        ("device", STR, REQ), ("uuid", STR, REQ), ("name", STR, OPT), ("total_bytes", U64, OPT),
    ],
}


def type_ok(v, want):
    if want is STR:
        return isinstance(v, str)
    if want is U64:
        return is_u64(v) and not isinstance(v, NegZero)
    if want is BOOL:
        return isinstance(v, bool)
    if want is F64:
        return type(v) in (int, float, NegZero) and abs(v) != float("inf")
    if want is STR_LIST:
        return isinstance(v, list) and all(isinstance(x, str) for x in v)
    if want is U64_LIST:
        return isinstance(v, list) and all(type_ok(x, U64) for x in v)
    if want is MODULES:
        return isinstance(v, list) and all(isinstance(x, dict) for x in v)
    if want is TAGS:
        return isinstance(v, dict) and all(isinstance(x, str) for x in v.values())
    return isinstance(v, str) and v in want[1]


def check_fields(rec):
    if not isinstance(rec, dict):
        raise DecodeError("record must be a JSON object")
    kind = rec.get("kind")
    if kind is None:
        raise DecodeError("record has no `kind` field")
    if kind not in KINDS:
        raise DecodeError("unknown record kind %s" % json.dumps(kind))
    for name, want, how in KINDS[kind]:
        v = rec.get(name)
        if v is None:
            if how == REQ or (how == DEF and name in rec):
                what = "is null" if name in rec else "is missing"
                raise DecodeError("%s record: field `%s` %s" % (kind, name, what))
            continue
        if not type_ok(v, want):
            what = want if isinstance(want, str) else want[0]
            raise DecodeError("%s record: field `%s` must be %s" % (kind, name, what))


STACK_FIELDS = ("cgprobe_stack", "cgprobe_stack_frames", "cgprobe_stack_parent")


class TraceRules:
    """What a JSONL reader checks of the records as a stream."""

    def __init__(self):
        self.seen_meta = False
        self.started = set()
        self.ended = set()
        self.stacks = {}  # id -> depth

    def stack_rules(self, rec):
        """docs/stacks.md: flat and tree definitions, and uses."""
        sid = rec.get("cgprobe_stack")
        frames = rec.get("cgprobe_stack_frames")
        parent = rec.get("cgprobe_stack_parent")
        if parent is not None and frames is None:
            raise DecodeError("cgprobe_stack_parent without cgprobe_stack_frames")
        if not sid:
            raise DecodeError("cgprobe_stack_frames without a stack id 1 or more")
        if rec["action"] == "free":
            raise DecodeError("cgprobe_stack on a free")
        if frames is None:
            if sid not in self.stacks:
                raise DecodeError("stack %d not defined" % sid)
            return
        if sid in self.stacks:
            raise DecodeError("stack %d defined twice" % sid)
        if parent is None:
            self.stacks[sid] = len(frames)
            return
        n = len(frames)
        if sid < n:
            raise DecodeError("stack %d with %d new frames: below 1" % (sid, n))
        for k in range(sid - n + 1, sid):
            if k in self.stacks:
                raise DecodeError("stack %d defined twice" % k)
        base = 0
        if parent:
            if parent not in self.stacks:
                raise DecodeError("stack %d not defined" % parent)
            base = self.stacks[parent]
        if base + n > FRAMES_MAX:
            raise DecodeError("stack %d has more than %d frames" % (sid, FRAMES_MAX))
        for j, k in enumerate(range(sid - n + 1, sid + 1)):
            self.stacks[k] = base + j + 1

    def record(self, rec, first):
        check_fields(rec)
        kind = rec["kind"]
        if kind == "meta":
            # Named at the meta out of place, as a JSONL reader does; a trace
            # without one fails at its end.
            if not first:
                raise DecodeError("meta record must be the first record")
            if rec["schema"] != "candle-graph/trace/6":
                raise DecodeError("unsupported trace schema %s" % json.dumps(rec["schema"]))
            self.seen_meta = True
        elif kind == "memory" and any(k in rec for k in STACK_FIELDS):
            self.stack_rules(rec)
        elif kind == "span_start":
            if rec["id"] in self.started:
                raise DecodeError("span `%s` started twice" % rec["id"])
            self.started.add(rec["id"])
        elif kind == "span_end":
            if rec["id"] not in self.started:
                raise DecodeError("span_end for unknown span `%s`" % rec["id"])
            if rec["id"] in self.ended:
                raise DecodeError("span `%s` ended twice" % rec["id"])
            self.ended.add(rec["id"])


# --- Output -------------------------------------------------------------------


def as_jsonl(rec, text):
    if text is not None:
        return text
    return json.dumps(rec, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def decode(path, emit):
    """Calls emit(record, text) for each record; returns the exit status."""
    dec = Decoder()
    rules = TraceRules() if CHECK else None
    try:
        with open(path, "rb") as f:
            gen = blocks(f)
            while True:
                try:
                    raw, rng = next(gen)
                except StopIteration as stop:
                    cut = stop.value
                    break
                for rec, text in dec.block(raw, rng):
                    if rules:
                        try:
                            rules.record(rec, dec.records == 1)
                        except DecodeError as e:
                            e.number = dec.records
                            raise
                    emit(rec, text)
        if cut:
            print("%s: trace truncated after %d records" % (path, dec.records), file=sys.stderr)
        if rules and not rules.seen_meta:
            raise DecodeError("trace stream is missing a meta record", record=False)
    except DecodeError as e:
        # An item's error is in the record being read, a rule's in the one just read.
        where = "record %d: " % (e.number or dec.records + 1) if e.record else ""
        print("%s: %s%s" % (path, where, e), file=sys.stderr)
        return 1
    except Skip:
        print("%s: zstd block, but no zstandard module nor zstd command" % path, file=sys.stderr)
        return 77
    except OSError as e:
        print("%s: %s" % (path, e.strerror), file=sys.stderr)
        return 1
    return 0


def compare(path, jsonl):
    """Decodes path and compares its records with jsonl's as JSON values."""
    try:
        with open(jsonl, "rb") as f:
            want = [json.loads(line) for line in f if line.strip()]
    except (OSError, ValueError) as e:
        print("%s: %s" % (jsonl, e), file=sys.stderr)
        return 1
    got = []
    status = decode(path, lambda rec, text: got.append(rec))
    if status != 0:
        return status
    for n, (g, w) in enumerate(zip(got, want), 1):
        if g != w:
            print("%s: record %d differs from %s" % (path, n, jsonl), file=sys.stderr)
            print("  decoded:  %s" % json.dumps(g), file=sys.stderr)
            print("  expected: %s" % json.dumps(w), file=sys.stderr)
            return 1
    if len(got) != len(want):
        print("%s: %d records, %s has %d" % (path, len(got), jsonl, len(want)), file=sys.stderr)
        return 1
    return 0


def main(argv):
    global CHECK
    args, jsonl = [], None
    it = iter(argv)
    for a in it:
        if a == "--check":
            CHECK = True
        elif a == "--compare":
            jsonl = next(it, None)
        elif a.startswith("--compare="):
            jsonl = a[len("--compare=") :]
        elif a.startswith("-") and a != "-":
            args = None
            break
        else:
            args.append(a)
    if args is None or len(args) != 1 or (jsonl is not None and not jsonl):
        print("usage: compact_decode.py [--check] [--compare JSONL] FILE", file=sys.stderr)
        return 2
    if jsonl is not None:
        return compare(args[0], jsonl)
    out = sys.stdout.buffer
    status = decode(args[0], lambda rec, text: out.write(as_jsonl(rec, text) + b"\n"))
    out.flush()
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

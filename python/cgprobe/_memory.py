# SPDX-License-Identifier: MIT
"""The live figures' structs and calls (include/cgprobe.h, cgprobe_memory_*), behind
cgprobe.memory_mark, memory_now, memory_devices and memory_site: imported on first
use. Each function gets the probe's function (None without it)."""

import collections
import ctypes
import errno

MemoryFigures = collections.namedtuple(
    "MemoryFigures", "live_bytes live_count peak_bytes mark_bytes mark peak_alloc_bytes kept_alloc_bytes")
MemorySite = collections.namedtuple("MemorySite", "file function line")


class _Figures(ctypes.Structure):  # struct cgprobe_memory_figures
    _fields_ = [(name, ctypes.c_uint64) for name in MemoryFigures._fields]


class _Site(ctypes.Structure):  # struct cgprobe_memory_site
    _fields_ = [("file", ctypes.c_char * 1024), ("function", ctypes.c_char * 256),
                ("line", ctypes.c_int64)]


def _check(r, what, absent=(errno.ENODEV,)):
    """False for an errno that means no figures (-ENODEV: loaded, this process not
    recorded); OSError for another."""
    if r >= 0:
        return True
    if -r in absent:
        return False
    raise OSError(-r, "cgprobe: %s: %s" % (what, errno.errorcode.get(-r, str(-r))))


def mark(fn):
    out = ctypes.c_uint64(0)
    if fn is None or not _check(fn(ctypes.addressof(out)), "memory_mark"):
        return None
    return out.value


def now(fn, device):
    out = _Figures()
    if fn is None:
        return None
    r = fn(device, ctypes.addressof(out), ctypes.sizeof(out))
    # -ENOENT: nothing recorded on the device yet, its figures zero.
    if r != -errno.ENOENT and not _check(r, "memory_now(%r)" % (device,)):
        return None
    return MemoryFigures(*(getattr(out, name) for name in MemoryFigures._fields))


def devices(fn):
    buf = ctypes.create_string_buffer(256 * 32)
    if fn is None:
        return []
    r = fn(buf, len(buf))
    if not _check(r, "memory_devices") or r == 0:
        return []
    return buf.value.decode("utf-8", "replace").split(",")


def site(fn, device):
    out = _Site()
    if fn is None or not _check(fn(device, ctypes.addressof(out), ctypes.sizeof(out)),
                                "memory_site(%r)" % (device,), (errno.ENODEV, errno.ENOENT)):
        return None
    return MemorySite(out.file.decode("utf-8", "replace"),
                      out.function.decode("utf-8", "replace"), out.line)

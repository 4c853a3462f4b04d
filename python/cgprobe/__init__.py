# SPDX-License-Identifier: MIT
"""Training-step annotations for programs profiled by cgprobe.

Pure Python (ctypes), no build step. The functions are those of
libcgprobe.so's C API (include/cgprobe.h), found in the running process:
the probe is LD_PRELOADed, so ``ctypes.CDLL(None)`` sees its symbols. When
the probe is absent (or does not record this process) everything here does
nothing and costs a function call.

    import cgprobe
    for batch in data:
        with cgprobe.update():                  # one training update: a span
            with cgprobe.phase("data"):         # another phase: no category of its own
                batch = prepare(batch)
            with cgprobe.step("forward"):       # memory made here: activation
                loss = model(batch)
            with cgprobe.step("backward"):      # gradient
                grads = grad_fn(loss)
            with cgprobe.step("optimizer"):     # optimizer
                state = apply(state, grads)

For PyTorch, ``cgprobe.torch.watch(model, optimizer)`` marks all of that by
itself (see docs/python.md).
"""

import contextlib
import ctypes
import functools
import math
import re
import threading

try:
    from ._version import __version__
except ImportError:  # the source tree's folder; the build's copy (BUILDDIR/python) has it
    __version__ = "unknown"

__all__ = [
    "enabled", "span", "step", "phase", "begin_span", "end_span", "update", "next_update",
    "begin_update", "end_update", "update_number", "device_checkpoint",
    "mark_parameters", "mark_parameters_many", "thread_name", "gradient", "flush",
    "process_rank", "memory_mark", "memory_now", "memory_devices", "memory_site",
    "memory_kept_site",
    "STEP_NONE", "STEP_FORWARD", "STEP_BACKWARD", "STEP_OPTIMIZER",
]

# enum cgprobe_step, enum cgprobe_span_kind, enum cgprobe_grad_state (include/cgprobe.h).
STEP_NONE, STEP_FORWARD, STEP_BACKWARD, STEP_OPTIMIZER = 0, 1, 2, 3
_STEPS = {None: STEP_NONE, "none": STEP_NONE, "forward": STEP_FORWARD,
          "backward": STEP_BACKWARD, "optimizer": STEP_OPTIMIZER}
_KINDS = {"function": 0, "op": 1, "module": 2}
_GRAD_STATES = {"present": 0, "missing": 1, "zero": 2, "non_finite": 3}
_MEASURED, _PHASE = 1, 2  # CGPROBE_SPAN_MEASURED, CGPROBE_SPAN_PHASE
# A phase's name, as the probe checks it (another phase of training than the steps).
_PHASE_NAME = re.compile(r"[A-Za-z0-9_.-]{1,31}\Z")
_MARKS_MAX = 65536  # ranges per cgprobe_mark_parameters_n call
_ABSENT = (1 << 64) - 1

_u64, _int, _str = ctypes.c_uint64, ctypes.c_int, ctypes.c_char_p

# name: (restype, argtypes). The probe's exports looked up in this process.
_SIGNATURES = {
    "cgprobe_span_begin": (_u64, [_str, _int]),
    "cgprobe_span_begin_ex": (_u64, [_str, _int, _int, ctypes.c_uint]),
    "cgprobe_span_end": (_int, [_u64]),
    "cgprobe_flush": (_int, []),
    "cgprobe_update_begin": (_u64, []),
    "cgprobe_update_end": (_int, []),
    "cgprobe_device_checkpoint": (_int, [_str, _u64, _u64, _u64, _u64]),
    "cgprobe_mark_parameters": (_int, [ctypes.c_void_p, _u64]),
    "cgprobe_mark_parameters_n": (_int, [ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(_u64),
                                         ctypes.c_size_t]),
    "cgprobe_thread_name": (_int, [_str]),
    "cgprobe_gradient": (_int, [_str, _str, _int, ctypes.c_double]),
    "cgprobe_process_rank": (_int, [ctypes.c_int64, ctypes.c_int64]),
    # The live figures' structs are made in ._memory, on first use (docs/pytest.md).
    "cgprobe_memory_mark": (_int, [ctypes.c_void_p]),
    "cgprobe_memory_now": (_int, [_str, ctypes.c_void_p, ctypes.c_size_t]),
    "cgprobe_memory_devices": (_int, [ctypes.c_char_p, ctypes.c_size_t]),
    "cgprobe_memory_site": (_int, [_str, ctypes.c_void_p, ctypes.c_size_t]),
    "cgprobe_memory_kept_site": (_int, [_str, ctypes.c_void_p, ctypes.c_size_t]),
}


def _find():
    try:
        proc = ctypes.CDLL(None)
    except OSError:
        return {}
    found = {}
    for name, (res, args) in _SIGNATURES.items():
        fn = getattr(proc, name, None)
        if fn is not None:
            fn.restype, fn.argtypes = res, args
            found[name] = fn
    # Without the first two there is no probe, whatever else matches.
    if "cgprobe_span_begin" not in found or "cgprobe_span_end" not in found:
        return {}
    return found


_fn = _find()
_begin = _fn.get("cgprobe_span_begin")
_begin_ex = _fn.get("cgprobe_span_begin_ex")
_end = _fn.get("cgprobe_span_end")


def enabled():
    """Whether libcgprobe.so is loaded in this process (it may still not record it)."""
    return bool(_fn)


def _bytes(s):
    return s if isinstance(s, bytes) else str(s).encode("utf-8", "replace")


def _step_of(step):
    """(the step's number, the phase's name or None) for a span's step argument."""
    if step in _STEPS:
        return _STEPS[step], None
    if isinstance(step, str) and _PHASE_NAME.match(step):
        return STEP_NONE, step
    raise ValueError("cgprobe: step must be None, 'forward', 'backward', 'optimizer' or a "
                     "phase's name (1 to 31 of A-Z a-z 0-9 _ . -), not %r" % (step,))


_local = threading.local()  # per thread: the phase span opened around a span of another name


def begin_span(name, step=None, kind="function", measured=False):
    """Opens a span on this thread; returns its id (0: not recorded). Close it with end_span.

    step may name a phase other than the three steps ("data"): the span is that
    phase when named after it, else it opens inside a span that is."""
    st, phase_name = _step_of(step)
    if not _fn:
        return 0
    flags = _MEASURED if measured else 0
    if _begin_ex is None:
        return _begin(_bytes(name), st)
    if phase_name is None or phase_name == name:
        return _begin_ex(_bytes(name), st, _KINDS[kind], flags | (_PHASE if phase_name else 0))
    outer = _begin_ex(_bytes(phase_name), STEP_NONE, _KINDS["function"], _PHASE)
    inner = _begin_ex(_bytes(name), STEP_NONE, _KINDS[kind], flags)
    if not inner:
        end_span(outer)
    elif outer:
        if not hasattr(_local, "outer"):
            _local.outer = {}
        _local.outer[inner] = outer
    return inner


def end_span(span_id):
    """Closes span_id, which must be this thread's innermost open span: 0 or -errno."""
    if not span_id or not _fn:
        return 0
    r = _end(span_id)
    outer = getattr(_local, "outer", {}).pop(span_id, 0)
    if outer:
        _end(outer)
    return r


class span:
    """A span as a context manager or decorator: ``with cgprobe.span("attn", step="forward")``.

    step: None, "forward", "backward" or "optimizer" (memory allocated while a
    step is open, by any thread, gets its category), or the name of another
    phase of training ("data"); kind: "function", "op" or "module";
    measured: the trace's one measured region.
    """

    __slots__ = ("name", "step", "kind", "measured", "_ids")

    def __init__(self, name, step=None, kind="function", measured=False):
        _step_of(step)
        if kind not in _KINDS:
            raise ValueError("cgprobe: kind must be 'function', 'op' or 'module', not %r" % (kind,))
        self.name, self.step, self.kind, self.measured = name, step, kind, measured
        self._ids = threading.local()

    def __enter__(self):
        stack = getattr(self._ids, "stack", None)
        if stack is None:
            stack = self._ids.stack = []
        stack.append(begin_span(self.name, self.step, self.kind, self.measured))
        return self

    def __exit__(self, *exc):
        end_span(self._ids.stack.pop())
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self:
                return fn(*args, **kwargs)
        return wrapper


def step(which, name=None):
    """A span that is a step: ``with cgprobe.step("backward"):`` (named after the step).

    which may also name another phase ("data")."""
    return span(name or which, step=which)


def phase(name):
    """A phase of training other than the three steps, as a with-block or decorator:
    ``with cgprobe.phase("data"):``, a span named after it. "forward", "backward" and
    "optimizer" are those steps."""
    if name in (None, "none"):
        raise ValueError("cgprobe: a phase needs a name other than %r" % (name,))
    return span(name, step=name)


# Update boundaries: one process-wide count, shared by update(), next_update()
# and cgprobe.torch, so that marking updates both ways counts each once.
_update_lock = threading.Lock()
_update_open = 0  # the open update's number, 0 when none


def update_number():
    """The open update's number (1, 2, ...), 0 when none is open (or no probe)."""
    return _update_open


def begin_update():
    """Begins an update unless one is open; returns the open update's number (0: no probe)."""
    global _update_open
    with _update_lock:
        if not _update_open and "cgprobe_update_begin" in _fn:
            _update_open = _fn["cgprobe_update_begin"]()
        return _update_open


def end_update():
    """Ends the open update, if any."""
    global _update_open
    with _update_lock:
        if _update_open:
            _update_open = 0
            _fn["cgprobe_update_end"]()


def next_update():
    """Ends the open update, if any, and begins the next: for loops without a with-block."""
    end_update()
    return begin_update()


@contextlib.contextmanager
def update():
    """One training update (forward, backward and optimizer step) as a with-block."""
    n = begin_update()
    try:
        yield n
    finally:
        end_update()


def device_checkpoint(device, used_bytes, free_bytes, reserved_bytes=None, allocated_bytes=None):
    """A device_memory record for device ("cuda:0"), with a caching allocator's reserved and
    allocated bytes (None: absent)."""
    f = _fn.get("cgprobe_device_checkpoint")
    if f is None:
        return 0
    return f(_bytes(device), used_bytes, free_bytes,
             _ABSENT if reserved_bytes is None else reserved_bytes,
             _ABSENT if allocated_bytes is None else allocated_bytes)


def mark_parameters(ptr, nbytes):
    """Tells the probe that [ptr, ptr+nbytes) holds model parameters (category parameter)."""
    f = _fn.get("cgprobe_mark_parameters")
    if f is None or not ptr or nbytes <= 0:
        return 0
    return f(ptr, nbytes)


def mark_parameters_many(pairs):
    """mark_parameters for each (ptr, nbytes) of pairs, in one call of the probe (one per
    65536), which the trace shows as one mark; 0 or the first -errno."""
    pairs = [(int(p), int(n)) for p, n in pairs if p and n > 0]
    f = _fn.get("cgprobe_mark_parameters_n")
    if f is None:
        r = 0
        for p, n in pairs:
            r = r or mark_parameters(p, n)
        return r
    r = 0
    for i in range(0, len(pairs), _MARKS_MAX):
        chunk = pairs[i:i + _MARKS_MAX]
        ptrs = (ctypes.c_void_p * len(chunk))(*(p for p, _ in chunk))
        sizes = (_u64 * len(chunk))(*(n for _, n in chunk))
        r = r or f(ptrs, sizes, len(chunk))
    return r


def thread_name(name):
    """Names the calling thread in the trace."""
    f = _fn.get("cgprobe_thread_name")
    return f(_bytes(name)) if f is not None else 0


def gradient(root, key, state="present", norm=None):
    """A gradient fact: root (e.g. the loss), key (a parameter's name), state, norm."""
    f = _fn.get("cgprobe_gradient")
    if f is None:
        return 0
    return f(_bytes(root), _bytes(key), _GRAD_STATES[state], math.nan if norm is None else norm)


def process_rank(rank, world_size=None):
    """Tells the trace this process's rank in its job, and the job's size (None: unknown),
    once known (torch.multiprocessing.spawn, init_process_group(rank=...)): a span
    process_group carrying them (docs/jobs.md). 0, or -errno (a negative rank)."""
    f = _fn.get("cgprobe_process_rank")
    if f is None:
        return 0
    return f(int(rank), 0 if world_size is None else int(world_size))


def flush():
    """Writes everything recorded so far to the trace file."""
    f = _fn.get("cgprobe_flush")
    return f() if f is not None else 0



# The live figures (include/cgprobe.h, cgprobe_memory_*): docs/pytest.md. Their
# structs and named tuples are made by ._memory when first asked for, so that a
# program that never asks does not pay for them at import.
def memory_mark():
    """Starts every device's peak again from its live bytes now; returns the mark's
    number, or None without a probe that records this process with live figures."""
    from . import _memory
    return _memory.mark(_fn.get("cgprobe_memory_mark"))


def memory_now(device="cpu"):
    """The device's MemoryFigures now (live_bytes, live_count, peak_bytes since the last
    mark, mark_bytes: live at the mark, mark, peak_alloc_bytes: the allocation the peak
    is put down to), exact at the call; None without a probe that records this
    process with live figures. A device with nothing recorded yet has zeros."""
    from . import _memory
    return _memory.now(_fn.get("cgprobe_memory_now"), _bytes(device))


def memory_devices():
    """The devices with allocations recorded ("cpu" first, "cuda:0", ...), [] without
    a probe that records this process with live figures."""
    from . import _memory
    return _memory.devices(_fn.get("cgprobe_memory_devices"))


def memory_site(device="cpu"):
    """Where the device's peak since the last mark comes from: the MemorySite (file,
    function, line) of the innermost Python frame of the allocation it is put down
    to (include/cgprobe.h), or None when that is unknown."""
    from . import _memory
    return _memory.site(_fn.get("cgprobe_memory_site"), _bytes(device))


def memory_kept_site(device="cpu"):
    """Where a leak since the last mark comes from: the MemorySite of an allocation
    made since the mark and still live (the figures' kept_alloc_bytes), or None."""
    from . import _memory
    return _memory.site(_fn.get("cgprobe_memory_kept_site"), _bytes(device))

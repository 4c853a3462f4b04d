# SPDX-License-Identifier: MIT
"""Training-step annotations for programs profiled by cgprobe.

Pure Python (ctypes), no build step. The functions are those of
libcgprobe.so's C API (include/cgprobe.h), found in the running process:
the probe is LD_PRELOADed, so ``ctypes.CDLL(None)`` sees its symbols. When
the probe is absent (or does not record this process) everything here does
nothing and costs a function call.

    import cgprobe
    for batch in data:
        with cgprobe.update():                  # one training update
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
import threading

try:
    from ._version import __version__
except ImportError:  # the source tree's folder; the build's copy (BUILDDIR/python) has it
    __version__ = "unknown"

__all__ = [
    "enabled", "span", "step", "begin_span", "end_span", "update", "next_update",
    "begin_update", "end_update", "update_number", "device_checkpoint",
    "mark_parameters", "thread_name", "gradient", "flush",
    "STEP_NONE", "STEP_FORWARD", "STEP_BACKWARD", "STEP_OPTIMIZER",
]

# enum cgprobe_step, enum cgprobe_span_kind, enum cgprobe_grad_state (include/cgprobe.h).
STEP_NONE, STEP_FORWARD, STEP_BACKWARD, STEP_OPTIMIZER = 0, 1, 2, 3
_STEPS = {None: STEP_NONE, "none": STEP_NONE, "forward": STEP_FORWARD,
          "backward": STEP_BACKWARD, "optimizer": STEP_OPTIMIZER}
_KINDS = {"function": 0, "op": 1, "module": 2}
_GRAD_STATES = {"present": 0, "missing": 1, "zero": 2, "non_finite": 3}
_MEASURED = 1
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
    "cgprobe_thread_name": (_int, [_str]),
    "cgprobe_gradient": (_int, [_str, _str, _int, ctypes.c_double]),
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


def begin_span(name, step=None, kind="function", measured=False):
    """Opens a span on this thread; returns its id (0: not recorded). Close it with end_span."""
    if not _fn:
        return 0
    st = _STEPS[step]
    if _begin_ex is not None:
        return _begin_ex(_bytes(name), st, _KINDS[kind], _MEASURED if measured else 0)
    return _begin(_bytes(name), st)


def end_span(span_id):
    """Closes span_id, which must be this thread's innermost open span: 0 or -errno."""
    if not span_id or not _fn:
        return 0
    return _end(span_id)


class span:
    """A span as a context manager or decorator: ``with cgprobe.span("attn", step="forward")``.

    step: None, "forward", "backward" or "optimizer" (memory allocated while a
    step is open, by any thread, gets its category); kind: "function", "op"
    or "module"; measured: the trace's one measured region.
    """

    __slots__ = ("name", "step", "kind", "measured", "_ids")

    def __init__(self, name, step=None, kind="function", measured=False):
        if step not in _STEPS:
            raise ValueError("cgprobe: step must be None, 'forward', 'backward' or 'optimizer', "
                             "not %r" % (step,))
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
    """A span that is a step: ``with cgprobe.step("backward"):`` (named after the step)."""
    return span(name or which, step=which)


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


def flush():
    """Writes everything recorded so far to the trace file."""
    f = _fn.get("cgprobe_flush")
    return f() if f is not None else 0

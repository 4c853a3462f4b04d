# SPDX-License-Identifier: MIT
"""PyTorch training steps for cgprobe: ``cgprobe.torch.watch(model, optimizer)``.

One call marks, from then on:
- forward: each call of the top model (module forward pre/post hooks);
- backward: each ``Tensor.backward()`` / ``torch.autograd.backward()`` call in
  the process (the whole call, on the calling thread; autograd's own threads
  allocate inside it, and a step applies to the whole process);
- optimizer: each ``optimizer.step()`` (the step pre/post hooks of torch 2,
  a wrapper of ``step`` on torch 1.13, which lacks them);
- updates: an update begins at the first forward in training mode with grad
  enabled after the previous update ended, and ends when the optimizer's step
  returns (gradient accumulation: several forwards and backwards, one update);
- the parameters' storage, told to the probe (category ``parameter``), new
  storage in one call, which the trace shows as one mark;
- with CUDA initialised, a device checkpoint at each step boundary: the
  caching allocator's reserved and allocated bytes of each device it holds.

It works, and does nothing, without the probe. See docs/python.md.
"""

import threading
import weakref

import torch

import cgprobe as _cg

__all__ = ["watch", "Watch", "mark_parameters", "cuda_checkpoint"]

_local = threading.local()


def _storage_span(t):
    """(address, bytes) of a tensor's whole storage: torch 2's untyped_storage, 1.13's storage()."""
    try:
        s = t.untyped_storage() if hasattr(t, "untyped_storage") else t.storage()
        return s.data_ptr(), s.nbytes()
    except (RuntimeError, NotImplementedError, TypeError):
        return 0, 0  # meta, sparse or otherwise storage-less tensors


def _new_storages(params, seen):
    """(address, bytes) of each storage of params not in seen, which gets them."""
    out = []
    for p in params:
        ptr, n = _storage_span(p)
        if ptr and n and ptr not in seen:
            seen.add(ptr)
            out.append((ptr, n))
    return out


def mark_parameters(params, seen=None):
    """Tells the probe the storage of each tensor in params, once per storage (seen: the
    addresses told already, updated), all in one call (one mark in the trace); returns the
    bytes told."""
    pairs = _new_storages(params, set() if seen is None else seen)
    _cg.mark_parameters_many(pairs)
    return sum(n for _, n in pairs)


def cuda_checkpoint():
    """A device checkpoint per CUDA device the caching allocator holds memory on."""
    if not torch.cuda.is_available() or not torch.cuda.is_initialized():
        return
    for i in range(torch.cuda.device_count()):
        reserved = torch.cuda.memory_reserved(i)
        if not reserved:
            continue
        free, total = torch.cuda.mem_get_info(i)
        _cg.device_checkpoint("cuda:%d" % i, total - free, free, reserved,
                              torch.cuda.memory_allocated(i))


# --- backward: Tensor.backward and torch.autograd.backward, wrapped once ---

_watches = weakref.WeakSet()  # the live Watch objects; backward is marked while any is
_orig_tensor_backward = None
_orig_autograd_backward = None


def _in_backward(fn, args, kwargs):
    if getattr(_local, "backward", False) or not any(w.active for w in list(_watches)):
        return fn(*args, **kwargs)
    _local.backward = True
    ws = [w for w in list(_watches) if w.active]
    for w in ws:
        w._boundary()
    sid = _cg.begin_span("backward", "backward")
    try:
        return fn(*args, **kwargs)
    finally:
        _cg.end_span(sid)
        _local.backward = False
        for w in ws:
            w._boundary()


def _wrap_backward():
    global _orig_tensor_backward, _orig_autograd_backward
    if _orig_tensor_backward is not None:
        return
    _orig_tensor_backward = torch.Tensor.backward
    _orig_autograd_backward = torch.autograd.backward

    def backward(self, *args, **kwargs):
        return _in_backward(_orig_tensor_backward, (self,) + args, kwargs)

    def autograd_backward(*args, **kwargs):
        return _in_backward(_orig_autograd_backward, args, kwargs)

    for f, o in ((backward, _orig_tensor_backward), (autograd_backward, _orig_autograd_backward)):
        f.__doc__, f.__name__, f.__qualname__, f.__wrapped__ = (
            o.__doc__, o.__name__, getattr(o, "__qualname__", o.__name__), o)
    torch.Tensor.backward = backward
    torch.autograd.backward = autograd_backward


class _Hook:
    """A hook calling a Watch's method; pickles as a no-op so torch.save(model) keeps working."""

    __slots__ = ("watch", "method")

    def __init__(self, watch, method):
        self.watch, self.method = weakref.ref(watch), method

    def __call__(self, *args, **kwargs):
        w = self.watch()
        return getattr(w, self.method)(*args, **kwargs) if w is not None else None

    def __reduce__(self):
        return (_Noop, ())


class _Noop:
    """What a pickled watch hook comes back as: a hook doing nothing."""

    def __call__(self, *args, **kwargs):
        return None


class Watch:
    """What watch() returns: remove() undoes it (closing any open update)."""

    def __init__(self, model, optimizer=None, checkpoints=None, updates=True):
        self.model = weakref.ref(model) if model is not None else None
        self.updates = updates and optimizer is not None  # no step, no end of an update
        self.checkpoints = checkpoints
        self.active = True
        self.parameter_bytes = 0
        self._handles = []
        self._forward = threading.local()
        self._opt_span = threading.local()
        self._unwrap = None
        self._marked = set()
        self.optimizer = weakref.ref(optimizer) if optimizer is not None else None
        self._mark()
        if model is not None:
            self._hook_model(model)
        if optimizer is not None:
            self._hook_optimizer(optimizer)
        _watches.add(self)
        _wrap_backward()

    def _mark(self):
        """Tells the probe of parameter storage not told yet (moved by .to(), say), the
        model's and the optimizer's in one call."""
        if not _cg.enabled():
            return
        m = self.model() if self.model is not None else None
        o = self.optimizer() if self.optimizer is not None else None
        pairs = []
        if m is not None:
            pairs += _new_storages(m.parameters(), self._marked)
        if o is not None:
            pairs += _new_storages((p for g in o.param_groups for p in g["params"]), self._marked)
        _cg.mark_parameters_many(pairs)
        self.parameter_bytes += sum(n for _, n in pairs)

    # --- device checkpoints at step boundaries ---
    def _boundary(self):
        if self.checkpoints is False:
            return
        cuda_checkpoint()

    # --- forward ---
    def _hook_model(self, model):
        pre, post = _Hook(self, "forward_begin"), _Hook(self, "forward_end")
        self._handles.append(model.register_forward_pre_hook(pre))
        try:  # torch >= 2.1: also run when forward raises
            self._handles.append(model.register_forward_hook(post, always_call=True))
        except TypeError:
            self._handles.append(model.register_forward_hook(post))

    # A span still open when the next one begins was left by an exception
    # (a forward that ran out of memory and was retried, torch < 2.1 not
    # calling the forward hook then): it ends there. The model called
    # inside itself is one forward, ended by the inner call.
    def forward_begin(self, module=None, inputs=None):
        if not self.active:
            return None
        st = self._forward
        if getattr(st, "span", 0):
            _cg.end_span(st.span)
        if self.updates and module is not None and module.training and torch.is_grad_enabled():
            if not _cg.update_number():
                self._mark()  # before the update begins: a capture window's snapshot sees it
            _cg.begin_update()
        self._boundary()
        st.span = _cg.begin_span("forward", "forward", kind="module")
        return None

    def forward_end(self, module=None, inputs=None, output=None):
        st = self._forward
        if getattr(st, "span", 0):
            _cg.end_span(st.span)
            st.span = 0
            self._boundary()
        return None

    # --- optimizer ---
    def _hook_optimizer(self, optimizer):
        if hasattr(optimizer, "register_step_pre_hook"):
            self._handles.append(optimizer.register_step_pre_hook(_Hook(self, "step_begin")))
            self._handles.append(optimizer.register_step_post_hook(_Hook(self, "step_end")))
            return
        # torch 1.13: a bound method on the instance, since LR schedulers
        # wrap optimizer.step again and need its __self__ and __func__.
        orig = optimizer.step
        ref = weakref.ref(self)

        def step(opt, *args, **kwargs):
            w = ref()
            if w is None or not w.active:
                return orig(*args, **kwargs)
            w.step_begin()
            try:
                return orig(*args, **kwargs)
            finally:
                w.step_end()

        step.__doc__, step.__wrapped__ = orig.__doc__, orig
        optimizer.step = step.__get__(optimizer, type(optimizer))
        oref = weakref.ref(optimizer)

        def unwrap():
            o = oref()
            if o is not None and o.__dict__.get("step") is not None:
                del o.step

        self._unwrap = unwrap

    def step_begin(self, *args):
        if not self.active:
            return
        st = self._opt_span
        if getattr(st, "span", 0):
            _cg.end_span(st.span)
        self._boundary()
        st.span = _cg.begin_span("optimizer", "optimizer")

    def step_end(self, *args):
        st = self._opt_span
        if not getattr(st, "span", 0):
            return
        _cg.end_span(st.span)
        st.span = 0
        self._boundary()
        if self.updates:
            _cg.end_update()

    def remove(self):
        """Stops marking (hooks removed, step unwrapped); an open update is ended."""
        if not self.active:
            return
        self.active = False
        for h in self._handles:
            h.remove()
        self._handles = []
        if self._unwrap is not None:
            self._unwrap()
            self._unwrap = None
        if self.updates:
            _cg.end_update()
        _watches.discard(self)
        if self in _kept:
            _kept.remove(self)


_kept = []  # watch() keeps its Watch alive as long as the model is


def watch(model, optimizer=None, *, checkpoints=None, updates=True):
    """Marks forward, backward, optimizer steps and updates of model (and optimizer) for cgprobe.

    checkpoints=False: no CUDA device checkpoints. updates=False: no update
    boundaries (mark them yourself with cgprobe.update()). Returns a Watch;
    its remove() undoes this.
    """
    for w in list(_watches):
        if w.active and w.model is not None and w.model() is model:
            return w  # watched already (by --python-steps, say): marked once
    w = Watch(model, optimizer, checkpoints, updates)
    _kept.append(w)
    return w

# SPDX-License-Identifier: MIT
"""What cgprobe --python-steps does to an unedited PyTorch script.

The heuristic, once torch is imported (nothing is imported early):
1. every optimizer made (torch.optim.Optimizer.__init__, which all of
   torch's optimizers and most others call) is noted with its parameters;
2. once one exists, the first call of a module that is not inside another
   module's call (a top-level module) and that has a parameter of a noted
   optimizer is taken for the model: cgprobe.torch.watch(model, optimizer)
   with the first optimizer made that holds one of its parameters, applied
   from that very call on;
3. then the global module hooks are removed (no cost on later calls). Only
   one model is watched; a second optimizer (a GAN's) is not.
"""

import importlib.abc
import importlib.util
import sys
import threading

_state = {"done": False, "optimizers": [], "handles": []}
_local = threading.local()


class _TorchFinder(importlib.abc.MetaPathFinder):
    """Finds nothing; wraps the loader of `torch` so that install runs right after it."""

    def find_spec(self, name, path, target=None):
        if name != "torch":
            return None
        sys.meta_path[:] = [f for f in sys.meta_path if f is not self]
        spec = importlib.util.find_spec(name)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        run = spec.loader.exec_module

        def exec_module(module):
            run(module)
            _after_torch()

        spec.loader.exec_module = exec_module
        return spec


def install():
    if "torch" in sys.modules:
        _after_torch()
    else:
        sys.meta_path.insert(0, _TorchFinder())


def _after_torch():
    import torch

    init = torch.optim.Optimizer.__init__

    def __init__(self, *args, **kwargs):
        init(self, *args, **kwargs)
        _note_optimizer(self)

    __init__.__wrapped__ = init
    __init__.__doc__ = init.__doc__
    torch.optim.Optimizer.__init__ = __init__


def _note_optimizer(opt):
    import weakref
    import torch

    if _state["done"]:
        return
    ids = {id(p) for g in opt.param_groups for p in g["params"]}
    _state["optimizers"].append((weakref.ref(opt), ids))
    if not _state["handles"]:
        mod = torch.nn.modules.module
        _state["handles"] = [mod.register_module_forward_pre_hook(_pre),
                             mod.register_module_forward_hook(_post)]


def _pre(module, inputs):
    depth = getattr(_local, "depth", 0)
    _local.depth = depth + 1
    if depth or _state["done"]:
        return None
    ct = sys.modules.get("cgprobe.torch")
    if ct is not None and any(w.active for w in list(ct._watches)):
        _finish()  # the script calls watch() itself
        return None
    opt = _optimizer_of(module)
    if opt is None:
        return None
    _finish()
    import cgprobe.torch
    w = cgprobe.torch.watch(module, opt)
    # Its pre-hook missed this call; its post-hook (added now) still runs.
    w.forward_begin(module, inputs)
    return None


def _finish():
    _state["done"] = True
    for h in _state["handles"]:
        h.remove()
    _state["handles"] = []
    _state["optimizers"] = []
    _local.depth = 0


def _post(module, inputs, output):
    depth = getattr(_local, "depth", 0)
    if depth:
        _local.depth = depth - 1
    return None


def _optimizer_of(module):
    ids = {id(p) for p in module.parameters()}
    if not ids:
        return None
    for ref, pids in _state["optimizers"]:
        opt = ref()
        if opt is not None and not ids.isdisjoint(pids):
            return opt
    return None

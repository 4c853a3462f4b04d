# SPDX-License-Identifier: MIT
"""cgprobe --python-steps: applies cgprobe.torch.watch to an unedited script.

The wrapper puts this folder first on PYTHONPATH and sets
CGPROBE_PYTHON_STEPS=1. Python imports this file at start-up in place of
the system's sitecustomize, so this one first runs the next sitecustomize
on sys.path (Debian's, a virtualenv's), then, only if the probe is loaded,
arranges for PyTorch to be watched once it is imported (docs/python.md).
"""

import importlib.machinery
import importlib.util
import os
import sys

_here = os.path.dirname(os.path.abspath(__file__))


def _same(p):
    try:
        return os.path.samefile(p or ".", _here)
    except OSError:
        return False


def _chain():
    """Runs the sitecustomize this one hides, registered as sitecustomize."""
    rest = [p for p in sys.path if not _same(p)]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", rest)
    if spec is None or spec.loader is None:
        return
    mod = importlib.util.module_from_spec(spec)
    sys.modules["sitecustomize"] = mod
    try:
        spec.loader.exec_module(mod)
    except Exception as e:  # site.py would print and carry on too
        sys.modules.pop("sitecustomize", None)
        print("Error in sitecustomize; set PYTHONVERBOSE for traceback:\n%s: %s"
              % (type(e).__name__, e), file=sys.stderr)


def _load_cgprobe():
    """The package this folder sits in, as `cgprobe` (one instance for the script too)."""
    if "cgprobe" in sys.modules:
        return sys.modules["cgprobe"]
    pkg = os.path.dirname(_here)
    spec = importlib.util.spec_from_file_location(
        "cgprobe", os.path.join(pkg, "__init__.py"), submodule_search_locations=[pkg])
    mod = importlib.util.module_from_spec(spec)
    sys.modules["cgprobe"] = mod
    spec.loader.exec_module(mod)
    return mod


def _start():
    if os.environ.get("CGPROBE_PYTHON_STEPS") != "1":
        return
    try:
        cg = _load_cgprobe()
        if not cg.enabled():
            return
        from cgprobe import _auto
        _auto.install()
    except Exception as e:  # the program runs whatever happens here
        print("cgprobe: --python-steps not applied: %s: %s" % (type(e).__name__, e),
              file=sys.stderr)


# Nothing else in this folder: out of sys.path again, as if never there.
sys.path[:] = [p for p in sys.path if not _same(p)]
_chain()
_start()

# SPDX-License-Identifier: MIT
"""The sitecustomize the cgprobe wrapper puts first on PYTHONPATH.

Python imports this file at start-up in place of the system's
sitecustomize, so this one first runs the next sitecustomize on sys.path
(Debian's, a virtualenv's), then
- waits for torch.distributed to be imported, and only then, if the probe
  is loaded, has init_process_group tell the trace the process's rank
  once it returns (cgprobe/_dist.py, docs/jobs.md);
- with CGPROBE_PYTHON_STEPS=1 (cgprobe --python-steps), arranges for
  PyTorch to be watched once it is imported (docs/python.md).
Every Python program the wrapper runs pays for this file: it imports
nothing Python has not loaded already at start-up (importlib.util alone
would cost milliseconds), and the wait is one finder on sys.meta_path.
"""

import os
import sys

_here = os.path.dirname(os.path.abspath(__file__))


def _same(p):
    try:
        return os.path.samefile(p or ".", _here)
    except OSError:
        return False


def _chain():
    """Runs the sitecustomize this one hides, which takes the name; this one keeps it if none."""
    me = sys.modules.pop("sitecustomize", None)
    try:
        __import__("sitecustomize")
    except ImportError as e:
        if e.name != "sitecustomize":
            print("Error in sitecustomize; set PYTHONVERBOSE for traceback:\n%s: %s"
                  % (type(e).__name__, e), file=sys.stderr)
    except Exception as e:  # site.py would print and carry on too
        print("Error in sitecustomize; set PYTHONVERBOSE for traceback:\n%s: %s"
              % (type(e).__name__, e), file=sys.stderr)
    # The import of this file ends by taking the name's module from sys.modules.
    if "sitecustomize" not in sys.modules and me is not None:
        sys.modules["sitecustomize"] = me


def _load_cgprobe():
    """The package this folder sits in, as `cgprobe` (one instance for the script too)."""
    if "cgprobe" in sys.modules:
        return sys.modules["cgprobe"]
    import importlib.util
    pkg = os.path.dirname(_here)
    spec = importlib.util.spec_from_file_location(
        "cgprobe", os.path.join(pkg, "__init__.py"), submodule_search_locations=[pkg])
    mod = importlib.util.module_from_spec(spec)
    sys.modules["cgprobe"] = mod
    spec.loader.exec_module(mod)
    return mod


def _dist_imported(module):
    try:
        import ctypes  # torch has loaded it already
        if not hasattr(ctypes.CDLL(None), "cgprobe_process_rank"):
            return  # no probe in this process (or one without the function): nothing to do
        _load_cgprobe()
        from cgprobe import _dist
        _dist.install(module)
    except Exception as e:  # the program runs whatever happens here
        print("cgprobe: the rank of torch.distributed's process group will not be recorded: "
              "%s: %s" % (type(e).__name__, e), file=sys.stderr)


class _DistFinder:
    """Finds nothing itself; runs _dist_imported right after torch.distributed is."""

    def find_spec(self, name, path=None, target=None):
        if name != "torch.distributed":
            return None
        sys.meta_path[:] = [f for f in sys.meta_path if f is not self]
        for finder in sys.meta_path:
            find = getattr(finder, "find_spec", None)
            spec = find(name, path, target) if find is not None else None
            if spec is not None:
                break
        else:
            return None
        run = getattr(spec.loader, "exec_module", None)
        if run is None:
            return spec

        def exec_module(module):
            run(module)
            _dist_imported(module)

        spec.loader.exec_module = exec_module
        return spec


def _python_steps():
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
if "torch.distributed" not in sys.modules:
    sys.meta_path.insert(0, _DistFinder())
_python_steps()

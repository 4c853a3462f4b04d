# SPDX-License-Identifier: MIT
# Allocations at known lines (each marked "MARK:name"), for
# tests/test-py-frames.sh: the sites cgtrace names must be these lines.
#   frames.py [--torch] [--fork] [--exec] [--cthread LIB]
import ctypes
import os
import subprocess
import sys
import threading

keep = []


def nested_bytearray():
    def inner():
        return bytearray(3 << 20)  # MARK:bytearray

    return inner()


def numpy_array():
    import numpy

    return numpy.ones(1 << 19)  # MARK:numpy


def torch_tensor():
    import torch

    def make():
        return torch.empty(5 << 20, dtype=torch.uint8)  # MARK:torch

    return make()


def in_thread(out):
    out.append(bytearray(6 << 20))  # MARK:thread


def from_c_callback():
    libc = ctypes.CDLL(None)
    made = []

    @ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p)
    def compare(a, b):
        if not made:
            made.append(bytearray(7 << 20))  # MARK:ctypes
        return 0

    items = (ctypes.c_int * 4)(4, 3, 2, 1)
    libc.qsort(items, 4, ctypes.sizeof(ctypes.c_int), compare)
    keep.extend(made)


def in_c_thread(lib):
    """A thread made in C (tests/python/cthread.c) calls back into Python."""
    def allocate():
        keep.append(bytearray(12 << 20))  # MARK:cthread

    call = ctypes.CDLL(lib).cg_test_call_in_c_thread
    call.argtypes = [ctypes.py_object]
    if call(allocate) != 0:
        raise RuntimeError("the C thread's call failed")


def leaked():
    libc = ctypes.CDLL(None)
    libc.malloc.restype = ctypes.c_void_p
    return libc.malloc(9 << 20)  # MARK:leak


def loader_worker():
    import torch
    from torch.utils.data import DataLoader, Dataset

    class Items(Dataset):
        def __len__(self):
            return 4

        def __getitem__(self, i):
            return torch.zeros(2 << 20, dtype=torch.uint8)  # MARK:worker

    for _ in DataLoader(Items(), batch_size=2, num_workers=2):
        pass


def under_cprofile():
    import cProfile

    def profiled():
        keep.append(bytearray(5 << 19))  # MARK:cprofile

    cProfile.runctx("profiled()", globals(), {"profiled": profiled})


def compiled_in_a_loop():
    """Code objects made and freed one after another, at one address or
    another: each one's allocation keeps its own line."""
    for i in range(40):
        src = "def f():\n" + "\n" * i + "    return bytearray(%d)\n" % ((1 << 20) + 4096 * i)
        ns = {}
        exec(compile(src, "generated.py", "exec"), ns)
        keep.append(ns["f"]())
        del ns


def deep(n):
    if n:
        return deep(n - 1)
    return bytearray(15 << 20)  # MARK:deep


def forked():
    pid = os.fork()
    if pid == 0:
        b = bytearray(11 << 20)  # MARK:fork
        os._exit(0 if len(b) else 1)
    os.waitpid(pid, 0)


def main():
    big = []
    big.append(nested_bytearray())
    try:
        big.append(numpy_array())
    except ImportError:
        pass
    if "--torch" in sys.argv:
        big.append(torch_tensor())
        loader_worker()
    t = threading.Thread(target=in_thread, args=(big,))
    t.start()
    t.join()
    from_c_callback()
    if "--cthread" in sys.argv:
        in_c_thread(sys.argv[sys.argv.index("--cthread") + 1])
    leaked()
    keep.append(bytearray(2 << 20))  # MARK:global
    small = [("%d" % i) * 3 for i in range(50000)]  # MARK:small
    under_cprofile()
    compiled_in_a_loop()
    keep.append(deep(300))
    if "--fork" in sys.argv:
        forked()
    if "--exec" in sys.argv:
        subprocess.run([sys.executable, "-c", "x = bytearray(13 << 20)"], check=True)
    print(len(big), len(small), flush=True)


main()

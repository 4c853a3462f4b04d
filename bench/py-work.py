#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""The two pure-Python workloads of bench/py-bench.sh.

    py-work.py calls N       recursive fib(N): calls, almost no allocation
    py-work.py allocs N      N lists of 64 small objects each, kept a while
    py-work.py ... --floor LIB   an empty C profile function first (LIB's
                             cg_floor_install): the floor of a per-call
                             shadow stack
"""
import ctypes
import sys


def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)


def allocs(n):
    keep = []
    for i in range(n):
        keep.append([(i, j, str(j)) for j in range(64)])
        if len(keep) > 256:
            keep.clear()
    return len(keep)


def main():
    what, n = sys.argv[1], int(sys.argv[2])
    if "--floor" in sys.argv:
        lib = ctypes.PyDLL(sys.argv[sys.argv.index("--floor") + 1])
        if lib.cg_floor_install() != 0:
            sys.exit("no PyEval_SetProfile in this process")
    print(fib(n) if what == "calls" else allocs(n))


main()

#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""jax_alloc.py: JAX arrays of known sizes on the first GPU, for scripts/gpu-check.sh.

Run with XLA_PYTHON_CLIENT_ALLOCATOR=platform (set here too when unset): XLA
then calls cuMemAlloc/cuMemFree for each buffer instead of preallocating 75%
of the GPU, so the probe sees each array, plus whatever buffers XLA makes for
itself. The arrays are copied from host numpy arrays (no kernel compiled),
kept alive together, checked and deleted.

The last line of stdout is
  CGCHECK array_bytes=N
Exit status: 0 done, 3 no GPU backend.
"""
import os
import sys

os.environ.setdefault("XLA_PYTHON_CLIENT_ALLOCATOR", "platform")
os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")

import jax  # noqa: E402
import numpy as np  # noqa: E402

MiB = 1 << 20


def main():
    try:
        gpus = jax.devices("gpu")
    except RuntimeError as e:
        print(f"jax_alloc: no GPU backend: {e}", file=sys.stderr)
        return 3
    if not gpus:
        print("jax_alloc: no GPU backend", file=sys.stderr)
        return 3
    dev = gpus[0]
    print(f"jax {jax.__version__} on {dev} ({getattr(dev, 'device_kind', '?')}); "
          f"XLA_PYTHON_CLIENT_ALLOCATOR={os.environ['XLA_PYTHON_CLIENT_ALLOCATOR']}")

    arrays = []
    for i, mib in enumerate((64, 256, 512)):
        host = np.full(mib * MiB // 4, float(i + 1), dtype=np.float32)
        a = jax.device_put(host, dev)
        a.block_until_ready()
        arrays.append(a)
        del host
    total = sum(a.nbytes for a in arrays)
    for i, a in enumerate(arrays):
        if float(a[-1]) != float(i + 1):
            print(f"jax_alloc: array {i} holds {float(a[-1])}", file=sys.stderr)
            return 1
    stats = None
    try:
        stats = dev.memory_stats()
    except Exception:  # not every allocator keeps statistics
        pass
    if stats:
        print(f"memory_stats: peak_bytes_in_use {stats.get('peak_bytes_in_use')}, "
              f"bytes_in_use {stats.get('bytes_in_use')}")
    print(f"arrays: 64 + 256 + 512 MiB = {total} bytes, alive together")
    for a in arrays:
        a.delete()
    arrays.clear()
    print(f"CGCHECK array_bytes={total}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""torch_alloc.py: PyTorch tensors of known sizes on cuda:0, for scripts/gpu-check.sh.

Allocates and frees a sequence of uint8 tensors (sizes in MiB, multiples of
2 MiB so the caching allocator rounds nothing), writes each, synchronizes,
frees everything and empties the cache. What the probe sees are the caching
allocator's cudaMalloc (or, with PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True,
cuMemCreate) calls, so the trace's cuda:0 peak should match
torch.cuda.max_memory_reserved().

The last line of stdout is
  CGCHECK max_memory_reserved=N max_memory_allocated=N tensor_peak_bytes=N
Exit status: 0 done, 3 no CUDA device.
"""
import os
import sys

import torch

MiB = 1 << 20


def main():
    if not torch.cuda.is_available():
        print("torch_alloc: torch.cuda.is_available() is False", file=sys.stderr)
        return 3
    dev = torch.device("cuda:0")
    print(f"torch {torch.__version__} (CUDA {torch.version.cuda}) on {torch.cuda.get_device_name(dev)}")
    print(f"PYTORCH_CUDA_ALLOC_CONF={os.environ.get('PYTORCH_CUDA_ALLOC_CONF', '')}")
    torch.cuda.reset_peak_memory_stats(dev)

    live = {}
    tensor_bytes = 0
    tensor_peak = 0

    def alloc(name, mib):
        nonlocal tensor_bytes, tensor_peak
        t = torch.empty(mib * MiB, dtype=torch.uint8, device=dev)
        t.fill_(len(live) + 1)
        live[name] = t
        tensor_bytes += t.numel()
        tensor_peak = max(tensor_peak, tensor_bytes)

    def free(name):
        nonlocal tensor_bytes
        tensor_bytes -= live.pop(name).numel()

    # A sequence with reuse: b's block is split for d, e needs a new segment.
    alloc("a", 64)
    alloc("b", 256)
    alloc("c", 512)
    free("b")
    alloc("d", 128)
    alloc("e", 1024)
    free("a")
    alloc("f", 96)
    torch.cuda.synchronize(dev)
    for name in list(live):
        free(name)
    torch.cuda.synchronize(dev)
    torch.cuda.empty_cache()
    torch.cuda.synchronize(dev)

    reserved = torch.cuda.max_memory_reserved(dev)
    allocated = torch.cuda.max_memory_allocated(dev)
    print(f"max_memory_reserved {reserved} ({reserved / MiB:.1f} MiB), "
          f"max_memory_allocated {allocated} ({allocated / MiB:.1f} MiB), "
          f"tensors' own peak {tensor_peak} ({tensor_peak / MiB:.1f} MiB); "
          f"reserved now {torch.cuda.memory_reserved(dev)}")
    print(f"CGCHECK max_memory_reserved={reserved} max_memory_allocated={allocated} "
          f"tensor_peak_bytes={tensor_peak}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

# SPDX-License-Identifier: MIT
"""torch.distributed.init_process_group tells the trace the process's rank.

The wrapper's sitecustomize (cgprobe/_site) installs this once
torch.distributed is imported, and only where the probe is loaded: right
after init_process_group returns, cgprobe.process_rank records
torch.distributed.get_rank() and get_world_size() (docs/jobs.md), so that
a rank known only then (torch.multiprocessing.spawn, a rank passed to
init_process_group) is in the trace without the script importing cgprobe.
"""

import functools
import sys

import cgprobe


def install(dist):
    """Wraps dist.init_process_group (and distributed_c10d's, the same function), once."""
    init = getattr(dist, "init_process_group", None)
    if init is None or getattr(init, "_cgprobe", False):
        return

    @functools.wraps(init)
    def init_process_group(*args, **kwargs):
        r = init(*args, **kwargs)
        _tell(dist)
        return r

    init_process_group._cgprobe = True
    dist.init_process_group = init_process_group
    c10d = sys.modules.get("torch.distributed.distributed_c10d")
    if c10d is not None and getattr(c10d, "init_process_group", None) is init:
        c10d.init_process_group = init_process_group


def _tell(dist):
    try:
        cgprobe.process_rank(dist.get_rank(), dist.get_world_size())
    except Exception as e:  # the program's process group is up whatever happens here
        print("cgprobe: the process group's rank not recorded: %s: %s" % (type(e).__name__, e),
              file=sys.stderr)

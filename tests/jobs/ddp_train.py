# SPDX-License-Identifier: MIT
"""A two-rank DistributedDataParallel run on CPU (gloo) whose ranks hold
different amounts: rank r keeps (r + 1) * 8 MiB for the whole run, so a
reader can tell the ranks apart by their peaks.

    python3 ddp_train.py env      # one rank, as torchrun starts it (RANK, WORLD_SIZE,
                                  # MASTER_ADDR, MASTER_PORT in the environment)
    python3 ddp_train.py spawn PORT [EXTRA_MIB]
                                  # both ranks by torch.multiprocessing.spawn; rank 1
                                  # holds EXTRA_MIB more (the line marked EXTRA), a
                                  # second run for cgtrace diff and check to tell apart
"""
import os
import sys

import torch
import torch.distributed as dist
import torch.nn as nn

MiB = 1 << 20


def run(rank, world, init, extra_mib=0):
    dist.init_process_group("gloo", init_method=init, rank=rank, world_size=world)
    torch.manual_seed(rank)
    model = nn.parallel.DistributedDataParallel(nn.Linear(256, 256))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    hold = torch.ones((rank + 1) * 8 * MiB // 4)  # float32: (rank + 1) * 8 MiB
    extra = torch.ones(extra_mib * MiB // 4) if rank == 1 and extra_mib else None  # EXTRA
    for _ in range(5):
        loss = model(torch.randn(64, 256)).sum()
        opt.zero_grad()
        loss.backward()
        opt.step()
    dist.barrier()
    held = hold.numel() + (extra.numel() if extra is not None else 0)
    print("rank %d of %d: held %d MiB" % (rank, world, held * 4 // MiB))
    dist.destroy_process_group()


def main():
    if sys.argv[1] == "env":
        init = "tcp://%s:%s" % (os.environ["MASTER_ADDR"], os.environ["MASTER_PORT"])
        run(int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"]), init)
    else:
        import torch.multiprocessing as mp
        extra = int(sys.argv[3]) if len(sys.argv) > 3 else 0
        mp.spawn(run, args=(2, "tcp://127.0.0.1:%s" % sys.argv[2], extra), nprocs=2)


if __name__ == "__main__":
    main()

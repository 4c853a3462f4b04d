# SPDX-License-Identifier: MIT
"""A two-rank DistributedDataParallel run on CPU (gloo) whose ranks hold
different amounts: rank r keeps (r + 1) * 8 MiB for the whole run, so a
reader can tell the ranks apart by their peaks.

    python3 ddp_train.py env      # one rank, as torchrun starts it (RANK, WORLD_SIZE,
                                  # MASTER_ADDR, MASTER_PORT in the environment)
    python3 ddp_train.py spawn PORT   # both ranks by torch.multiprocessing.spawn
"""
import os
import sys

import torch
import torch.distributed as dist
import torch.nn as nn

MiB = 1 << 20


def run(rank, world, init):
    dist.init_process_group("gloo", init_method=init, rank=rank, world_size=world)
    torch.manual_seed(rank)
    model = nn.parallel.DistributedDataParallel(nn.Linear(256, 256))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    hold = torch.ones((rank + 1) * 8 * MiB // 4)  # float32: (rank + 1) * 8 MiB
    for _ in range(5):
        loss = model(torch.randn(64, 256)).sum()
        opt.zero_grad()
        loss.backward()
        opt.step()
    dist.barrier()
    print("rank %d of %d: held %d MiB" % (rank, world, hold.numel() * 4 // MiB))
    dist.destroy_process_group()


def main():
    if sys.argv[1] == "env":
        init = "tcp://%s:%s" % (os.environ["MASTER_ADDR"], os.environ["MASTER_PORT"])
        run(int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"]), init)
    else:
        import torch.multiprocessing as mp
        mp.spawn(run, args=(2, "tcp://127.0.0.1:%s" % sys.argv[2]), nprocs=2)


if __name__ == "__main__":
    main()

#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""A small CPU training run as our users write them: a Python Dataset, a
DataLoader with worker processes, an MLP, Adam, a few hundred steps. The
stacks benchmark (bench/torch-bench.sh) records it under cgprobe and under
heaptrack; the steps go through cgprobe's NVTX-free path (plain Python).

    torch-train.py [--steps N] [--workers W] [--batch B]
"""
import argparse

import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset


class Points(Dataset):
    """Noisy points of a few classes, made item by item as a real dataset's
    __getitem__ would: each item allocates its own tensors."""

    def __init__(self, n, dim, classes, seed=0):
        g = torch.Generator().manual_seed(seed)
        self.centres = torch.randn(classes, dim, generator=g) * 3
        self.labels = torch.randint(0, classes, (n,), generator=g)
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        y = self.labels[i]
        x = self.centres[y] + torch.randn(self.centres.shape[1])
        return x, y


def model(dim, classes):
    return nn.Sequential(
        nn.Linear(dim, 256), nn.ReLU(),
        nn.Linear(256, 256), nn.ReLU(),
        nn.Linear(256, classes),
    )


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--batch", type=int, default=64)
    a = ap.parse_args()
    torch.manual_seed(0)
    dim, classes = 64, 10
    data = Points(a.steps * a.batch, dim, classes)
    loader = DataLoader(data, batch_size=a.batch, shuffle=True, num_workers=a.workers)
    net = model(dim, classes)
    opt = torch.optim.Adam(net.parameters(), lr=1e-3)
    loss_fn = nn.CrossEntropyLoss()
    steps = 0
    for x, y in loader:
        opt.zero_grad()
        loss = loss_fn(net(x), y)
        loss.backward()
        opt.step()
        steps += 1
        if steps % 100 == 0:
            print(f"step {steps} loss {loss.item():.3f}", flush=True)
        if steps >= a.steps:
            break
    print(f"done: {steps} steps")


if __name__ == "__main__":
    main()

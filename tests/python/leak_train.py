# SPDX-License-Identifier: MIT
"""A PyTorch training loop with known memory behaviour, for cgtrace steps.

    leak_train.py leak|none UPDATES SCRATCH_UPDATE [LEAK_KIB]

leak: a debug list keeps one LEAK_KIB (default 512) KiB tensor per update
(the line marked LEAK below), which Python frees only at exit. SCRATCH_UPDATE (0: none):
that update makes a 64 MiB scratch buffer, freed before it ends (the
run's peak). cgprobe.torch.watch marks forward, backward, optimizer and
the updates.
"""
import sys

import torch

import cgprobe.torch

mode, updates, scratch_at = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
leak_floats = (int(sys.argv[4]) if len(sys.argv) > 4 else 512) * 256
torch.manual_seed(0)
torch.set_num_threads(1)
model = torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.ReLU(), torch.nn.Linear(512, 10))
opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
cgprobe.torch.watch(model, opt)
x = torch.randn(64, 256)
y = torch.randint(0, 10, (64,))
debug = []
for update in range(1, updates + 1):
    out = model(x)
    loss = torch.nn.functional.cross_entropy(out, y)
    opt.zero_grad(set_to_none=True)
    loss.backward()
    if update == scratch_at:
        scratch = torch.ones(16 * 1024 * 1024)  # 64 MiB, this update only
        del scratch
    opt.step()
    if mode == "leak":
        debug.append(torch.zeros(leak_floats))  # LEAK: LEAK_KIB kept every update
print("done", updates, "updates", len(debug), "kept")

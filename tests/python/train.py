# A small training loop for the cgprobe tests: a 2-layer MLP, Adam (optimizer
# state), a few updates. With CGPROBE_TEST_WATCH=1 it calls
# cgprobe.torch.watch itself; otherwise it knows nothing of cgprobe (the
# --python-steps test runs it unedited).
import os
import sys

import torch

torch.manual_seed(0)
torch.set_num_threads(1)
model = torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.ReLU(), torch.nn.Linear(512, 16))
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
if os.environ.get("CGPROBE_TEST_FAKE_CUDA") == "1":
    # A CPU-only torch standing in for CUDA: the caching allocator's figures
    # the watch's device checkpoints report (reserved 3 MiB, allocated 2 MiB).
    torch.cuda.is_available = torch.cuda.is_initialized = lambda: True
    torch.cuda.device_count = lambda: 1
    torch.cuda.memory_reserved = lambda i=None: 3 << 20
    torch.cuda.memory_allocated = lambda i=None: 2 << 20
    torch.cuda.mem_get_info = lambda i=None: (60 << 30, 80 << 30)
if os.environ.get("CGPROBE_TEST_WATCH") == "1":
    import cgprobe.torch
    cgprobe.torch.watch(model, opt)
if os.environ.get("CGPROBE_TEST_RAISE") == "1":
    # One forward fails inside the model (torch < 2.1 then skips forward
    # hooks), as one that runs out of memory and is retried would.
    def fail_once(module, inputs):
        handle.remove()
        raise MemoryError("test: a forward that fails")

    handle = model.register_forward_pre_hook(fail_once)
    try:
        model(torch.randn(2, 256))
    except MemoryError:
        pass
x = torch.randn(256, 256)
y = torch.randint(0, 16, (256,))
for i in range(int(sys.argv[1]) if len(sys.argv) > 1 else 3):
    opt.zero_grad()
    loss = torch.nn.functional.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
with torch.no_grad():
    model.eval()
    model(x[:8])
print("train.py: loss %.4f" % loss.item())

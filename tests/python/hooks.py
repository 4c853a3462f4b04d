# watch() details on small modules: watching twice, an LR scheduler made
# after watch() (torch 1.13 schedulers wrap optimizer.step again), remove(),
# torch.save of a watched model,
# and an optimizer with torch 2's step hooks (faked on torch 1.13) marked
# through them. Prints one "name value" line per fact.
import collections
import io
import warnings

import torch
import torch.utils.hooks

import cgprobe.torch

m = torch.nn.Linear(64, 64)
opt = torch.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)
w = cgprobe.torch.watch(m, opt)
print("same", cgprobe.torch.watch(m, opt) is w)
sched = torch.optim.lr_scheduler.StepLR(opt, 1)
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    m(torch.ones(8, 64)).sum().backward()
    opt.step()
    sched.step()
print("warnings", len(caught), "count", opt._step_count)
w.remove()
print("removed", "step" not in opt.__dict__)

# A watched model saved whole and loaded again: its hooks come back as no-ops.
m3 = torch.nn.Linear(4, 4)
w3 = cgprobe.torch.watch(m3, torch.optim.SGD(m3.parameters(), lr=0.1))
buf = io.BytesIO()
torch.save(m3, buf)
buf.seek(0)
m4 = torch.load(buf)
print("reloaded", tuple(m4(torch.ones(1, 4)).shape))
w3.remove()


class HookedSGD(torch.optim.SGD):
    """torch 2's Optimizer.register_step_pre_hook / register_step_post_hook."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.pre, self.post = collections.OrderedDict(), collections.OrderedDict()

    def register_step_pre_hook(self, hook):
        h = torch.utils.hooks.RemovableHandle(self.pre)
        self.pre[h.id] = hook
        return h

    def register_step_post_hook(self, hook):
        h = torch.utils.hooks.RemovableHandle(self.post)
        self.post[h.id] = hook
        return h

    def step(self, *args, **kwargs):
        for hook in list(self.pre.values()):
            hook(self, args, kwargs)
        out = super().step(*args, **kwargs)
        for hook in list(self.post.values()):
            hook(self, args, kwargs)
        return out


m2 = torch.nn.Linear(64, 64)
opt2 = HookedSGD(m2.parameters(), lr=0.1, momentum=0.9)
w2 = cgprobe.torch.watch(m2, opt2)
print("hooked", len(opt2.pre), len(opt2.post), "step" in opt2.__dict__)
for _ in range(2):
    m2(torch.ones(8, 64)).sum().backward()
    opt2.step()
print("update", cgprobe.update_number())
w2.remove()
print("unhooked", len(opt2.pre), len(opt2.post))

#!/usr/bin/env python3
# Writes tests/golden/traces/steps.jsonl (python3 gen-steps-trace.py > traces/steps.jsonl): 5 marked updates on cpu and cuda:0,
# with a data phase, a parameter mark, a per-update leak and a one-off buffer.
import json, sys
out = []
def rec(**k): out.append(json.dumps(k, separators=(',', ':')))
rec(kind='meta', schema='candle-graph/trace/6', run_id='run-77-1', correlation_id='train/update-1',
    entrypoint='train', phase='train', timestamp='2026-12-01T10:00:00.000Z', capture_step=1,
    warmup_steps=0, device='cuda:0', timing_mode='host', tags={'cgprobe_capture': 'all', 'pid': '77'})
rec(kind='span_start', id='s1', name='train', start_ns=0, span_kind='function', measured=False)
n = [1]
def sid():
    n[0] += 1
    return 's%d' % n[0]
def span(name, t0, t1, **extra):
    i = sid()
    rec(kind='span_start', id=i, parent_id='s1', name=name, start_ns=t0, span_kind='function',
        measured=False, **extra)
    return i, t0
def end(sp, t1):
    rec(kind='span_end', id=sp[0], duration_ns=t1 - sp[1])
stack_defined = set()
def mem(t, addr, b, action, cat, dev='cpu', stack=None):
    r = dict(kind='memory', timestamp_ns=t, tensor_id='0x%x' % addr, span_id='s1', device=dev,
             bytes=b, action=action, dtype='u8', category=cat)
    if stack and action == 'alloc':
        r['cgprobe_stack'] = stack
        if stack not in stack_defined:
            r['cgprobe_stack_frames'] = ['0x%x' % (0x401000 + stack * 0x40)]
            stack_defined.add(stack)
    rec(**r)
# Model parameters, allocated before they are marked.
mem(100, 0x10000, 4 << 20, 'alloc', 'other', stack=1)
mem(110, 0x7f0000000000, 8 << 20, 'alloc', 'other', dev='cuda:0', stack=2)
p = span('parameters', 150, 150, cgprobe_parameters=['0x10000', '0x400000', '0x7f0000000000', '0x800000'])
end(p, 150)
for u in range(1, 6):
    t0 = u * 100000
    up = span('update', t0, 0, cgprobe_update=u)
    d = span('next_batch', t0 + 100, 0, cgprobe_phase='data')
    mem(t0 + 200, 0x2000000, 256 << 10, 'alloc', 'other', stack=3)
    end(d, t0 + 1000)
    f = span('forward', t0 + 1100, 0, step='forward')
    mem(t0 + 2000, 0x7f0010000000, 16 << 20, 'alloc', 'activation', dev='cuda:0', stack=4)
    mem(t0 + 2500, 0x500000 + u * 0x10000, 64 << 10, 'alloc', 'activation', stack=5)  # the leak
    if u == 3:
        mem(t0 + 2600, 0x7f0020000000, 32 << 20, 'alloc', 'activation', dev='cuda:0', stack=6)
    end(f, t0 + 30000)
    b = span('backward', t0 + 31000, 0, step='backward')
    mem(t0 + 32000, 0x7f0030000000, 8 << 20, 'alloc', 'gradient', dev='cuda:0', stack=7)
    mem(t0 + 40000, 0x7f0010000000, 16 << 20, 'free', 'activation', dev='cuda:0')
    if u == 3:
        mem(t0 + 41000, 0x7f0020000000, 32 << 20, 'free', 'activation', dev='cuda:0')
    mem(t0 + 42000, 0x2000000, 256 << 10, 'free', 'other')
    end(b, t0 + 60000)
    o = span('optimizer', t0 + 61000, 0, step='optimizer')
    mem(t0 + 62000, 0x7f0030000000, 8 << 20, 'free', 'gradient', dev='cuda:0')
    end(o, t0 + 70000)
    end(up, t0 + 71000)
# Teardown: the leak goes at exit.
for u in range(1, 6):
    mem(900000 + u, 0x500000 + u * 0x10000, 64 << 10, 'free', 'activation')
end(('s1', 0), 1000000)
sys.stdout.write('\n'.join(out) + '\n')

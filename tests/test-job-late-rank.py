# SPDX-License-Identifier: MIT
"""A rank known only once the process runs: the span process_group (docs/jobs.md, "Ranks").

  test-job-late-rank.py CGTRACE WRAPPER BUILD_PYTHON

With Debian's /usr/bin/python3 under the wrapper, -o DIR/:
- a script calling cgprobe.process_rank(2, 4), and process_rank(5) and
  process_rank(-1, 4): its trace has a span process_group with
  cgprobe_rank 2 and cgprobe_world_size 4, one with cgprobe_rank 5 alone,
  and -EINVAL for the negative rank, nothing recorded; in a compact trace
  and a JSONL one;
- torch.multiprocessing.spawn of 2 workers that call
  torch.distributed.init_process_group("gloo", rank=..., world_size=2)
  and never import cgprobe: each worker's trace (found by the pid it
  wrote) has one span process_group with its rank and world size 2, the
  parent's none;
- without the probe, with the wrapper's PYTHONPATH: importing
  torch.distributed leaves init_process_group as it is and imports no
  cgprobe.
77 without /usr/bin/python3; 77 after the first part without torch.
"""
import errno
import os
import shutil
import socket
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
from checks import check, failures, verdict  # noqa: E402
from probe_job import clean_env, records, run, span_starts, tags, traces_in  # noqa: E402

cgtrace, wrapper, build_python = (os.path.abspath(a) for a in sys.argv[1:4])
PY = "/usr/bin/python3"
if not os.access(PY, os.X_OK):
    print("SKIP: no %s" % PY)
    sys.exit(77)
tmp = tempfile.mkdtemp(prefix="cgprobe-job-rank-")


def ranks(recs):
    return [(s.get("cgprobe_rank"), s.get("cgprobe_world_size"))
            for s in span_starts(recs, "process_group")]


# cgprobe.process_rank from a script.
script = os.path.join(tmp, "told.py")
with open(script, "w") as f:
    f.write("import cgprobe\n"
            "print(cgprobe.process_rank(2, 4), cgprobe.process_rank(5),"
            " cgprobe.process_rank(-1, 4))\n")
for fmt in ("compact", "jsonl"):
    folder = os.path.join(tmp, "told-" + fmt)
    r = run([wrapper, "-q", "-o", folder + "/", PY, script], clean_env(CGPROBE_FORMAT=fmt))
    check(r.returncode == 0 and r.stdout.split() == ["0", "0", str(-errno.EINVAL)],
          "%s: told.py: status %d, stdout %r, stderr %r" % (fmt, r.returncode, r.stdout, r.stderr))
    files = traces_in(folder) if os.path.isdir(folder) else []
    check(len(files) == 1, "%s: traces %s" % (fmt, files))
    if files:
        got = ranks(records(cgtrace, os.path.join(folder, files[0])))
        check(got == [(2, 4), (5, None)], "%s: process_group spans %s" % (fmt, got))

try:
    has_torch = run([PY, "-c", "import torch.distributed as d; assert d.is_available()"],
                    clean_env(), timeout=120).returncode == 0
except Exception:
    has_torch = False
if not has_torch:
    print("SKIP: no torch.distributed in %s" % PY)
    shutil.rmtree(tmp, ignore_errors=True)
    sys.exit(verdict() if failures else 77)

# torch.multiprocessing.spawn: the workers' ranks, told by init_process_group alone.
spawn = os.path.join(tmp, "spawn.py")
with open(spawn, "w") as f:
    f.write('''import os
import sys

import torch
import torch.distributed as dist
import torch.multiprocessing as mp


def work(rank, port, out):
    dist.init_process_group("gloo", rank=rank, world_size=2,
                            init_method="tcp://127.0.0.1:%d" % port)
    t = torch.ones(4)
    dist.all_reduce(t)
    assert t[0].item() == 2
    assert "cgprobe" not in sys.argv
    with open(os.path.join(out, "rank-%d.pid" % rank), "w") as f:
        f.write(str(os.getpid()))
    dist.destroy_process_group()


if __name__ == "__main__":
    mp.spawn(work, args=(int(sys.argv[1]), sys.argv[2]), nprocs=2)
''')
with socket.socket() as s:
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
folder = os.path.join(tmp, "spawn")
# Large blocks only: the spans are what counts here, and torch makes millions of small ones.
r = run([wrapper, "-q", "--min-bytes", "65536", "-o", folder + "/", PY, spawn, str(port), tmp],
        clean_env(), timeout=240)
check(r.returncode == 0, "spawn: status %d: %s" % (r.returncode, r.stderr[-2000:]))
by_pid = {}
for name in traces_in(folder) if os.path.isdir(folder) else []:
    recs = records(cgtrace, os.path.join(folder, name), only='"process_group"')
    by_pid.setdefault(tags(recs).get("pid"), []).append(recs)
workers = set()
for rank in (0, 1):
    try:
        with open(os.path.join(tmp, "rank-%d.pid" % rank)) as f:
            pid = f.read().strip()
    except OSError:
        check(False, "spawn: rank %d wrote no pid" % rank)
        continue
    workers.add(pid)
    got = [ranks(recs) for recs in by_pid.get(pid, [])]
    check(got == [[(rank, 2)]], "spawn: rank %d (pid %s): process_group spans %s"
          % (rank, pid, got))
others = [ranks(recs) for pid, all_recs in by_pid.items() if pid not in workers
          for recs in all_recs]
check(others and all(g == [] for g in others), "spawn: the other traces' spans %s" % others)

# No probe: the wrapper's sitecustomize leaves torch.distributed alone.
r = run([PY, "-c", "import sys, torch.distributed as d; "
         "print('cgprobe' in sys.modules, hasattr(d.init_process_group, '_cgprobe'))"],
        clean_env(PYTHONPATH="%s/cgprobe/_site:%s" % (build_python, build_python)), timeout=120)
check(r.returncode == 0 and r.stdout.split() == ["False", "False"],
      "no probe: cgprobe imported, init_process_group wrapped: %r %r" % (r.stdout, r.stderr))

shutil.rmtree(tmp, ignore_errors=True)
sys.exit(verdict())

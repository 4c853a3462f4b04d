# SPDX-License-Identifier: MIT
"""A launcher's variables in the meta tags (docs/jobs.md, "Ranks").

  test-job-env.py CGTRACE LIBCGPROBE HELLO

- Every variable of torchrun, Open MPI, PMI, PMIx and Slurm that the probe
  knows, set to a value of its own (one with a quote, a backslash and a
  space), is a tag under its own name with that value, in a compact trace
  and a JSONL one.
- None set: no such tag; one set alone: that tag alone.
- The variables the probe does not know (MASTER_ADDR) are no tags.
"""
import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
from checks import check, verdict  # noqa: E402
from probe_job import LAUNCHER_VARS, clean_env, records, run, tags  # noqa: E402

cgtrace, probe, hello = (os.path.abspath(a) for a in sys.argv[1:4])
tmp = tempfile.mkdtemp(prefix="cgprobe-job-env-")


def trace_tags(name, ext, env):
    out = os.path.join(tmp, name + ext)
    r = run([hello], clean_env(LD_PRELOAD=probe, CGPROBE_OUTPUT=out, **env))
    check(r.returncode == 0, "%s: hello exited %d: %s" % (name, r.returncode, r.stderr))
    check(r.stderr == "", "%s: stderr %r" % (name, r.stderr))
    return tags(records(cgtrace, out))


values = {v: "%s-%d" % (v.lower(), i) for i, v in enumerate(LAUNCHER_VARS)}
values["TORCHELASTIC_RUN_ID"] = 'run "7" \\ a b'
values["MASTER_ADDR"] = "127.0.0.1"
for ext in (".cgt", ".jsonl"):
    t = trace_tags("all", ext, values)
    for v in LAUNCHER_VARS:
        check(t.get(v) == values[v], "%s: tag %s is %r, not %r" % (ext, v, t.get(v), values[v]))
    check("MASTER_ADDR" not in t, "%s: MASTER_ADDR is a tag" % ext)

t = trace_tags("none", ".cgt", {})
check(not [v for v in LAUNCHER_VARS if v in t],
      "no variable set, yet tags %s" % [v for v in LAUNCHER_VARS if v in t])
t = trace_tags("one", ".cgt", {"SLURM_JOB_ID": "4242"})
check([v for v in LAUNCHER_VARS if v in t] == ["SLURM_JOB_ID"] and t["SLURM_JOB_ID"] == "4242",
      "SLURM_JOB_ID alone: tags %s" % {v: t[v] for v in LAUNCHER_VARS if v in t})

shutil.rmtree(tmp, ignore_errors=True)
sys.exit(verdict())

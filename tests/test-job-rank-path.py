# SPDX-License-Identifier: MIT
"""%r in CGPROBE_OUTPUT: the rank the environment gives (docs/jobs.md).

  test-job-rank-path.py CGTRACE LIBCGPROBE HELLO

- RANK=3 names the trace t.3.PID, no rank variable t.none.PID;
- the first of RANK, PMI_RANK, OMPI_COMM_WORLD_RANK, PMIX_RANK,
  SLURM_PROCID set to digits gives it (one set to anything else is
  passed over), leading zeros dropped;
- %r in the folder of CGPROBE_OUTPUT=DIR/: each rank its folder, with
  its manifest, whose line says the rank; none without one.
"""
import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
from checks import check, verdict  # noqa: E402
from probe_job import clean_env, manifest, records, run, tags, traces_in  # noqa: E402

cgtrace, probe, hello = (os.path.abspath(a) for a in sys.argv[1:4])
tmp = tempfile.mkdtemp(prefix="cgprobe-job-rank-")


def run_hello(output, env):
    r = run([hello], clean_env(LD_PRELOAD=probe, CGPROBE_OUTPUT=output, **env))
    check(r.returncode == 0 and r.stderr == "",
          "%s: hello exited %d: %s" % (env, r.returncode, r.stderr))
    return r


cases = [
    ({"RANK": "3"}, "3"),
    ({}, "none"),
    ({"PMI_RANK": "5"}, "5"),
    ({"RANK": "abc", "PMI_RANK": "2"}, "2"),
    ({"RANK": "", "OMPI_COMM_WORLD_RANK": "007"}, "7"),
    ({"SLURM_PROCID": "4", "PMIX_RANK": "6"}, "6"),
    ({"SLURM_PROCID": "4", "OMPI_COMM_WORLD_RANK": "1", "RANK": "9"}, "9"),
    ({"SLURM_PROCID": "12345678901"}, "none"),
    ({"LOCAL_RANK": "1", "WORLD_SIZE": "2"}, "none"),
]
for i, (env, want) in enumerate(cases):
    folder = os.path.join(tmp, "case%d" % i)
    os.mkdir(folder)
    r = run_hello(os.path.join(folder, "t.%r.%p.cgt"), env)
    got = os.listdir(folder)
    pid = r.stdout.split()[0] if r.stdout else "?"
    check(got == ["t.%s.%s.cgt" % (want, pid)], "%s: traces %s, not t.%s.%s.cgt"
          % (env, got, want, pid))
    if got:
        check(tags(records(cgtrace, os.path.join(folder, got[0]))).get("pid") == pid,
              "%s: the trace is not hello's" % env)

# A folder per rank.
for env, want in (({"RANK": "1"}, "1"), ({}, "none")):
    run_hello(os.path.join(tmp, "rank-%r/"), env)
    folder = os.path.join(tmp, "rank-" + want)
    check(os.path.isdir(folder), "%s: no folder rank-%s: %s" % (env, want, os.listdir(tmp)))
    if os.path.isdir(folder):
        lines = manifest(folder)
        check(len(traces_in(folder)) == 1 and len(lines) == 1,
              "rank-%s: traces %s, manifest %s" % (want, traces_in(folder), lines))
        if lines:
            check(lines[0].get("rank") == (int(want) if want != "none" else None),
                  "rank-%s: manifest line %s" % (want, lines[0]))

shutil.rmtree(tmp, ignore_errors=True)
sys.exit(verdict())

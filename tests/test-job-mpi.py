# SPDX-License-Identifier: MIT
"""A job that mpirun launches, recorded in a folder (docs/jobs.md, "Recording a job").

  test-job-mpi.py CGTRACE WRAPPER MPI_RANKS

cgprobe -o DIR/ mpirun -np 2 MPI_RANKS (Debian's Open MPI; as root with
--allow-run-as-root and its two variables): each rank's trace (found by
the pid it printed) carries OMPI_COMM_WORLD_RANK, its rank, and
OMPI_COMM_WORLD_SIZE 2, and its manifest line the rank; mpirun's own
traces carry none. 77 without mpirun or where MPI_RANKS is not built.
"""
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
from checks import check, verdict  # noqa: E402
from probe_job import clean_env, manifest, records, run, tags, traces_in  # noqa: E402

cgtrace, wrapper, prog = (os.path.abspath(a) for a in sys.argv[1:4])
mpirun = shutil.which("mpirun")
if not mpirun or not os.access(prog, os.X_OK):
    print("SKIP: %s" % ("no mpirun" if not mpirun else prog + " is not built"))
    sys.exit(77)
tmp = tempfile.mkdtemp(prefix="cgprobe-job-mpi-")
folder = os.path.join(tmp, "job")

env = clean_env()
argv = [wrapper, "-q", "-o", folder + "/", mpirun, "-np", "2", "--oversubscribe"]
if os.geteuid() == 0:
    argv.append("--allow-run-as-root")
    env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
try:
    r = run(argv + [prog], env, timeout=90)
except subprocess.TimeoutExpired:
    check(False, "mpirun did not end in 90 s")
    sys.exit(verdict())
check(r.returncode == 0, "mpirun: status %d: %s" % (r.returncode, r.stderr[-2000:]))
# mpirun's fork children close the trace's descriptor before exec: the probe carries on.
check("recording stopped" not in r.stderr, "mpirun: a trace stopped: %s" % r.stderr[-2000:])
said = {}
for line in r.stdout.splitlines():
    f = line.split()
    if len(f) == 7 and f[1] == "rank":
        said[f[0]] = (f[2], f[4], f[6])
check(sorted(v[0] for v in said.values()) == ["0", "1"] and
      all(v[1:] == ("2", "2") for v in said.values()), "mpirun: the ranks said %r" % r.stdout)

lines = {x["trace"]: x for x in manifest(folder) if "trace" in x} if os.path.isdir(folder) else {}
seen = set()
for name in traces_in(folder) if os.path.isdir(folder) else []:
    t = tags(records(cgtrace, os.path.join(folder, name), only="\x00"))
    pid = t.get("pid")
    if pid in said and os.path.basename(t.get("executable", "")) == os.path.basename(prog):
        rank = said[pid][0]
        seen.add(rank)
        check(t.get("OMPI_COMM_WORLD_RANK") == rank and t.get("OMPI_COMM_WORLD_SIZE") == "2",
              "rank %s (%s): tags %s" % (rank, name, {k: v for k, v in t.items()
                                                      if k.startswith("OMPI")}))
        check(lines.get(name, {}).get("rank") == int(rank),
              "rank %s (%s): manifest line %s" % (rank, name, lines.get(name)))
    elif os.path.basename(t.get("executable", "")) == os.path.basename(prog):
        check(False, "%s: a trace of %s by pid %s, which said no rank" % (name, prog, pid))
    else:
        check("OMPI_COMM_WORLD_RANK" not in t, "%s (%s): OMPI_COMM_WORLD_RANK %s"
              % (name, t.get("executable"), t.get("OMPI_COMM_WORLD_RANK")))
check(seen == {"0", "1"}, "the ranks' traces: %s" % sorted(seen))

shutil.rmtree(tmp, ignore_errors=True)
sys.exit(verdict())

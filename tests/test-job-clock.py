# SPDX-License-Identifier: MIT
"""A job's one time axis (docs/jobs.md, "One time axis").

  test-job-clock.py CGTRACE LIBCGPROBE CLOCK_MARKS

tests/jobs/clock-marks.c allocates blocks of sizes no other block has and
opens spans of names of their own, each bracketed by CLOCK_MONOTONIC
reads, in the process and in a fork child. In a compact trace and a JSONL
one, and in a capture window's:
- each trace has cgprobe_clock_realtime_ns within a second of `date
  +%s%N` at the start, cgprobe_clock_monotonic_ns at or before the
  process's first read, cgprobe_clock_error_ns from 1 to 1 ms, and
  cgprobe_boot_id this boot's;
- each marked block's record and span's start, its timestamp_ns or
  start_ns plus the trace's cgprobe_clock_monotonic_ns, falls between its
  two reads: a record's time is nanoseconds since that origin, in the
  fork child's trace too;
- realtime minus monotonic is the same in every trace, within the errors
  (and what NTP may slew meanwhile);
- two processes run one after the other order by their monotonic origin
  (and by their realtime one);
- of 20 000 more blocks, each between its two reads, at most a quarter
  fall outside them: a tick's conversion to ns is unbiased (an anchor
  paired the ticks with a clock read made after them once, and 97% of
  records fell after their second read, by up to 1.2 us).
The brackets measured are printed.
"""
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
from checks import check, verdict  # noqa: E402
from probe_job import clean_env, records, run, tags  # noqa: E402

cgtrace, probe, marks = (os.path.abspath(a) for a in sys.argv[1:4])
tmp = tempfile.mkdtemp(prefix="cgprobe-job-clock-")
# A tick converted to ns (the TSC where the kernel uses it) may be off by this much.
SLACK_NS = 200000
with open("/proc/sys/kernel/random/boot_id") as f:
    boot_id = f.read().strip()
errors = []


def date_ns():
    return int(subprocess.run(["date", "+%s%N"], capture_output=True, text=True,
                              check=True).stdout)


def run_marks(name, ext, args=(), **env):
    """The traces of one run by pid, and the marks each process said it made."""
    folder = os.path.join(tmp, name)
    os.mkdir(folder)
    start = date_ns()
    r = run([marks] + list(args), clean_env(LD_PRELOAD=probe,
                                            CGPROBE_OUTPUT=os.path.join(folder, "t.%p" + ext),
                                            **env))
    check(r.returncode == 0, "%s: clock-marks exited %d: %s" % (name, r.returncode, r.stderr))
    said = {}
    for line in r.stdout.splitlines():
        pid, _, kind, what, before, after = line.split()
        if kind in ("M", "S"):
            said.setdefault(int(pid), []).append(
                (int(what) if kind == "M" else what, int(before), int(after)))
    traces = {}
    for f in sorted(os.listdir(folder)):
        recs = records(cgtrace, os.path.join(folder, f))
        traces[int(tags(recs).get("pid", "0"))] = recs
    check(sorted(traces) == sorted(said),
          "%s: traces of pids %s, marks from %s" % (name, sorted(traces), sorted(said)))
    return start, traces, said


def check_clock(name, start, recs, said):
    t = tags(recs)
    try:
        real = int(t["cgprobe_clock_realtime_ns"])
        mono = int(t["cgprobe_clock_monotonic_ns"])
        err = int(t["cgprobe_clock_error_ns"])
    except (KeyError, ValueError):
        check(False, "%s: clock tags %s" % (name, {k: v for k, v in t.items() if "clock" in k}))
        return None
    errors.append(err)
    check(abs(real - start) < 10**9, "%s: realtime %d is %.3f s from date's %d"
          % (name, real, (real - start) / 1e9, start))
    check(1 <= err < 10**6, "%s: cgprobe_clock_error_ns %d" % (name, err))
    check(t.get("cgprobe_boot_id") == boot_id, "%s: boot id %r, not %r"
          % (name, t.get("cgprobe_boot_id"), boot_id))
    first = min(before for _, before, _ in said)
    check(mono <= first, "%s: monotonic origin %d after the first read %d" % (name, mono, first))
    # A block by its size (timestamp_ns), a span by its name (start_ns).
    times = {m["bytes"]: m["timestamp_ns"] for m in recs
             if m.get("kind") == "memory" and m.get("action") == "alloc"
             and not m.get("cgprobe_preexisting")}
    times.update({s["name"]: s["start_ns"] for s in recs if s.get("kind") == "span_start"})
    for what, before, after in said:
        ts = times.get(what)
        check(ts is not None, "%s: no record of %r" % (name, what))
        if ts is None:
            continue
        check(before - SLACK_NS <= mono + ts <= after + SLACK_NS,
              "%s: %r at %d + %d = %d, read between %d and %d"
              % (name, what, mono, ts, mono + ts, before, after))
    outside = sum(1 for what, before, after in said
                  if what in times and not before <= mono + times[what] <= after)
    return real, mono, err, outside


for label, ext, args, env in (("compact", ".cgt", (), {}),
                              ("jsonl", ".jsonl", (), {}),
                              ("window", ".cgt", ("update",),
                               {"CGPROBE_CAPTURE": "update", "CGPROBE_CAPTURE_STEP": "1"})):
    start, traces, said = run_marks(label, ext, args, **env)
    clocks = {}
    for pid, recs in traces.items():
        if pid in said:
            clocks[pid] = check_clock("%s pid %d" % (label, pid), start, recs, said[pid])
    parent = [p for p, recs in traces.items() if "forked_from" not in tags(recs)]
    children = [p for p, recs in traces.items() if "forked_from" in tags(recs)]
    check(len(parent) == 1 and len(children) == 1,
          "%s: %d parent and %d child traces" % (label, len(parent), len(children)))
    if label == "window":
        check(all(tags(r).get("cgprobe_capture_reached") == "yes" for r in traces.values()),
              "window: cgprobe_capture_reached %s"
              % [tags(r).get("cgprobe_capture_reached") for r in traces.values()])
    got = [c for c in clocks.values() if c]
    if len(got) == 2:
        # The wall clock's offset from CLOCK_MONOTONIC, as each trace saw it.
        (r0, m0, e0, _), (r1, m1, e1, _) = got
        check(abs((r0 - m0) - (r1 - m1)) <= e0 + e1 + 10**6,
              "%s: realtime - monotonic %d and %d" % (label, r0 - m0, r1 - m1))
    if parent and children and clocks.get(parent[0]) and clocks.get(children[0]):
        check(clocks[parent[0]][1] < clocks[children[0]][1],
              "%s: the child's origin is not after its parent's" % label)

# One process after another: their origins in that order, on both clocks.
origins = []
for i in range(2):
    start, traces, said = run_marks("seq%d" % i, ".cgt")
    parent = [r for r in traces.values() if "forked_from" not in tags(r)]
    if parent:
        t = tags(parent[0])
        origins.append((int(t["cgprobe_clock_monotonic_ns"]), int(t["cgprobe_clock_realtime_ns"])))
check(len(origins) == 2 and origins[0][0] < origins[1][0] and origins[0][1] < origins[1][1],
      "one process after another: origins %s" % origins)

# Many blocks: how many fall outside their own reads, with no slack.
MANY = 20000
start, traces, said = run_marks("many", ".cgt", ("many", str(MANY)))
parent = [p for p, recs in traces.items() if "forked_from" not in tags(recs) and p in said]
got = check_clock("many", start, traces[parent[0]], said[parent[0]]) if parent else None
check(got is not None, "many: no clock in the parent's trace")
if got:
    outside = got[3]
    print("many: %d of %d marks outside their reads (cgprobe_clock %s)"
          % (outside, len(said[parent[0]]), tags(traces[parent[0]]).get("cgprobe_clock")))
    check(outside * 4 <= len(said[parent[0]]),
          "many: %d of %d records outside their two reads" % (outside, len(said[parent[0]])))

print("cgprobe_clock_error_ns measured: %s" % " ".join(str(e) for e in sorted(errors)))
shutil.rmtree(tmp, ignore_errors=True)
sys.exit(verdict())

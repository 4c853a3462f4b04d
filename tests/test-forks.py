# SPDX-License-Identifier: MIT
"""Forks under the probe: each child's trace holds every block it inherited.

  test-forks.py CGTRACE LIBCGPROBE FORK_STORM WRAPPER

- 1000 forks while two threads allocate flat out (tests/forks/fork-storm.c),
  every tenth child forking a grandchild, in the compact encoding; 200 in
  JSONL: each child's and grandchild's trace says cgprobe_inherited
  complete and holds the parent's marker block and every block the child
  found in the threads' slots and freed; the parent's trace validates and
  holds every block the threads made.
- A writer that cannot answer (CGPROBE_TEST_FORK_TIMEOUT): the forks go
  on, the children's traces say partial, and validate, summary --brief and
  the wrapper print it. A writer blocked on a FIFO nobody reads is outside
  the live table: its forks go through at once, their children whole.
- A multiprocessing.Pool with fork: each worker's trace inherits the
  parent's marker bytearray, and is whole although the pool terminates its
  workers (SIGTERM) while they exit.
- Shell pipelines (dash and bash): every fork child that left a trace
  inherited blocks, and the shells' traces validate.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
from checks import check, verdict  # noqa: E402

SLOT_LO, SLOTS = 5000, 64
MARKER = 777777
PY_MARKER = 3333333

cgtrace, probe, storm, wrapper = (os.path.abspath(a) for a in sys.argv[1:5])
tmp = tempfile.mkdtemp(prefix="cgprobe-forks-")


def clean_env(**extra):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("CGPROBE_") and k != "LD_PRELOAD"}
    env["CGPROBE_STACK_DEPTH"] = "0"
    env.update(extra)
    return env


def run(argv, env, timeout=300, **kw):
    return subprocess.run(argv, env=env, capture_output=True, text=True, timeout=timeout, **kw)


def records(trace):
    """A trace's records as dicts: JSONL read as it is, compact exported."""
    if trace.endswith(".jsonl"):
        with open(trace) as f:
            text = f.read()
    else:
        r = run([cgtrace, "export", trace], os.environ)
        if r.returncode != 0:
            check(False, "%s: export failed: %s" % (trace, r.stderr.strip()))
            return []
        text = r.stdout
    return [json.loads(line) for line in text.splitlines() if line]


def tags(recs):
    return recs[0].get("tags", {}) if recs and recs[0].get("kind") == "meta" else {}


def inherited(recs):
    """tensor_id -> bytes of the blocks the trace opens with (pre-existing)."""
    return {m["tensor_id"]: m["bytes"] for m in recs
            if m.get("kind") == "memory" and m.get("cgprobe_preexisting")}


def memory_figures(trace):
    r = run([cgtrace, "memory", "--json", "--top", "1", trace], os.environ)
    check(r.returncode == 0, "%s: memory --json: %s" % (trace, r.stderr.strip()))
    return json.loads(r.stdout)["summary"] if r.returncode == 0 else {}


def check_storm_child(trace, freed, threads, what, sites=False):
    """A child that freed `freed` blocks of the slots: each was in its trace."""
    recs = records(trace)
    if not recs:
        check(False, "%s: no records in %s" % (what, trace))
        return
    check(tags(recs).get("cgprobe_inherited") == "complete",
          "%s: cgprobe_inherited is %r" % (what, tags(recs).get("cgprobe_inherited")))
    pre = inherited(recs)
    check(MARKER in pre.values(), "%s: the parent's %d-byte marker is not inherited" % (what, MARKER))
    slot_sizes = range(SLOT_LO, SLOT_LO + SLOTS * threads)
    live = {t for t, b in pre.items() if b in slot_sizes}
    freed_seen = 0
    for m in recs:
        if m.get("kind") != "memory" or m.get("action") != "free":
            continue
        if m["tensor_id"] in live:
            live.discard(m["tensor_id"])
            freed_seen += 1
    check(freed_seen == freed,
          "%s: freed %d inherited slot blocks, the trace holds %d of them" % (what, freed, freed_seen))
    # A thread caught between its allocation and filling the slot leaves one live.
    check(len(live) <= threads,
          "%s: %d inherited slot blocks never freed (stale entries)" % (what, len(live)))
    if sites:
        check_inherited_site(trace, len(pre), what)


def check_inherited_site(trace, n_pre, what):
    """top names the inherited blocks' row for what it is, apart from any allocation's site."""
    r = run([cgtrace, "top", "--json", "--by", "count", "-n", "0", trace], os.environ)
    check(r.returncode == 0, "%s: top --json: %s" % (what, r.stderr.strip()))
    if r.returncode != 0:
        return
    rows = json.loads(r.stdout)["sites"]
    pre = [x for x in rows if x.get("preexisting")]
    check(sum(x["count"] for x in pre) == n_pre,
          "%s: top's pre-existing rows count %d blocks, the trace opens with %d"
          % (what, sum(x["count"] for x in pre), n_pre))
    check(all(not x["frames"] for x in pre), "%s: a pre-existing row with frames" % what)
    m = run([cgtrace, "memory", "--json", "--top", "0", trace], os.environ)
    live = json.loads(m.stdout)["peak_breakdown"] if m.returncode == 0 else []
    check(any(x.get("preexisting") for x in live) and
          all(not x.get("frames") for x in live if x.get("preexisting")),
          "%s: memory --json marks no inherited block live at the peak" % what)
    t = run([cgtrace, "top", "-n", "0", trace], os.environ)
    check("(live before recording began)" in t.stdout,
          "%s: top does not name the inherited blocks:\n%s" % (what, t.stdout))


def storm_run(forks, fmt, grand):
    out = os.path.join(tmp, "storm-" + fmt)
    os.mkdir(out)
    suffix = "cgt" if fmt == "compact" else "jsonl"
    env = clean_env(LD_PRELOAD=probe, CGPROBE_OUTPUT=os.path.join(out, "t.%p." + suffix))
    argv = [storm, str(forks), "2"] + (["GRAND"] if grand else [])
    r = run(argv, env)
    check(r.returncode == 0, "storm %s: exit %d: %s" % (fmt, r.returncode, r.stderr.strip()))
    check("cgprobe:" not in r.stderr, "storm %s: the probe warned: %s" % (fmt, r.stderr.strip()))
    lines = [line.split() for line in r.stdout.splitlines()]
    children = [(int(p), int(n), k) for k, p, n in lines if k in ("C", "G")]
    parent = [(int(p), int(n)) for k, p, n in lines if k == "P"]
    check(len([c for c in children if c[2] == "C"]) == forks,
          "storm %s: %d children reported, %d forks" % (fmt, len(children), forks))
    if grand:
        check(len([c for c in children if c[2] == "G"]) == (forks + 9) // 10,
              "storm %s: grandchildren reported" % fmt)
    for pid, freed, kind in children:
        trace = os.path.join(out, "t.%d.%s" % (pid, suffix))
        what = "storm %s %s %d" % (fmt, "child" if kind == "C" else "grandchild", pid)
        if not os.path.exists(trace):
            check(False, "%s: no trace" % what)
            continue
        check_storm_child(trace, freed, 2, what, sites=pid == children[0][0])
    if parent:
        pid, made = parent[0]
        trace = os.path.join(out, "t.%d.%s" % (pid, suffix))
        v = run([cgtrace, "validate", trace], os.environ)
        check(v.returncode == 0 and "warning" not in v.stderr,
              "storm %s: parent's trace: %s" % (fmt, v.stderr.strip()))
        s = memory_figures(trace)
        # The threads' blocks, the marker and glibc's two thread descriptors (calloc).
        allocs = s.get("alloc_count", 0)
        check(made + 1 <= allocs <= made + 8,
              "storm %s: the threads made %d blocks, the parent's trace holds %d allocations"
              % (fmt, made, allocs))
        # glibc keeps the thread descriptors' blocks.
        frees = s.get("free_count", 0)
        check(allocs - 4 <= frees <= allocs,
              "storm %s: parent: %d allocs, %d frees" % (fmt, allocs, frees))
    else:
        check(False, "storm %s: the parent reported nothing" % fmt)
    shutil.rmtree(out)


def stalled_writer():
    out = os.path.join(tmp, "stall")
    os.mkdir(out)
    env = clean_env(LD_PRELOAD=probe, CGPROBE_OUTPUT=os.path.join(out, "t.%p.cgt"),
                    CGPROBE_TEST_FORK_TIMEOUT="1")
    r = run([storm, "3", "1"], env)
    check(r.returncode == 0, "stall: exit %d: %s" % (r.returncode, r.stderr.strip()))
    children = [int(p) for k, p, n in (line.split() for line in r.stdout.splitlines()) if k == "C"]
    check(len(children) == 3, "stall: the children ran")
    check(r.stderr.count("cgprobe_inherited partial") == 1,
          "stall: one warning from the parent, got: %s" % r.stderr.strip())
    partial = 0
    for pid in children:
        trace = os.path.join(out, "t.%d.cgt" % pid)
        recs = records(trace)
        value = tags(recs).get("cgprobe_inherited")
        check(value in ("complete", "partial"), "stall: child %d: tag %r" % (pid, value))
        if value != "partial":
            continue
        partial += 1
        check(not inherited(recs), "stall: a partial child lists inherited blocks")
        v = run([cgtrace, "validate", trace], os.environ)
        check(v.returncode == 0 and "cgprobe_inherited partial" in v.stderr,
              "stall: validate says nothing of it: %s" % v.stderr.strip())
        b = run([cgtrace, "summary", "--brief", trace], os.environ)
        check("inherited heap missing" in b.stdout, "stall: summary --brief: %s" % b.stdout)
        f = run([cgtrace, "summary", trace], os.environ)
        check("inherited heap missing" in f.stdout, "stall: summary")
    check(partial == 3, "stall: %d of 3 children partial" % partial)
    # The wrapper's summary says it too, under each trace it summarises, and
    # names them all, with those past the 20 it summarises.
    w = run([wrapper, "-o", os.path.join(out, "w.%p.cgt"), storm, "2", "1"],
            clean_env(CGPROBE_TEST_FORK_TIMEOUT="1"))
    check(w.returncode == 0, "stall: wrapper exit %d" % w.returncode)
    # Each child is summarised with the note, or folded with the small
    # processes (its peak under 64 KiB while the parent's is not).
    folded = re.search(r"cgprobe: (\d+) process(?:es)? with a peak under", w.stderr)
    check(w.stderr.count("inherited heap missing") + (int(folded.group(1)) if folded else 0) == 2,
          "stall: the wrapper's summaries: %s" % w.stderr)
    check("warning: 2 fork children have no record of the heap they inherited" in w.stderr,
          "stall: the wrapper's warning: %s" % w.stderr)
    w = run([wrapper, "-o", os.path.join(out, "m.%p.cgt"), storm, "24", "1"],
            clean_env(CGPROBE_TEST_FORK_TIMEOUT="1"))
    check("smaller traces not summarised" in w.stderr and
          "warning: 24 fork children have no record" in w.stderr,
          "stall: 25 traces, the wrapper's warning: %s" % w.stderr)
    shutil.rmtree(out)


def stalled_fifo():
    """A parent whose trace is a FIFO nobody reads: its writer blocks, its forks do not."""
    out = os.path.join(tmp, "fifo")
    os.mkdir(out)
    env = clean_env(CGPROBE_OUTPUT=os.path.join(out, "t.%p"), PROBE=probe, STORM=storm, OUT=out)
    # The FIFO is named by the pid the program will have: the shell's, kept by exec.
    script = ('mkfifo "$OUT/t.$$" && exec 3<>"$OUT/t.$$" && '
              'exec env LD_PRELOAD="$PROBE" "$STORM" 5 1')
    with open(os.path.join(out, "stdout"), "w") as so:
        proc = subprocess.Popen(["sh", "-c", script], env=env, stdout=so,
                                stderr=subprocess.DEVNULL)
        deadline = 60
        lines = []
        while deadline > 0:
            with open(os.path.join(out, "stdout")) as f:
                lines = [line.split() for line in f.read().splitlines()]
            if len([x for x in lines if x[0] == "C"]) == 5:
                break
            subprocess.run(["sleep", "0.2"])
            deadline -= 0.2
        # Its threads wait for room in rings the writer cannot empty: it is stopped here.
        proc.kill()
        proc.wait()
    children = [(int(p), int(n)) for k, p, n in lines if k == "C"]
    check(len(children) == 5, "stalled FIFO: %d of 5 forks went through" % len(children))
    for pid, freed in children:
        check_storm_child(os.path.join(out, "t.%d" % pid), freed, 1, "stalled FIFO child %d" % pid)
    shutil.rmtree(out)


POOL = r"""
import multiprocessing, os, sys
def work(i):
    b = bytearray(1 << 20)
    return os.getpid()
if __name__ == "__main__":
    marker = bytearray(%d)
    with multiprocessing.get_context("fork").Pool(2) as pool:
        pids = set(pool.map(work, range(40), chunksize=1))
    print(" ".join(str(p) for p in sorted(pids)))
    print(len(marker))
""" % PY_MARKER


def python_pool():
    out = os.path.join(tmp, "pool")
    os.mkdir(out)
    script = os.path.join(tmp, "pool.py")
    with open(script, "w") as f:
        f.write(POOL)
    env = clean_env(LD_PRELOAD=probe, CGPROBE_OUTPUT=os.path.join(out, "t.%p.cgt"),
                    CGPROBE_MIN_BYTES="4096")
    r = run([sys.executable, script], env)
    check(r.returncode == 0, "pool: exit %d: %s" % (r.returncode, r.stderr.strip()))
    if r.returncode != 0:
        return
    workers = [int(p) for p in r.stdout.split("\n")[0].split()]
    check(1 <= len(workers) <= 2, "pool: workers %s" % workers)
    for pid in workers:
        trace = os.path.join(out, "t.%d.cgt" % pid)
        if not os.path.exists(trace):
            check(False, "pool: worker %d left no trace" % pid)
            continue
        recs = records(trace)
        check(tags(recs).get("cgprobe_inherited") == "complete", "pool: worker %d: tag" % pid)
        # The pool terminates its workers as they exit: the end under way still finishes.
        b = run([cgtrace, "summary", "--brief", trace], os.environ)
        check("; complete" in b.stdout, "pool: worker %d's trace: %s" % (pid, b.stdout.strip()))
        sizes = inherited(recs).values()
        check(any(PY_MARKER <= b < PY_MARKER + 64 for b in sizes),
              "pool: worker %d does not hold the parent's %d-byte bytearray" % (pid, PY_MARKER))
    main = os.path.join(out, "t.%d.cgt" % int(tags(records(trace)).get("forked_from", "0")))
    v = run([cgtrace, "validate", main], os.environ)
    check(v.returncode == 0, "pool: the parent's trace: %s" % v.stderr.strip())
    shutil.rmtree(out)


def pipeline(shell, script, what):
    out = os.path.join(tmp, "pipe-" + what)
    os.mkdir(out)
    env = clean_env(LD_PRELOAD=probe, CGPROBE_OUTPUT=os.path.join(out, "t.%p.cgt"))
    r = run([shell, "-c", script], env)
    check(r.returncode == 0, "%s: exit %d: %s" % (what, r.returncode, r.stderr.strip()))
    children = 0
    for name in sorted(os.listdir(out)):
        trace = os.path.join(out, name)
        recs = records(trace)
        t = tags(recs)
        if "forked_from" not in t or os.path.basename(t.get("executable", "")) not in (
                os.path.basename(os.path.realpath(shutil.which(shell))),):
            v = run([cgtrace, "validate", trace], os.environ)
            check(v.returncode == 0, "%s: %s: %s" % (what, name, v.stderr.strip()))
            continue
        children += 1
        check(t.get("cgprobe_inherited") == "complete", "%s: %s: tag %r"
              % (what, name, t.get("cgprobe_inherited")))
        check(len(inherited(recs)) > 0, "%s: fork child %s inherited nothing" % (what, name))
    check(children >= 2, "%s: %d fork children left traces" % (what, children))
    shutil.rmtree(out)


try:
    storm_run(1000, "compact", True)
    storm_run(200, "jsonl", False)
    stalled_writer()
    stalled_fifo()
    python_pool()
    # Subshells of a pipeline that allocate before they exit, and a command
    # substitution around it.
    loop = 'f() { i=0; while [ "$i" -lt 300 ]; do i=$((i + 1)); echo "line $i"; done; }; '
    script = loop + 'x=$(f | while read -r a b; do echo "$b $a"; done | sort | (f; cat)); echo ${#x}'
    pipeline("sh", script, "dash pipeline")
    if shutil.which("bash"):
        pipeline("bash", script, "bash pipeline")
finally:
    shutil.rmtree(tmp, ignore_errors=True)
sys.exit(verdict())

# SPDX-License-Identifier: MIT
"""A job is a folder: CGPROBE_OUTPUT=DIR/ and cgprobe -o DIR/ (docs/jobs.md).

  test-job-folder.py CGTRACE LIBCGPROBE WRAPPER FORKS HELLO

Under the wrapper with -o DIR/: a fork child that execs without recording
(tests/preload/forks.c fork-exec-empty), a fork child that records (fork),
and a shell pipeline sh -c 'HELLO | cat'; in the compact encoding and in
JSONL (CGPROBE_FORMAT=jsonl). In each:
- DIR holds one trace per process that recorded, named
  cgprobe.EXE.HOST.PID.cgt (.jsonl), and DIR/cgprobe.job, which the
  wrapper keeps and names;
- every line of the manifest is a JSON object; each trace in DIR has
  exactly one line, with the keys in the documented order, whose pid,
  ppid, host, forked_from, executable and cmdline are its meta tags' and
  start_realtime_ns its cgprobe_clock_realtime_ns; a trace the probe
  removed has its line and a {"removed": NAME} line after it, and no
  file; nothing else is listed.
Without the wrapper: CGPROBE_OUTPUT=DIR/a/b/ makes the folders; a folder
that cannot be made gives one warning line and the program's own exit.
"""
import os
import shutil
import socket
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
from checks import check, verdict  # noqa: E402
from probe_job import clean_env, manifest, records, run, tags, traces_in  # noqa: E402

cgtrace, probe, wrapper, forks, hello = (os.path.abspath(a) for a in sys.argv[1:6])
tmp = tempfile.mkdtemp(prefix="cgprobe-job-folder-")
host = socket.gethostname()
KEYS = ["trace", "pid", "ppid", "host", "forked_from", "rank", "start_realtime_ns",
        "executable", "cmdline"]


def check_job(name, folder, ext, want_exes, want_removed):
    """The folder's traces against its manifest; want_exes: the executables' names expected."""
    files = traces_in(folder)
    others = sorted(set(os.listdir(folder)) - set(files) - {"cgprobe.job"})
    check(not others, "%s: other files in the folder: %s" % (name, others))
    lines = manifest(folder)
    made = [x for x in lines if "trace" in x]
    removed = [x["removed"] for x in lines if "removed" in x]
    check(len(made) + len(removed) == len(lines), "%s: lines of neither kind: %s" % (name, lines))
    names = [x["trace"] for x in made]
    check(sorted(n for n in names if n not in removed) == files,
          "%s: listed %s, removed %s, in the folder %s" % (name, names, removed, files))
    check(len(set(names)) == len(names), "%s: a trace listed twice: %s" % (name, names))
    for r in removed:
        check(r in names and names.index(r) < [x.get("removed") for x in lines].index(r) and
              r not in files, "%s: removed %s: not listed before, or still there" % (name, r))
    check(len(removed) == want_removed, "%s: %d removed, not %d: %s"
          % (name, len(removed), want_removed, removed))
    exes = []
    for x in made:
        keys = [k for k in KEYS if k in x]
        check(list(x) == keys and {"trace", "pid", "ppid", "host", "start_realtime_ns",
                                   "executable", "cmdline"} <= set(x),
              "%s: manifest keys %s" % (name, list(x)))
        if x["trace"] not in files:
            continue
        t = tags(records(cgtrace, os.path.join(folder, x["trace"])))
        exe = os.path.basename(t.get("executable", "?"))
        exes.append(exe)
        check(x["trace"] == "cgprobe.%s.%s.%s%s" % (exe, host, t.get("pid"), ext),
              "%s: trace named %s" % (name, x["trace"]))
        for key, tag in (("pid", "pid"), ("ppid", "ppid"), ("forked_from", "forked_from"),
                         ("start_realtime_ns", "cgprobe_clock_realtime_ns")):
            want = int(t[tag]) if tag in t else None
            check(x.get(key) == want, "%s: %s: %s %s, the trace's %s" % (name, x["trace"], key,
                                                                     x.get(key), want))
        for key, tag in (("host", "hostname"), ("executable", "executable"),
                         ("cmdline", "cmdline")):
            check(x.get(key) == t.get(tag), "%s: %s: %s %r, the trace's %r"
                  % (name, x["trace"], key, x.get(key), t.get(tag)))
    # Some shells exec the pipeline's last command in a child of their own.
    check(sorted(e for e in exes if e in want_exes) == sorted(want_exes),
          "%s: traces of %s, not of %s" % (name, sorted(exes), sorted(want_exes)))


for fmt, ext in (("compact", ".cgt"), ("jsonl", ".jsonl")):
    env = clean_env(CGPROBE_FORMAT=fmt)
    for name, argv, want_exes, want_removed in (
            ("fork-exec-empty", [forks, "fork-exec-empty", hello], ["forks", "hello"], 1),
            ("fork", [forks, "fork", hello], ["forks", "forks"], 0),
            ("pipeline", ["sh", "-c", "%s | cat" % hello], ["hello", "cat"], None)):
        name = "%s %s" % (fmt, name)
        folder = os.path.join(tmp, name.replace(" ", "-"))
        r = run([wrapper, "-o", folder + "/"] + argv, env)
        check(r.returncode == 0, "%s: status %d: %s" % (name, r.returncode, r.stderr))
        if not os.path.isdir(folder):
            check(False, "%s: no folder" % name)
            continue
        check("job: " in r.stderr and folder + "/cgprobe.job" in r.stderr,
              "%s: the wrapper does not name the manifest: %s" % (name, r.stderr))
        check("summary " + folder + "/" in r.stderr,
              "%s: the wrapper does not say how to read the whole job: %s" % (name, r.stderr))
        if want_removed is None:
            # A shell's fork children record or not before their exec, as the shell goes.
            want_removed = sum(1 for x in manifest(folder) if "removed" in x)
        check_job(name, folder, ext, want_exes, want_removed)

# Without the wrapper: folders made as needed, then a folder that cannot be.
env = clean_env(LD_PRELOAD=probe, CGPROBE_OUTPUT=os.path.join(tmp, "plain", "a", "b") + "/")
r = run([hello, "3"], env)
check(r.returncode == 3 and r.stderr == "", "plain: status %d: %s" % (r.returncode, r.stderr))
folder = os.path.join(tmp, "plain", "a", "b")
check(os.path.isdir(folder) and len(traces_in(folder)) == 1 and len(manifest(folder)) == 1,
      "plain: folder a/b with one trace listed")
blocker = os.path.join(tmp, "file")
open(blocker, "w").close()
env = clean_env(LD_PRELOAD=probe, CGPROBE_OUTPUT=os.path.join(blocker, "job") + "/")
r = run([hello, "4"], env)
check(r.returncode == 4 and " hello R hello argc=2 " in r.stdout,
      "unmakeable folder: status %d, stdout %r" % (r.returncode, r.stdout))
check(len(r.stderr.splitlines()) == 1 and r.stderr.startswith("cgprobe: "),
      "unmakeable folder: stderr %r" % r.stderr)

shutil.rmtree(tmp, ignore_errors=True)
sys.exit(verdict())

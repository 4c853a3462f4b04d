# SPDX-License-Identifier: MIT
"""What the tests of a job of many processes share (tests/test-job-*.py):
programs run under the probe with an environment of their own, a trace's
records (a compact one exported by cgtrace), its meta tags and spans, and
a job folder's traces and manifest (docs/jobs.md)."""

import json
import os
import subprocess

from checks import check

# The variables a launcher sets, which a test's own environment (a CI job
# under Slurm or torchrun) must not lend the programs it runs.
LAUNCHER_VARS = (
    "RANK", "LOCAL_RANK", "WORLD_SIZE", "SLURM_PROCID", "OMPI_COMM_WORLD_RANK", "GROUP_RANK",
    "LOCAL_WORLD_SIZE", "TORCHELASTIC_RESTART_COUNT", "TORCHELASTIC_RUN_ID",
    "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_SIZE",
    "PMI_RANK", "PMI_SIZE", "PMIX_RANK", "SLURM_LOCALID", "SLURM_NTASKS", "SLURM_JOB_ID",
)
TRACE_ENDINGS = (".cgt", ".jsonl", ".jsonl.zst", ".zst")


def clean_env(**extra):
    """The test's environment without the probe's variables, LD_PRELOAD or a launcher's."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("CGPROBE_") and k not in ("LD_PRELOAD", "PYTHONPATH")
           and k not in LAUNCHER_VARS}
    env["CGPROBE_STACK_DEPTH"] = "0"
    env.update(extra)
    return env


def run(argv, env, timeout=120, **kw):
    return subprocess.run(argv, env=env, capture_output=True, text=True, timeout=timeout, **kw)


def records(cgtrace, trace, only=None):
    """A trace's records as dicts, through cgtrace export (either encoding): all, or the
    meta record and the lines that hold the text only (a long trace's few spans)."""
    p = subprocess.Popen([cgtrace, "export", trace], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    recs = []
    for line in p.stdout:
        if line.strip() and (only is None or not recs or only in line):
            recs.append(json.loads(line))
    err = p.stderr.read()
    if p.wait() != 0:
        check(False, "%s: export failed: %s" % (trace, err.strip()))
        return []
    return recs


def tags(recs):
    return recs[0].get("tags", {}) if recs and recs[0].get("kind") == "meta" else {}


def span_starts(recs, name):
    return [r for r in recs if r.get("kind") == "span_start" and r.get("name") == name]


def traces_in(folder):
    """The file names a reader takes for a job's traces, sorted."""
    return sorted(f for f in os.listdir(folder) if f.endswith(TRACE_ENDINGS))


def manifest(folder):
    """The lines of folder/cgprobe.job as dicts; a line that is no JSON object fails a check."""
    lines = []
    try:
        with open(os.path.join(folder, "cgprobe.job")) as f:
            text = f.read()
    except OSError as e:
        check(False, "%s: no manifest: %s" % (folder, e))
        return lines
    for line in text.splitlines():
        try:
            lines.append(json.loads(line))
        except ValueError:
            check(False, "%s/cgprobe.job: not JSON: %r" % (folder, line))
    return lines

# SPDX-License-Identifier: MIT
"""Checks cgtrace's answers on leak_train.py's traces (tests/test-steps-torch.sh).

    steps_check.py leak STEPS.json GROWTH.json SUMMARY.json LEAK_LINE SCRATCH_UPDATE UPDATES
    steps_check.py none STEPS.json UPDATES

Prints one line per failed check on stdout and exits 1 when any failed.
"""
import json
import sys

LEAKED = 128 * 1024 * 4  # one torch.zeros(128 Ki) of float32 an update
# The model's parameters, marked by watch() after they were made.
PARAMETERS = (256 * 512 + 512 + 512 * 10 + 10) * 4
failed = []


def check(ok, what):
    if not ok:
        failed.append(what)


def load(path):
    with open(path) as f:
        return json.load(f)


def cpu_trend(steps):
    for t in steps["trend"]:
        if t["device"] == "cpu":
            return t
    failed.append("no cpu trend in %s" % steps["trend"])
    return {"bytes_per_update": None, "steady": None}


mode = sys.argv[1]
steps = load(sys.argv[2])
updates = int(sys.argv[-1])
check(len(steps["updates"]) == updates,
      "%d updates, expected %d" % (len(steps["updates"]), updates))
trend = cpu_trend(steps)
for u in steps["updates"]:
    got = u["devices"][0]["peak_by_category"]["parameter"]
    check(got == PARAMETERS, "update %d: %d parameter bytes at its peak, expected %d"
          % (u["update"], got, PARAMETERS))
if mode == "leak":
    growth, summary = load(sys.argv[3]), load(sys.argv[4])
    leak_line, scratch = int(sys.argv[5]), int(sys.argv[6])
    slope = trend["bytes_per_update"] or 0
    check(abs(slope - LEAKED) <= 0.05 * LEAKED,
          "slope %.0f bytes an update, expected %d within 5%%" % (slope, LEAKED))
    peaks = [(u["devices"][0]["peak_bytes"], u["update"]) for u in steps["updates"]]
    check(max(peaks)[1] == scratch, "the highest update peak is update %d's, expected %d"
          % (max(peaks)[1], scratch))
    check(summary.get("peak_update") == scratch,
          "summary's peak_update %s, expected %d" % (summary.get("peak_update"), scratch))
    sites = growth.get("growth", [])
    check(sites and sites[0]["site"].endswith("(leak_train.py:%d)" % leak_line),
          "first growth site %s, expected leak_train.py:%d"
          % (sites[0]["site"] if sites else None, leak_line))
    if sites:
        per = sites[0]["bytes_per_update"]
        check(abs(per - LEAKED) <= 0.05 * LEAKED,
              "growth %d bytes an update at the leak, expected %d" % (per, LEAKED))
        check(sites[0]["updates"] >= updates - 3, "the leak grew in %d updates, expected %d"
              % (sites[0]["updates"], updates - 2))
else:
    check(trend["steady"] is True, "not steady: %s" % trend)
for f in failed:
    print(f)
sys.exit(1 if failed else 0)

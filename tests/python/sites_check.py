# SPDX-License-Identifier: MIT
# sites_check.py SCRIPT JSON FIELD MARK[=MIN_MIB]...: each MARK line of
# SCRIPT (the line holding "MARK:name") is the site of a row of cgtrace
# top/leaks --json (or a memory --json peak breakdown row) whose FIELD is at
# least MIN_MIB MiB (default 1; for the field count, MIN_MIB is a count);
# prints what is missing, exits 1 on any.
import json
import os
import sys

script, path, field = sys.argv[1:4]
lines = {}
with open(script) as f:
    for n, text in enumerate(f, 1):
        if "MARK:" in text:
            lines[text.split("MARK:")[1].split()[0]] = n
with open(path) as f:
    doc = json.load(f)
rows = doc.get("sites") or doc.get("stacks") or doc.get("peak_breakdown") or []
base = os.path.basename(script)


def site_of(row):
    frames = row.get("frames") or []
    if frames:
        return frames[0]
    return row.get("site") or {}


bad = 0
for want in sys.argv[4:]:
    mark, _, mib = want.partition("=")
    need = float(mib or 1) * (1 if field == "count" else 1048576)
    line = lines[mark]
    hits = [r for r in rows
            if os.path.basename(site_of(r).get("file") or "") == base
            and site_of(r).get("line") == line and r.get(field, 0) >= need]
    if not hits:
        bad += 1
        got = ["%s:%s %s" % (site_of(r).get("file"), site_of(r).get("line"), r.get(field))
               for r in rows[:8]]
        print("%s: no row with %s >= %d at %s:%d (%s); first rows: %s"
              % (path, field, need, base, line, mark, "; ".join(got)))
sys.exit(1 if bad else 0)

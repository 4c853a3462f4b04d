# check.py MEMORY_JSON CATEGORY...: each category's bytes at the peak
# (cgtrace memory --json) is non-zero; prints the failures, exits 1 on any.
import json
import sys

with open(sys.argv[1]) as f:
    peak = json.load(f)["summary"]["peak_by_category"]
bad = [c for c in sys.argv[2:] if not peak.get(c)]
for c in bad:
    print("%s: no %s memory at the peak: %s" % (sys.argv[1], c, json.dumps(peak)))
sys.exit(1 if bad else 0)

#!/bin/sh
# A job (docs/jobs.md) through the commands that take one, beyond the
# golden cases (tests/golden/job/): a bad trace in the job's folder is its
# one line and status 1 while every other process is answered as without
# it; --jobs N answers byte for byte as one thread does; timeline --csv is
# every process's rows on the job's axis, in time order; plot draws a panel
# per process and one per physical GPU at the sum's peak, and bounds the
# panels with a note.
#   test-job-cli.sh CGTRACE
set -u
# shellcheck source=tests/lib/sh-check.sh
. "$(dirname "$0")/lib/sh-check.sh"
need_args 1 "test-job-cli.sh CGTRACE" "$@"
cgtrace=$(abs "$1")
golden=$(cd "$(dirname "$0")/golden" && pwd)
make_tmp
cd "$tmp" || exit 1
mkdir job bad
cp "$golden"/job/*.jsonl job/
cp "$golden"/job/*.jsonl bad/
# Sorted among the others: the job's third trace, whose line 6 ends an unknown span.
cp "$golden"/traces/bad.jsonl bad/r2.jsonl
badline='bad/r2.jsonl:6: span_end for unknown span `s9`'

# The commands with a job, each as a line of arguments before the job.
commands='top
top --by-process --full
top --json
leaks
leaks --by-process --json
memory
memory --json --top 2
timeline
timeline --csv'

# A bad trace in the folder: its one line, status 1, the others answered as without it.
while read -r args; do
	# shellcheck disable=SC2086 # the arguments split on purpose
	"$cgtrace" $args job >want 2>/dev/null
	# shellcheck disable=SC2086
	"$cgtrace" $args bad >got 2>"$tmp/err"
	st=$?
	# JSON names each trace by its path: the folder's name is a difference.
	sed -i 's#"bad/#"job/#g' got
	# memory --json has an entry for the bad trace too (below).
	if [ "$st" -eq 1 ] && [ "$(grep -c 'r2.jsonl' "$tmp/err")" -eq 1 ] &&
		grep -qxF "$badline" "$tmp/err" && [ -s want ] &&
		{ cmp -s want got || [ "$args" = "memory --json --top 2" ]; }; then ok; else
		ko "$args: a bad trace in the folder (status $st)"
	fi
done <<EOF
$commands
EOF
# memory --json says which trace could not be read, where it would be.
"$cgtrace" memory --json --top 1 bad >got 2>/dev/null
if python3 -c '
import json, sys
d = json.load(open("got"))
paths = [p["path"] for p in d["processes"]]
bad = [p for p in d["processes"] if "error" in p]
assert len(paths) == 4 and len(bad) == 1 and bad[0]["path"] == "bad/r2.jsonl", paths
assert bad[0]["error"].startswith("bad/r2.jsonl:6:"), bad
assert d["gpus"][0]["peak_bytes"] == 3 << 20, d["gpus"]
' 2>"$tmp/err"; then ok; else ko "memory --json: the unreadable trace's entry"; fi

# --jobs 3 reads three traces at once and answers as one thread does.
while read -r args; do
	# shellcheck disable=SC2086
	"$cgtrace" $args job >one 2>/dev/null
	# shellcheck disable=SC2086
	"$cgtrace" $args --jobs 3 job >three 2>"$tmp/err"
	if [ -s one ] && cmp -s one three; then ok; else ko "$args --jobs 3"; fi
done <<EOF
$commands
EOF

# timeline --csv: each process's rows shifted by its start, all in time order.
"$cgtrace" timeline --csv job >job.csv 2>"$tmp/err"
rows=0
for t in job/*.jsonl; do
	n=$("$cgtrace" timeline --csv "$t" 2>/dev/null | tail -n +2 | wc -l)
	rows=$((rows + n))
done
if [ "$(head -1 job.csv | tr ',' '\n' | tail -2 | tr '\n' ' ')" = "pid rank " ] &&
	[ "$(tail -n +2 job.csv | wc -l)" -eq "$rows" ] &&
	tail -n +2 job.csv | cut -d, -f1 | sort -c -n &&
	[ "$(grep -m1 ',101,1$' job.csv | cut -d, -f1)" -eq $((1000 + 4000)) ]; then ok; else
	ko "timeline --csv: the job's rows"
fi

# plot: a panel per process in tree order (a parent before its fork child), then the GPU.
svg_check() {
	python3 - "$@" <<'PY'
import re, sys
svg = open(sys.argv[1]).read()
want_pids = [int(x) for x in sys.argv[2].split(",")]
panels = re.findall(r'<g class="panel"([^>]*)>', svg)
attrs = [dict(re.findall(r'(data-[a-z-]+)="([^"]*)"', p)) for p in panels]
procs = [a for a in attrs if "data-pid" in a]
gpus = [a for a in attrs if "data-gpu" in a]
assert [int(a["data-pid"]) for a in procs] == want_pids, procs
assert len(gpus) == 1 and gpus[0]["data-gpu"] == "GPU-aa", gpus
assert gpus[0]["data-peak-bytes"] == str(3 << 20) and gpus[0]["data-peak-ns"] == "6000", gpus
assert gpus[0]["data-processes"] == "2", gpus
assert attrs[-1] is gpus[0], "the GPU's panel last"
starts = {int(a["data-pid"]): int(a["data-start-ns"]) for a in procs}
assert starts.get(101, 4000) == 4000 and starts.get(100, 0) == 0, starts
assert "a job of 3 processes" in svg
note = re.search(r'<text class="note"[^>]*>([^<]*)<', svg)
want_note = sys.argv[3] if len(sys.argv) > 3 else None
assert (note.group(1) if note else None) == want_note, note
PY
}
if "$cgtrace" plot -o all.svg job 2>"$tmp/err" && svg_check all.svg 100,102,101 2>>"$tmp/err"
then ok; else ko "plot: a panel per process, then the GPU's"; fi
if "$cgtrace" plot --processes 1 -o one.svg job 2>"$tmp/err" &&
	svg_check one.svg 101 "1 of 3 processes drawn, those of highest peak; 2 more, each at \
most 1.00 MiB, not drawn" 2>>"$tmp/err"; then ok; else ko "plot --processes 1: the note"; fi
"$cgtrace" plot -o bad.svg bad >/dev/null 2>"$tmp/err"
st=$?
if [ "$st" -eq 1 ] && grep -qxF "$badline" "$tmp/err" && svg_check bad.svg 100,102,101 2>/dev/null
then ok; else ko "plot: a bad trace in the folder (status $st)"; fi
if "$cgtrace" plot --jobs 3 -o three.svg job 2>"$tmp/err" && cmp -s all.svg three.svg; then ok
else ko "plot --jobs 3"; fi
finish

#!/bin/sh
# The HTML report in a real browser: headless Chromium loads `cgtrace
# report`'s page of the demo trainer's trace, of a hand-written trace of
# two devices (checkpoints, an out-of-memory failure, strings that would end
# a script element) and of six marked training updates with known figures
# (tests/lib/updates_trace.py) from file:// URLs. Asserted: no console message at all
# (the page logs nothing, so any line is an error), the page's self-test
# (tests/lib/report-selftest.js, which the test puts on the page: no report
# ships it) says it rendered without errors, the summary
# shows `cgtrace memory --json`'s peak, and the stacked timeline's highest
# drawn point is that peak, by category and by allocation; hovering, the
# wheel, a drag, the reset and a click do their work (the page's synthetic
# events, #selftest=interact); the page names no URL; the tables of training
# updates hold cgtrace steps's updates, each device's highest peak among
# them, and the timeline marks where they start. Screenshots at 1280x720 go
# to BUILDDIR/report.png, report-2dev.png and report-updates.png.
# Before the browser, the command line: usage errors, unreadable traces, and
# the data block read back as JSON, its updates those of cgtrace steps (at
# most 2,000 of a trace of 3,000, the ones the page promises). Exits 77 without chromium (or
# chromium-browser) when those passed.
#   test-report-browser.sh CGTRACE PROBE DEMO BUILDDIR
set -u
# shellcheck source=tests/lib/sh-check.sh
. "$(dirname "$0")/lib/sh-check.sh"
need_args 4 "test-report-browser.sh CGTRACE PROBE DEMO BUILDDIR" "$@"
cgtrace=$(abs "$1")
probe=$(abs "$2")
demo=$(abs "$3")
build=$(abs "$4")
skip_unless_built "$probe"
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
golden=$(dirname "$0")/golden/traces

# The command line first, no browser needed: usage errors, unreadable
# traces (one line, status 1, no page left), -o - and the data block as JSON.
for args in '' '--buckets 0 x' '--allocs 100001 x' '--bogus x'; do
	# shellcheck disable=SC2086 # each case is a list of words
	"$cgtrace" report $args >"$tmp/out" 2>"$tmp/err"
	st=$?
	[ "$st" -eq 2 ] && ok || ko "cgtrace report $args: status $st, expected 2"
done
for bad in "$tmp/missing.cgt" "$golden/bad.jsonl"; do
	echo old >"$tmp/kept.html"
	"$cgtrace" report -o "$tmp/kept.html" "$bad" >"$tmp/out" 2>"$tmp/err"
	st=$?
	if [ "$st" -eq 1 ] && [ "$(wc -l <"$tmp/err")" -eq 1 ] && [ "$(cat "$tmp/kept.html")" = old ] &&
		[ "$(find "$tmp" -name 'kept.html.tmp*' | wc -l)" -eq 0 ]; then
		ok
	else
		ko "cgtrace report $bad: status $st, the old page replaced or a temporary left"
	fi
done
: >"$tmp/err"
"$cgtrace" report -o - "$golden/train.jsonl" >"$tmp/train.html" 2>"$tmp/err" && ok || ko "report -o - failed"
head -n 1 "$tmp/train.html" | grep -q '^<!DOCTYPE html>' && ok || ko "report -o -: no page on stdout"
# check_json PAGE [stacks] [steps] [updates=STEPS_JSON] [trend=STEPS_TEXT]: the data
# block is JSON as docs/report.md says; its training updates are cgtrace steps's.
cat >"$tmp/check.py" <<'PY'
import json, sys
page = open(sys.argv[1], encoding="utf-8").read()
want = {a for a in sys.argv[2:] if "=" not in a}
opts = dict(a.split("=", 1) for a in sys.argv[2:] if "=" in a)
mark = '<script type="application/json" id="cg-data">'
start = page.index(mark) + len(mark)
def no_repeats(pairs):
    keys = [k for k, _ in pairs]
    assert len(keys) == len(set(keys)), "a repeated key: %s" % keys
    return dict(pairs)
d = json.loads(page[start:page.index("</script>", start)], object_pairs_hook=no_repeats)
assert d["format"] == "cgprobe-report/1", d["format"]
n = d["grid"]["n"]
for dev in d["devices"]:
    b = dev["buckets"]
    assert all(len(b[k]) == n for k in ("max_ns", "max", "end", "drawn")), "bucket columns"
    assert max(b["max"]) == dev["peak"], (max(b["max"]), dev["peak"])
    for i in range(n):
        assert sum(c[i] for c in b["cat"]) == b["max"][i], "categories sum to the bucket's max"
        assert b["drawn"][i] <= b["max"][i], "drawn within the max"
assert d["peak"]["bytes"] == max(x["peak"] for x in d["devices"])
assert len(d["peak"]["breakdown"]) + d["peak"]["rest"]["count"] == d["peak"]["count"]
for a in d["allocs"]:
    assert -1 <= a["s"] < len(d["sites"]), "site index"
    assert 0 <= a["live"][0] <= a["live"][1] <= n, "the buckets an allocation is drawn in"
pal = d["palette"]
assert len(pal["category"]) == len(d["categories"]) and len(pal["step"]) == 4, "the palette"
assert all(pal[k].startswith("#") for k in ("peak", "oom", "used", "capacity", "rest")), "marks"
assert d["stacks"] == ("stacks" in want), "stacks"
if "stacks" in want:
    assert d["top_sites"] and d["top_sites_rows"] >= len(d["top_sites"]), "top sites"
    assert d["leaks_total"]["count"] >= 0 and d["leaks_rows"] >= len(d["leaks"]), "leaks"
if "steps" in want:
    assert {s["step"] for s in d["steps"]} >= {"forward", "backward", "optimizer"}, d["steps"]
    assert len(d["step_bands"]["t0"]) == len(d["step_bands"]["k"]) > 0, "bands"
    assert d["step_spans"], "step spans"
u = d["updates"]
rows, shown = u["rows"], u["shown"]
assert shown == len(rows["update"]) <= u["limit"] and shown <= u["total"], "updates shown"
assert all(len(rows[k]) == shown for k in ("start", "end", "flags")), "update columns"
assert rows["start"] == sorted(rows["start"]), "updates in time order"
for dev in u["devices"]:
    assert all(len(dev[k]) == shown for k in ("peak", "peak_ns", "start", "end", "allocs"))
    assert len(dev["cat"]) == len(d["categories"]) and all(len(c) == shown for c in dev["cat"])
    for i in range(shown):
        assert sum(c[i] for c in dev["cat"]) == dev["peak"][i], "an update's categories sum to its peak"
m = u["marks"]
assert len(m["update"]) == len(m["t0"]) == len(m["t1"]) <= max(u["total"], 0), "marks"
assert len(m["t0"]) == u["total"] if m["every"] else len(m["t0"]) <= n, "marks: every update, or one a bucket"
if "updates" in opts:
    s = json.load(open(opts["updates"]))
    assert u["from"] == s["updates_from"] and u["total"] == len(s["updates"]), (u["from"], u["total"])
    assert [x["name"] for x in u["devices"]] == s["devices"], "the devices of cgtrace steps"
    by = {r["update"]: r for r in s["updates"]}
    names = {"peak": "peak_bytes", "peak_ns": "peak_ns", "start": "start_bytes",
             "end": "end_bytes", "allocs": "allocs"}
    for i, num in enumerate(rows["update"]):
        r = by[num]
        assert (rows["start"][i], rows["end"][i]) == (r["start_ns"], r["end_ns"]), num
        assert rows["flags"][i] == r["warmup"] + 2 * r["open"], num
        for dev, fig in zip(u["devices"], r["devices"]):
            assert all(dev[k][i] == fig[v] for k, v in names.items()), (num, dev["name"])
            assert [c[i] for c in dev["cat"]] == list(fig["peak_by_category"].values()), num
    for dev, t in zip(u["devices"], s["trend"]):
        assert (dev["trend"]["fitted"], dev["trend"]["steady"]) == (t["fitted"], t["steady"]), t
    if u["total"] > u["limit"]:
        # The selection: the limit, the first, the last, each device's peak update.
        assert shown == u["limit"], shown
        keep = {s["updates"][0]["update"], s["updates"][-1]["update"]}
        for k, name in enumerate(s["devices"]):
            top = max(s["updates"], key=lambda r: (r["devices"][k]["peak_bytes"], -r["start_ns"]))
            keep.add(top["update"])
        assert keep <= set(rows["update"]), keep - set(rows["update"])
    else:
        assert shown == u["total"], "every update shown"
if "trend" in opts:
    lines = open(opts["trend"]).read().splitlines()
    for dev in u["devices"]:
        assert dev["trend"]["text"] in lines, "the trend in cgtrace steps's words: " + dev["trend"]["text"]
PY
check_json() {
	if command -v python3 >/dev/null 2>&1; then
		python3 "$tmp/check.py" "$@" >"$tmp/err" 2>&1 && ok || ko "$1: the data block is not the JSON expected"
	else
		skip "the data block as JSON (no python3)"
	fi
}
# steps_of NAME TRACE: cgtrace steps of TRACE, as JSON and as text, for check_json.
steps_of() {
	"$cgtrace" steps --json "$2" >"$tmp/$1.steps.json" 2>"$tmp/err" &&
		"$cgtrace" steps "$2" >"$tmp/$1.steps.txt" 2>"$tmp/err" || ko "$1: cgtrace steps failed"
}
steps_of train "$golden/train.jsonl"
check_json "$tmp/train.html" steps updates="$tmp/train.steps.json" trend="$tmp/train.steps.txt"

# More updates than the page lists: 2,000 of them, the first, the last and
# each device's peak update among them; the page stays small. And a trace
# of six marked updates whose figures are known, for the browser below.
updates_trace=$(dirname "$0")/lib/updates_trace.py
if command -v python3 >/dev/null 2>&1; then
	python3 "$updates_trace" "$tmp/many.jsonl" 3000 && python3 "$updates_trace" "$tmp/updates.jsonl" 6 ||
		ko "writing the traces of updates"
	"$cgtrace" report -o "$tmp/many.html" "$tmp/many.jsonl" 2>"$tmp/err" || ko "many: cgtrace report failed"
	steps_of many "$tmp/many.jsonl"
	check_json "$tmp/many.html" updates="$tmp/many.steps.json"
	size=$(wc -c <"$tmp/many.html")
	[ "$size" -lt 2000000 ] && ok || ko "many: a page of $size bytes for 3,000 updates"
else
	skip "the traces of updates (no python3)"
fi

need_browser
unset CGPROBE_MIN_BYTES CGPROBE_ONLY CGPROBE_STEPS CGPROBE_FORMAT CGTRACE_DEBUG_DIR CGPROBE_CAPTURE

# A hand-written trace: three steps on cuda:0 with the host beside it.
awk 'BEGIN {
	MiB = 1048576
	print "{\"kind\":\"meta\",\"schema\":\"candle-graph/trace/6\",\"run_id\":\"run-1-1\",\"correlation_id\":\"two/update-1\",\"entrypoint\":\"two-devices\",\"phase\":\"train\",\"timestamp\":\"2026-12-01T12:00:00.000Z\",\"capture_step\":1,\"warmup_steps\":0,\"device\":\"cuda:0\",\"timing_mode\":\"host\",\"tags\":{\"note\":\"</script><!-- a tag -->\"}}"
	print "{\"kind\":\"span_start\",\"id\":\"s1\",\"name\":\"two-devices\",\"start_ns\":0,\"span_kind\":\"function\"}"
	n = 1
	for (k = 0; k < 3; k++) {
		b = k * 100000000 + 1000
		f = "s" (++n); bw = "s" (++n); o = "s" (++n)
		span(f, "forward", b, "forward")
		for (a = 0; a < 3; a++) mem(b + 1000 + a * 1000, "0x" (k * 16 + a + 4096), f, "cuda:0", 8 * MiB, "alloc", "activation")
		mem(b + 5000, "cpu" k, f, "cpu", 4096 * (k + 1), "alloc", "other")
		ckpt(b + 9000, 24 * MiB + 64 * MiB, 0)
		end(f, 20000000)
		span(bw, "backward", b + 30000000, "backward")
		mem(b + 30001000, "0x" (k * 16 + 8 + 4096), bw, "cuda:0", 16 * MiB, "alloc", "gradient")
		for (a = 0; a < 3; a++) mem(b + 30002000 + a * 1000, "0x" (k * 16 + a + 4096), bw, "cuda:0", 8 * MiB, "free", "activation")
		if (k == 2) ckpt(b + 30009000, 90 * MiB, 512 * MiB)
		end(bw, 20000000)
		span(o, "optimizer", b + 60000000, "optimizer")
		if (k == 0) mem(b + 60001000, "</script><b>opt", o, "cuda:0", 12 * MiB, "alloc", "optimizer")
		mem(b + 60002000, "0x" (k * 16 + 8 + 4096), o, "cuda:0", 16 * MiB, "free", "gradient")
		if (k < 2) mem(b + 60003000, "cpu" k, o, "cpu", 4096 * (k + 1), "free", "other")
		end(o, 10000000)
	}
	print "{\"kind\":\"span_end\",\"id\":\"s1\",\"duration_ns\":300000000}"
}
function span(id, name, t, step) {
	printf "{\"kind\":\"span_start\",\"id\":\"%s\",\"parent_id\":\"s1\",\"name\":\"%s\",\"start_ns\":%d,\"span_kind\":\"module\",\"step\":\"%s\"}\n", id, name, t, step
}
function end(id, d) {
	printf "{\"kind\":\"span_end\",\"id\":\"%s\",\"duration_ns\":%d}\n", id, d
}
function mem(t, id, sp, dev, bytes, action, cat) {
	printf "{\"kind\":\"memory\",\"timestamp_ns\":%d,\"tensor_id\":\"%s\",\"span_id\":\"%s\",\"op_name\":\"%s\",\"device\":\"%s\",\"bytes\":%d,\"action\":\"%s\",\"shape\":[%d],\"dtype\":\"u8\",\"category\":\"%s\"}\n", t, id, sp, dev == "cpu" ? "malloc" : "cudaMalloc", dev, bytes, action, bytes, cat
}
function ckpt(t, used, oom) {
	printf "{\"kind\":\"device_memory\",\"timestamp_ns\":%d,\"device\":\"cuda:0\",\"used_bytes\":%d,\"free_bytes\":%d%s}\n", t, used, 1073741824 - used, oom ? ",\"oom_request_bytes\":" oom : ""
}' >"$tmp/two.jsonl"

# A probe built with AddressSanitizer (the sanitizer build runs this suite)
# cannot be preloaded: the demo's report is then left out.
demo_asan=
if grep -q __asan_init "$probe"; then
	demo_asan=1
	skip "the demo under the probe: $probe is built with AddressSanitizer"
else
	env LD_PRELOAD="$probe" CGPROBE_OUTPUT="$tmp/demo.cgt" "$demo" --steps 3 >"$tmp/out" 2>"$tmp/err" ||
		ko "the demo failed under the probe"
fi

# json_number KEY FILE: the first number after "KEY": in FILE.
json_number() {
	sed -n "s/.*\"$1\":\([0-9][0-9]*\).*/\1/p" "$2" | head -n 1
}

# check NAME TRACE SHOT: the report of TRACE loaded and drawn; SHOT: the screenshot's name.
check() {
	name=$1 trace=$2 shot=$3
	page=$tmp/$name.html
	if ! "$cgtrace" report -o "$page" "$trace" >"$tmp/out" 2>"$tmp/err"; then
		ko "$name: cgtrace report failed"
		return
	fi
	ok
	"$cgtrace" memory --json "$trace" >"$tmp/mem.json" 2>"$tmp/err" || ko "$name: cgtrace memory failed"
	peak=$(sed -n 's/.*"summary":{[^}]*"peak_bytes":\([0-9]*\).*/\1/p' "$tmp/mem.json")
	[ -n "$peak" ] && [ "$peak" -gt 0 ] && ok || ko "$name: no peak in cgtrace memory --json"

	# Nothing to fetch: no URL anywhere (the page's own text has none; the trace's strings neither).
	if grep -Eiq '(src|href)[[:space:]]*=|https?://|@import|url\(' "$page"; then
		ko "$name: the page names a resource: $(grep -Eio '.{20}((src|href)[[:space:]]*=|https?://|@import|url\().{20}' "$page" | head -n 1)"
	else
		ok
	fi
	grep -q '<script type="application/json" id="cg-data">' "$page" && ok || ko "$name: no data block"
	steps_of "$name" "$trace"
	case $name in
	demo) check_json "$page" stacks steps updates="$tmp/$name.steps.json" trend="$tmp/$name.steps.txt" ;;
	*) check_json "$page" steps updates="$tmp/$name.steps.json" trend="$tmp/$name.steps.txt" ;;
	esac
	# The data block ends once, where the page ends it: no string closed it early.
	n=$(grep -o '</script>' "$page" | wc -l)
	[ "$n" -eq 2 ] && ok || ko "$name: $n '</script>' in the page, expected 2"
	# The page ships no self-test: the test puts it on a copy.
	! grep -q 'cg-selftest' "$page" && ok || ko "$name: the page ships a self-test"
	tpage=$tmp/$name.selftest.html
	"$(dirname "$0")/lib/report-selftest.sh" "$page" "$tpage" || ko "$name: no self-test put on the page"

	browser_selftest "file://$tpage" cg-selftest
	cp "$tmp/selftest.json" "$tmp/selftest"
	echo "$name selftest: $(cat "$tmp/selftest") (peak $peak)"
	: >"$tmp/err"
	grep -q '"rendered":true' "$tmp/selftest" && ok || ko "$name: the page did not render"
	grep -q '"errors":\[\]' "$tmp/selftest" && ok || ko "$name: the page met errors"
	for k in peak_shown timeline_max timeline_max_alloc; do
		v=$(json_number "$k" "$tmp/selftest")
		[ "$v" = "$peak" ] && ok || ko "$name: $k is '$v', cgtrace memory says $peak"
	done
	# The tables of training updates as drawn: every update of cgtrace steps
	# (up to the page's limit), each device's highest peak among them.
	if command -v python3 >/dev/null 2>&1; then
		python3 - "$tmp/selftest" "$tmp/$name.steps.json" >"$tmp/err" 2>&1 <<'PY' && ok || ko "$name: the updates' tables"
import json, sys
got = json.load(open(sys.argv[1]))["updates"]
s = json.load(open(sys.argv[2]))
assert [t["device"] for t in got] == (s["devices"] if s["updates"] else []), got
for k, t in enumerate(got):
    assert t["rows"] == t["data_rows"] == min(len(s["updates"]), 2000), t
    assert t["peak"] == max(r["devices"][k]["peak_bytes"] for r in s["updates"]), t
PY
	fi
	# Each tag and string came through as text, the script-ending ones included.
	case $name in
	updates)
		# Six updates: cuda:0's highest peak is update 5's, 108 MiB; a mark and a number for each.
		grep -q '"updates":\[{"device":"cpu","rows":6,"data_rows":6,"peak":24576},{"device":"cuda:0","rows":6,"data_rows":6,"peak":113246208}\]' "$tmp/selftest" &&
			ok || ko "$name: the tables of the six updates"
		grep -q '"update_lines":6,"update_labels":6' "$tmp/selftest" && ok || ko "$name: the updates' marks on the timeline"
		;;
	two)
		grep -q 'note = &lt;/script&gt;&lt;!-- a tag --&gt;' "$tmp/dom.html" && ok ||
			ko "$name: the tag holding </script> is not shown as text"
		grep -q '"drawn_mismatch":0' "$tmp/selftest" && ok ||
			ko "$name: the kept allocations live at a bucket's highest instant do not sum to its drawn bytes"
		;;
	esac
	# The pointer's work, by the self-test's synthetic events (#selftest=interact).
	run_browser --enable-logging=stderr --v=0 --virtual-time-budget=5000 --dump-dom \
		"file://$tpage#selftest=interact" >"$tmp/dom.html" 2>"$tmp/browser.err"
	if grep -q ':CONSOLE' "$tmp/browser.err"; then
		grep ':CONSOLE' "$tmp/browser.err" >"$tmp/err"
		ko "$name: console messages while interacting"
	fi
	got=$(sed -n 's/.*"interact":"\([^"]*\)".*/\1/p' "$tmp/dom.html")
	[ "$got" = ok ] && ok || ko "$name: hover, zoom, click: '${got:-no answer}'"
	rm -f "$build/$shot"
	run_browser --hide-scrollbars --window-size=1280,720 --screenshot="$build/$shot" \
		"file://$page" >/dev/null 2>"$tmp/browser.err"
	[ -s "$build/$shot" ] && ok || { cp "$tmp/browser.err" "$tmp/err"; ko "$name: no screenshot"; }
}

[ -n "$demo_asan" ] || check demo "$tmp/demo.cgt" report.png
check two "$tmp/two.jsonl" report-2dev.png
[ ! -f "$tmp/updates.jsonl" ] || check updates "$tmp/updates.jsonl" report-updates.png
finish

#!/bin/sh
# The HTML report in a real browser: headless Chromium loads `cgtrace
# report`'s page of the demo trainer's trace and of a hand-written trace of
# two devices (checkpoints, an out-of-memory failure, strings that would end
# a script element) from file:// URLs. Asserted: no console message at all
# (the page logs nothing, so any line is an error), the page's self-test
# (tests/lib/report-selftest.js, which the test puts on the page: no report
# ships it) says it rendered without errors, the summary
# shows `cgtrace memory --json`'s peak, and the stacked timeline's highest
# drawn point is that peak, by category and by allocation; hovering, the
# wheel, a drag, the reset and a click do their work (the page's synthetic
# events, #selftest=interact); the page names no URL. Screenshots at 1280x720 go to BUILDDIR/report.png and report-2dev.png.
# Before the browser, the command line: usage errors, unreadable traces, and
# the data block read back as JSON. Exits 77 without chromium (or
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
for args in '' '--buckets 0 x' '--allocs 100001 x' '--bogus x' 'a b'; do
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
# check_json PAGE [stacks] [steps]: the data block is JSON as docs/report.md says.
cat >"$tmp/check.py" <<'PY'
import json, sys
page = open(sys.argv[1], encoding="utf-8").read()
want = set(sys.argv[2:])
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
PY
check_json() {
	if command -v python3 >/dev/null 2>&1; then
		python3 "$tmp/check.py" "$@" >"$tmp/err" 2>&1 && ok || ko "$1: the data block is not the JSON expected"
	else
		skip "the data block as JSON (no python3)"
	fi
}
check_json "$tmp/train.html" steps

browser=$(command -v chromium 2>/dev/null) || browser=$(command -v chromium-browser 2>/dev/null) || {
	[ "$fail" -eq 0 ] || finish
	echo "SKIP: no chromium or chromium-browser in PATH ($pass command-line checks passed)"
	exit 77
}
unset CGPROBE_MIN_BYTES CGPROBE_ONLY CGPROBE_STEPS CGPROBE_FORMAT CGTRACE_DEBUG_DIR CGPROBE_CAPTURE
# Root has no sandbox; each run its own profile, so parallel tests do not share one.
sandbox=
[ "$(id -u)" != 0 ] || sandbox=--no-sandbox
run_browser() {
	timeout 120 "$browser" --headless $sandbox --disable-gpu --no-first-run \
		--user-data-dir="$tmp/profile" "$@"
}

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
	case $name in
	demo) check_json "$page" stacks steps ;;
	*) check_json "$page" steps ;;
	esac
	# The data block ends once, where the page ends it: no string closed it early.
	n=$(grep -o '</script>' "$page" | wc -l)
	[ "$n" -eq 2 ] && ok || ko "$name: $n '</script>' in the page, expected 2"
	# The page ships no self-test: the test puts it on a copy.
	! grep -q 'cg-selftest' "$page" && ok || ko "$name: the page ships a self-test"
	tpage=$tmp/$name.selftest.html
	"$(dirname "$0")/lib/report-selftest.sh" "$page" "$tpage" || ko "$name: no self-test put on the page"

	run_browser --enable-logging=stderr --v=0 --virtual-time-budget=5000 --dump-dom \
		"file://$tpage" >"$tmp/dom.html" 2>"$tmp/browser.err"
	st=$?
	[ "$st" -eq 0 ] && ok || { cp "$tmp/browser.err" "$tmp/err"; ko "$name: chromium --dump-dom exit status $st"; }
	# Chromium prints every console message as "...:CONSOLE:LINE] "text", source: URL (LINE)".
	if grep -q ':CONSOLE' "$tmp/browser.err"; then
		grep ':CONSOLE' "$tmp/browser.err" >"$tmp/err"
		ko "$name: console messages"
	else
		ok
	fi
	sed -n 's/.*<pre id="cg-selftest"[^>]*>\([^<]*\)<\/pre>.*/\1/p' "$tmp/dom.html" >"$tmp/selftest"
	echo "$name selftest: $(cat "$tmp/selftest") (peak $peak)"
	: >"$tmp/err"
	grep -q '"rendered":true' "$tmp/selftest" && ok || ko "$name: the page did not render"
	grep -q '"errors":\[\]' "$tmp/selftest" && ok || ko "$name: the page met errors"
	for k in peak_shown timeline_max timeline_max_alloc; do
		v=$(json_number "$k" "$tmp/selftest")
		[ "$v" = "$peak" ] && ok || ko "$name: $k is '$v', cgtrace memory says $peak"
	done
	# Each tag and string came through as text, the script-ending ones included.
	case $name in
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
finish

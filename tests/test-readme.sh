#!/bin/sh
# The README says what the programs do: its worked example is what running
# the demo under the wrapper and `cgtrace memory --top 3` print (numbers,
# paths and addresses aside, line for line: the lines, the words, the
# columns), with one peak time throughout; it explains "autograd retained";
# CGPROBE_CAPTURE=update is in it and in `cgprobe --help`.
#   test-readme.sh README WRAPPER BUILDDIR
# Exits 77 when the probe or the demo is not built.
set -u
# shellcheck source=tests/lib/sh-check.sh
. "$(dirname "$0")/lib/sh-check.sh"
need_args 3 "test-readme.sh README WRAPPER BUILDDIR" "$@"
readme=$(abs "$1")
wrapper=$(abs "$2")
build=$(abs "$3")
demo=$build/demo/cgprobe-demo-mlp
skip_unless_built "$build/preload/libcgprobe.so"
skip_unless_built "$demo"
unset CGPROBE_OUTPUT CGPROBE_FORMAT CGPROBE_MIN_BYTES CGPROBE_ONLY CGPROBE_FOLLOW CGPROBE_LIB \
	CGPROBE_STACK_DEPTH CGPROBE_CAPTURE CGPROBE_QUIET
make_tmp

# The worked example: the first console block after its heading.
awk '/^## A worked example/ { on = 1 } on && /^```console/ { inside = 1; next }
	inside && /^```/ { exit } inside' "$readme" >"$tmp/example"
[ -s "$tmp/example" ] || { ko "no console block under '## A worked example'"; finish; }

# One peak, one time: every "peak ... at TIME" of the example says the same TIME.
times=$(sed -n 's/.*peak.* at \([0-9.]* [mun]*s\).*/\1/p; s/^cpu .* \([0-9.]* [mun]*s\)  .*/\1/p' \
	"$tmp/example" | sort -u)
if [ "$(printf '%s\n' "$times" | grep -c .)" -eq 1 ]; then ok; else
	ko "the example's peak times differ: $(printf '%s ' "$times")"
fi

# The first two commands' output as the README shows it, and as they print
# it now; both with paths, numbers, addresses and time units masked and
# runs of blanks squeezed.
# The probe's own bytes are near 1 MiB for the demo, KiB or MiB by the run
# (MALLOC_PERTURB_ touches its buffers): their unit is masked too.
mask() {
	sed -e 's#/[^ ]*/##g' -e 's/0x[0-9a-f]*/ADDR/g' -e 's/[0-9][0-9,.]*/N/g' \
		-e 's/N [mun]\{0,1\}s\b/TIME/g' -e 's/\(probe.s N\) [KMG]\{0,1\}i\{0,1\}B/\1 SIZE/' |
		tr -s ' '
}
awk '/^\$ / { n++; if (n > 2) exit; next } { print }' "$tmp/example" | mask >"$tmp/shown"
cd "$tmp" || exit 1
"$wrapper" -o demo.%p.cgt "$demo" --steps 20 >"$tmp/run" 2>&1 || ko "the demo under the wrapper"
for trace in demo.*.cgt; do break; done
"$build/cgtrace/cgtrace" memory --top 3 "$trace" >>"$tmp/run" 2>&1 || ko "cgtrace memory --top 3"
# A sanitizer build's wrapper says so first: not part of the example.
grep -v "^cgprobe: note: this wrapper's build uses -Db_sanitize=" "$tmp/run" | mask >"$tmp/printed"
if diff -u "$tmp/shown" "$tmp/printed" >"$tmp/diff"; then ok; else
	ko "the worked example is not what the demo prints now:"
	cat "$tmp/diff"
fi

# Prose, outside the console blocks: "autograd retained" explained.
awk '/^```/ { code = !code; next } !code' "$readme" >"$tmp/prose"
# shellcheck disable=SC2016 # the backquotes are the README's
if grep -q '`autograd retained` is' "$tmp/prose"; then ok; else ko "no sentence says what autograd retained is"; fi
if grep -q 'CGPROBE_CAPTURE=update' "$tmp/prose"; then ok; else ko "CGPROBE_CAPTURE=update not in the README"; fi
if "$wrapper" --help | grep -q 'CGPROBE_CAPTURE=update'; then ok; else ko "CGPROBE_CAPTURE=update not in cgprobe --help"; fi
finish

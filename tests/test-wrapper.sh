#!/bin/sh
# Tests for the cgprobe wrapper: exit status and signal pass-through, usage
# errors, program look-up, refusal of static programs, the environment and
# arguments PROGRAM gets, and the summary printed from the manifest.
#   test-wrapper.sh WRAPPER BUILDDIR
# Uses BUILDDIR/preload/libcgprobe.so (or $CGPROBE_LIB when set) and
# BUILDDIR/cgtrace/cgtrace; exits 77 (skipped) when the library is missing.
# shellcheck disable=SC2016 # the single-quoted $ are for the programs run
set -u
# shellcheck source=tests/lib/sh-check.sh
. "$(dirname "$0")/lib/sh-check.sh"
need_args 2 "test-wrapper.sh WRAPPER BUILDDIR" "$@"
wrapper=$(abs "$1")
build=$(abs "$2")
lib=${CGPROBE_LIB:-$build/preload/libcgprobe.so}
skip_unless_built "$lib"
CGPROBE_LIB=$(abs "$lib")
export CGPROBE_LIB
unset CGPROBE_OUTPUT CGPROBE_MIN_BYTES CGPROBE_ONLY CGPROBE_FOLLOW CGPROBE_FLUSH_MS CGPROBE_TAGS
PATH=$build/cgtrace:$PATH

make_tmp
mkdir "$tmp/work" "$tmp/tmpdir" || exit 1
# The wrapper's manifest goes here; it must be gone after every run.
TMPDIR=$tmp/tmpdir
export TMPDIR
cd "$tmp/work" || exit 1


# run ARGS...: the wrapper, stdout and stderr to $tmp/out and $tmp/err
# (the outer 2>/dev/null takes the shell's own "Terminated").
run() {
	{ "$wrapper" "$@" >"$tmp/out" 2>"$tmp/err" </dev/null; } 2>/dev/null
	st=$?
}
expect_status() {
	if [ "$st" -eq "$2" ]; then ok; else ko "$1: exit status $st, expected $2"; fi
}
# wait_for FILE: up to 10 s for a program to say it is ready.
wait_for() {
	i=0
	while [ ! -s "$1" ] && [ $i -lt 100 ]; do
		sleep 0.1 2>/dev/null || sleep 1
		i=$((i + 1))
	done
	[ -s "$1" ]
}

# Exit status passes through.
run sh -c 'exit 3'
expect_status "exit 3" 3
run true
expect_status "exit 0" 0

# Death by signal: the summary first, then the same signal.
run sh -c 'kill -TERM $$'
expect_status "killed by TERM" 143
if grep -q '^cgprobe: ' "$tmp/err"; then ok; else ko "killed by TERM: no summary"; fi
run sh -c 'kill -KILL $$'
expect_status "killed by KILL" 137
if command -v perl >/dev/null 2>&1; then
	got=$(perl -e 'system @ARGV; print $? & 127' "$wrapper" -q sh -c 'kill -TERM $$' 2>/dev/null)
	if [ "$got" = 15 ]; then ok; else ko "wrapper not killed by SIGTERM itself (signal '$got')"; fi
else
	skip "death by signal seen by a parent (no perl)"
fi

# Usage errors: one line, then the usage, status 2.
for args in '' '--bogus true' '--min-bytes x true' '--min-bytes=-1 true' '--flush-ms 1.5 true' '--flush-ms 0 true' \
	'--flush-ms' '-o' '--output= true' '--tags novalue true' '--tags =v true' '--quiet=1 true' \
	'--only= true' '-x true'; do
	# shellcheck disable=SC2086 # each case is a list of words
	run $args
	if [ "$st" -eq 2 ] && [ "$(wc -l <"$tmp/err")" -eq 2 ] && head -n 1 "$tmp/err" | grep -q '^cgprobe: ' &&
		sed -n 2p "$tmp/err" | grep -q '^usage: cgprobe '; then
		ok
	else
		ko "usage error '$args': status $st"
	fi
done
run --help
if [ "$st" -eq 0 ] && grep -q 'statically linked' "$tmp/out"; then ok; else ko "--help"; fi
run --version
if [ "$st" -eq 0 ] && grep -q '^cgprobe [0-9]' "$tmp/out"; then ok; else ko "--version"; fi

# PROGRAM look-up, as a shell does it.
run cgprobe-no-such-program
expect_status "missing program" 127
run ./no-such-file
expect_status "missing path" 127
printf 'echo hi\n' >not-executable
run ./not-executable
expect_status "not executable" 126
run /
expect_status "directory" 126
mkdir -p bin1 bin2
printf '#!/bin/sh\necho one\n' >bin1/tool
printf '#!/bin/sh\necho two\n' >bin2/tool
chmod +x bin2/tool
PATH=$tmp/work/bin1:$tmp/work/bin2 run -q tool
if [ "$st" -eq 0 ] && [ "$(cat "$tmp/out")" = two ]; then ok; else ko "PATH search skips a non-executable file"; fi
PATH=$tmp/work/bin1 run -q tool
expect_status "only a non-executable file in PATH" 126

# A static program is refused without being run.
printf '#include <stdio.h>\nint main(void) { return fopen("ran", "w") == NULL; }\n' >static.c
if gcc -static -o static static.c 2>/dev/null && ./static && [ -f ran ]; then
	rm -f ran
	run ./static
	if [ "$st" -eq 1 ] && grep -q 'statically linked' "$tmp/err" && [ ! -f ran ]; then
		ok
	else
		ko "static program: status $st"
	fi
else
	skip "static program (gcc -static does not work here)"
fi

# -q: only the program's own output.
run -q sh -c 'echo out; echo err >&2'
if [ "$st" -eq 0 ] && [ "$(cat "$tmp/out")" = out ] && [ "$(cat "$tmp/err")" = err ]; then
	ok
else
	ko "-q printed something of its own"
fi

# The summary: each trace's path, which program it is (executable, pid),
# its counts, state and size on disk, each device's peak and when, and the
# command that looks further.
run -o "$tmp/work/abs.%p.cgt" sh -c 'exit 0'
path=$(sed -n "s#^cgprobe: \\($tmp/work/abs\\.[0-9]*\\.cgt\\)\$#\\1#p" "$tmp/err" | head -n 1)
pid=${path##*/abs.}
pid=${pid%.cgt}
if [ "$st" -eq 0 ] && [ -n "$path" ] && [ -f "$path" ] && [ ! -s "$tmp/out" ] &&
	grep -q "^cgprobe:   /.*sh, pid $pid: [0-9,]* allocs\{0,1\}, [0-9,]* frees\{0,1\}; complete; [0-9.]* [KMG]\{0,1\}i\{0,1\}B on disk\$" "$tmp/err" &&
	grep -q '^cgprobe:   peak [0-9.]* [KMG]\{0,1\}i\{0,1\}B on cpu at [0-9.]* [mun]\{0,1\}s' "$tmp/err" &&
	grep -q "^cgprobe: more: .*cgtrace memory $path\$" "$tmp/err"; then
	ok
else
	ko "summary: path, program and pid, counts, size, peak and time, more"
fi
run --bytes -o "$tmp/work/bytes.%p.cgt" sh -c 'exit 0'
path=$(sed -n "s#^cgprobe: \\($tmp/work/bytes\\.[0-9]*\\.cgt\\)\$#\\1#p" "$tmp/err" | head -n 1)
size=$(wc -c <"$path" 2>/dev/null | tr -d ' ')
if [ "$st" -eq 0 ] && [ -n "$size" ] && grep -q "; $size on disk\$" "$tmp/err" &&
	grep -q '^cgprobe:   peak [0-9]* on cpu at ' "$tmp/err"; then
	ok
else
	ko "--bytes: exact sizes ($size on disk expected)"
fi
# Here nothing is that large: the trace is still shown, with the reason.
run --min-bytes 4096 -o "$tmp/work/min.%p.jsonl" sh -c 'exit 0'
if [ "$st" -eq 0 ] && grep -q '^cgprobe:   allocations under 4,096 B not recorded (--min-bytes)' "$tmp/err" &&
	grep -q '^cgprobe: more: .*/min\.[0-9]*\.jsonl$' "$tmp/err"; then
	ok
else
	ko "--min-bytes: the summary says what the peak leaves out"
fi
run -o "$tmp/work/nomin.%p.jsonl" sh -c 'exit 0'
if grep -q 'not recorded' "$tmp/err"; then ko "no --min-bytes, yet a note on what is left out"; else ok; fi
# What the run took, from the figures the trace ended with (docs/probe.md).
size_re='[0-9.]* [KMG]\{0,1\}i\{0,1\}B'
if grep -q "^cgprobe:   memory: peak RSS $size_re, of which the probe's $size_re (stack tables $size_re)\$" "$tmp/err"; then
	ok
else
	ko "summary: the peak RSS and the probe's share"
fi
# A name ending .jsonl is JSONL text, any other the compact encoding (its magic first).
jsonl=$(sed -n "s#^cgprobe: \\($tmp/work/nomin\\.[0-9]*\\.jsonl\\)\$#\\1#p" "$tmp/err" | head -n 1)
if [ -n "$jsonl" ] && [ "$(head -c 15 "$jsonl")" = '{"kind":"meta",' ] &&
	[ "$(od -An -c -N 8 "$path" | tr -d ' ')" = '211CGTRACE' ]; then
	ok
else
	ko "encodings: $jsonl JSONL, $path compact"
fi

# Past 20 traces the 20 largest are summarised: a launcher's many small
# processes do not hide the one that matters, started last here.
run sh -c 'i=0; while [ $i -lt 24 ]; do sh -c :; i=$((i + 1)); done; awk "BEGIN { for (i = 0; i < 20000; i++) a[i] = i }"'
big=$(sed -n 's#^cgprobe: \(.*/cgprobe\.[a-z]*awk\.[0-9]*\.cgt\)$#\1#p' "$tmp/err")
# Of the 20, the small ones (the shells) fold into one line, as a job's summary folds them.
shown=$(grep -c '^cgprobe: /.*\.cgt$' "$tmp/err")
folded=$(sed -n 's/^cgprobe: \([0-9]*\) processes with a peak under 64\.0 KiB, [0-9.]* [KMG]*i*B of peaks in all: .*\.cgt, .*/\1/p' "$tmp/err")
if [ "$st" -eq 0 ] && [ -n "$big" ] && [ "$((shown + ${folded:-100}))" -eq 20 ] && [ "${folded:-0}" -ge 10 ] &&
	grep -q '^cgprobe: \.\.\. and [0-9]* smaller traces not summarised' "$tmp/err" &&
	grep -q "^cgprobe: more: .*cgtrace memory $big (or any trace above)\$" "$tmp/err"; then
	ok
else
	ko "many traces: the largest summarised, the small folded, the largest in the more: line"
fi
rm -f ./*.cgt

# A trace with no allocation is counted, not shown as a result; a process
# that forked and then exec'd leaves no trace of its own in between.
printf 'int main(void) { return 0; }\n' >nop.c
if gcc -o nop nop.c 2>/dev/null; then
	rm -f ./*.cgt
	run ./nop
	if [ "$st" -eq 0 ] && grep -q '^cgprobe: 1 trace recorded no allocation: .*/cgprobe\.nop\.[0-9]*\.cgt$' "$tmp/err" &&
		! grep -q 'more:' "$tmp/err"; then
		ok
	else
		ko "an empty trace reported as a result"
	fi
	rm -f ./*.cgt
	if command -v timeout >/dev/null 2>&1; then
		run timeout 100 ./nop
		n_traces=$(find . -maxdepth 1 -name "*.cgt" | wc -l)
		if [ "$st" -eq 0 ] && [ "$n_traces" -eq 2 ] && [ "$(grep -c 'more:' "$tmp/err")" -eq 1 ] &&
			grep -q '^cgprobe: more: .*cgtrace memory .*/cgprobe\.timeout\.[0-9]*\.cgt$' "$tmp/err" &&
			grep -q '^cgprobe: 1 trace recorded no allocation: .*/cgprobe\.nop\.[0-9]*\.cgt$' "$tmp/err" &&
			! grep -q 'not there' "$tmp/err"; then
			ok
		else
			ko "fork then exec: $n_traces traces, expected timeout's and nop's"
		fi
		rm -f ./*.cgt
	else
		skip "fork then exec (no timeout)"
	fi
else
	skip "empty traces (no gcc)"
fi
run --output=rel.%p.jsonl sh -c :
if grep -q "^cgprobe: $PWD/rel\\.[0-9]*\\.jsonl\$" "$tmp/err"; then ok; else ko "relative -o taken from the current directory"; fi
run --only cgprobe-matches-nothing true
if [ "$st" -eq 0 ] && grep -q 'no trace written' "$tmp/err"; then ok; else ko "no trace written"; fi
# A trace that cannot be created or written: the probe's one line says why,
# and nothing more claims that no probe was loaded.
for out in /proc/cgprobe-nope/x.cgt /dev/full; do
	[ "$out" != /dev/full ] || [ -c /dev/full ] || { skip "-o /dev/full (none here)"; continue; }
	run -o "$out" true
	if [ "$st" -eq 0 ] && [ "$(wc -l <"$tmp/err")" -eq 1 ] &&
		grep -Eq "^cgprobe: cannot (create|write) trace $out: .*; not recording" "$tmp/err"; then
		ok
	else
		ko "-o $out: only the probe's reason"
	fi
done
# CGPROBE_QUIET=1 keeps the probe's line back: the wrapper gives the reason.
CGPROBE_QUIET=1 run -o /proc/cgprobe-nope/x.cgt true
if [ "$st" -eq 0 ] && [ "$(wc -l <"$tmp/err")" -eq 1 ] &&
	grep -q '^cgprobe: no trace: cannot create trace /proc/cgprobe-nope/x.cgt: ' "$tmp/err"; then
	ok
else
	ko "CGPROBE_QUIET=1 -o /proc/cgprobe-nope/x.cgt: the reason, once"
fi

# What PROGRAM gets: its arguments and stdin intact, the probe's settings.
run -q sh -c 'printf "%s|" "$@"' sh 'a b' '' '*' '$x' '-o'
if [ "$(cat "$tmp/out")" = 'a b||*|$x|-o|' ]; then ok; else ko "arguments: $(cat "$tmp/out")"; fi
got=$(printf 'in\n' | "$wrapper" -q cat 2>/dev/null)
if [ "$got" = in ]; then ok; else ko "stdin: '$got'"; fi
run -q --min-bytes 010 --flush-ms=7 --tags a=1 --tags=b=2 --only 'sh*' --only=cat --no-follow \
	sh -c 'echo "$CGPROBE_MIN_BYTES|$CGPROBE_FLUSH_MS|$CGPROBE_TAGS|$CGPROBE_ONLY|$CGPROBE_FOLLOW"'
if [ "$(cat "$tmp/out")" = '10|7|a=1,b=2|sh*,cat|0' ]; then ok; else ko "probe settings: $(cat "$tmp/out")"; fi
LD_PRELOAD=/nonexistent/libuser.so run -q sh -c 'echo "$LD_PRELOAD"'
case $(cat "$tmp/out") in
/*/"${CGPROBE_LIB##*/}"[\ :]/nonexistent/libuser.so) ok ;;
*) ko "LD_PRELOAD: $(cat "$tmp/out")" ;;
esac
run -q env
if grep -q '^LD_PRELOAD=' "$tmp/out"; then ok; else ko "LD_PRELOAD not in PROGRAM's environment"; fi
# The build's Python module goes last on PYTHONPATH: 'import cgprobe' works
# in PROGRAM, and a folder the caller names comes before it; the module's
# _site folder (its sitecustomize, which chains to the next one) first.
py=$(cd -P "$build/python" && pwd -P)
(unset PYTHONPATH; run -q sh -c 'echo "$PYTHONPATH"'
 [ "$(cat "$tmp/out")" = "$py/cgprobe/_site:$py" ]) && ok ||
	ko "PYTHONPATH: $(cat "$tmp/out"), not $py/cgprobe/_site:$py"
PYTHONPATH=/opt/mine run -q sh -c 'echo "$PYTHONPATH"'
if [ "$(cat "$tmp/out")" = "$py/cgprobe/_site:/opt/mine:$py" ]; then ok; else
	ko "PYTHONPATH kept first: $(cat "$tmp/out")"
fi
# NVTX's injection is the probe, unless one is set already (Nsight's wins).
(unset NVTX_INJECTION64_PATH; run -q sh -c 'echo "$NVTX_INJECTION64_PATH"'
 case $(cat "$tmp/out") in /*/"${CGPROBE_LIB##*/}") exit 0 ;; *) exit 1 ;; esac) && ok ||
	ko "NVTX_INJECTION64_PATH: $(cat "$tmp/out")"
NVTX_INJECTION64_PATH=/opt/nsight/libinj.so run -q sh -c 'echo "$NVTX_INJECTION64_PATH"'
if [ "$(cat "$tmp/out")" = /opt/nsight/libinj.so ]; then ok; else ko "NVTX_INJECTION64_PATH kept: $(cat "$tmp/out")"; fi
if [ -r /proc/self/status ] && env --default-signal=INT true 2>/dev/null; then
	# A shell starts background jobs with INT ignored; PROGRAM must not inherit that.
	env --default-signal=INT,QUIT "$wrapper" -q sh -c 'sed -n "s/^SigIgn:[[:space:]]*//p" /proc/$$/status' \
		>"$tmp/out" 2>"$tmp/err" </dev/null
	mask=$(cat "$tmp/out")
	low=${mask#"${mask%??}"}
	if [ -n "$mask" ] && [ $((0x$low & 6)) -eq 0 ]; then ok; else ko "PROGRAM ignores INT or QUIT (SigIgn $mask)"; fi
else
	skip "INT disposition (no /proc or no env --default-signal)"
fi

# Signals sent to the wrapper reach PROGRAM. The programs give up after
# 10 or 20 s, so a signal not passed on fails the test instead of hanging it.
linger='echo ready >"$1"; i=0; while [ $i -lt 20 ]; do sleep 1; i=$((i + 1)); done'
# forwarded NAME SIGNAL STATUS [LAUNCHER...] -- SCRIPT: runs SCRIPT under
# the wrapper (after LAUNCHER), sends SIGNAL to the wrapper once SCRIPT is
# ready, and expects STATUS.
forwarded() {
	name=$1 sig=$2 want=$3
	shift 3
	launch=
	while [ "$1" != -- ]; do
		launch="$launch $1"
		shift
	done
	shift
	rm -f ready
	# shellcheck disable=SC2086 # the launcher is a list of words
	$launch "$wrapper" -q sh -c "$1" sh "$tmp/work/ready" >/dev/null 2>"$tmp/err" &
	w=$!
	if wait_for ready; then
		kill -s "$sig" "$w"
		wait "$w" 2>/dev/null
		st=$?
		expect_status "$name" "$want"
	else
		kill -KILL "$w" 2>/dev/null
		ko "$name: program never started"
	fi
}
forwarded "TERM forwarded" TERM 143 -- 'echo ready >"$1"; exec sleep 10'
# Under nohup (or any parent that ignores HUP) the program starts with HUP
# ignored and its shell cannot trap it: HUP set back to its default first.
if env --default-signal=HUP true 2>/dev/null; then
	forwarded "HUP forwarded to a program that handles it" HUP 7 env --default-signal=HUP -- \
		"trap 'exit 7' HUP; $linger"
else
	skip "HUP forwarding (no env --default-signal)"
fi
# INT is passed on only when it cannot have come from a terminal, so the
# wrapper runs in a session of its own.
if command -v setsid >/dev/null 2>&1 && env --default-signal=INT true 2>/dev/null; then
	forwarded "INT forwarded" INT 9 setsid env --default-signal=INT -- "trap 'exit 9' INT; $linger"
else
	skip "INT forwarding (no setsid or env --default-signal)"
fi

# No manifest left behind.
if [ -z "$(ls -A "$tmp/tmpdir")" ]; then ok; else ko "left in TMPDIR: $(ls -A "$tmp/tmpdir")"; fi

finish

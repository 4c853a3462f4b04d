#!/bin/sh
# The compact encoding read by a second, independent reader: the Python
# decoder tests/compact_decode.py, written from docs/compact-format.md alone.
# Every trace of tests/golden/traces and tests/fuzz/corpus that cgtrace
# exports, and a recording of the probe, is encoded by cgtrace (stored, zstd
# at the default level, small blocks), decoded in Python, and compared record
# by record, as JSON values, with cgtrace's own stream-order export; so are
# the probe's own compact recording and cut copies of a compact trace.
#   test-compact-python.sh CGTRACE LIBCGPROBE THREADS CUDA_FIXTURES
# THREADS: the built tests/preload/threads program; CUDA_FIXTURES: the fake
# CUDA libraries and programs of tests/cuda. Exits 77 (skipped) when
# python3, or both the zstandard module and the zstd command, are missing,
# or when CGTRACE cannot write the compact encoding.
set -u
here=$(dirname "$0")
# shellcheck source=tests/lib/sh-check.sh
. "$here/lib/sh-check.sh"
need_args 4 "test-compact-python.sh CGTRACE LIBCGPROBE THREADS CUDA_FIXTURES" "$@"
cgtrace=$(abs "$1")
lib=$(abs "$2")
threads=$(abs "$3")
fixtures=$(abs "$4")
here=$(abs "$here")
decoder=$here/compact_decode.py
skip_unless_built "$cgtrace"
command -v python3 >/dev/null 2>&1 || { echo "SKIP: no python3"; exit 77; }
python3 -c 'import json, zlib' >/dev/null 2>&1 || { echo "SKIP: python3 does not run"; exit 77; }
if ! python3 -c 'import zstandard' >/dev/null 2>&1 && ! command -v zstd >/dev/null 2>&1; then
	echo "SKIP: neither python3's zstandard module nor the zstd command"
	exit 77
fi
if ! "$cgtrace" export --help 2>/dev/null | grep -q compact; then
	echo "SKIP: this cgtrace has no export --format compact"
	exit 77
fi
unset CGPROBE_OUTPUT CGPROBE_MIN_BYTES CGPROBE_ONLY CGPROBE_FOLLOW CGPROBE_FLUSH_MS CGPROBE_TAGS

make_tmp
: >"$tmp/err"

# agree NAME COMPACT JSONL: the Python reader gives JSONL's records from
# COMPACT, every rule checked.
agree() {
	if python3 "$decoder" --check --compare "$3" "$2" 2>"$tmp/err"; then ok; else ko "$1"; fi
}

# round_trip NAME TRACE: TRACE encoded by cgtrace at each level, read back.
round_trip() {
	"$cgtrace" export --order stream "$2" >"$tmp/want.jsonl" 2>/dev/null || return 0
	# Stored blocks, the default zstd level, and blocks of 256 raw bytes
	# (block state reset again and again).
	for opts in "--level 0" "" "--block-raw 256"; do
		rm -f "$tmp/c.cgt"
		# shellcheck disable=SC2086 # a list of words
		if ! "$cgtrace" export --format compact $opts "$2" -o "$tmp/c.cgt" 2>"$tmp/err"; then
			ko "$1: cgtrace export --format compact $opts"
			continue
		fi
		agree "$1 (compact $opts)" "$tmp/c.cgt" "$tmp/want.jsonl"
	done
	n_traces=$((n_traces + 1))
}

# A probe built with AddressSanitizer cannot be preloaded into a program
# built without it (the sanitizer build runs this suite): its recordings
# are skipped there, and run in every other build.
probe_usable=1
if [ -f "$lib" ] && grep -q __asan_init "$lib"; then
	probe_usable=0
	skip "recordings of the probe: $lib is built with AddressSanitizer"
fi

n_traces=0
for t in "$here"/golden/traces/*.jsonl "$here"/fuzz/corpus/*.jsonl; do
	round_trip "${t#"$here"/}" "$t"
done
# Most of them export: not a loop that checked nothing.
if [ "$n_traces" -ge 20 ]; then ok; else ko "only $n_traces traces exported"; fi

# record NAME LIBPATH PROGRAM ARGS...: PROGRAM run under the probe, default
# settings (compact, zstd blocks) but for a flush every millisecond (several
# blocks); LIBPATH its LD_LIBRARY_PATH. Sets $rec, the trace written, and
# $tmp/rec.jsonl, cgtrace's export of it; checks it holds memory records.
record() {
	name=$1 libpath=$2
	shift 2
	mkdir "$tmp/$name" || exit 1
	(cd "$tmp/$name" && LD_LIBRARY_PATH=$libpath CGPROBE_OUTPUT="$tmp/$name/trace.%p" \
		CGPROBE_FLUSH_MS=1 LD_PRELOAD=$lib "$@" >/dev/null 2>"$tmp/err")
	rec=$(find "$tmp/$name" -name 'trace.*' | head -n 1)
	n=0
	if [ -n "$rec" ] && "$cgtrace" export --order stream "$rec" >"$tmp/rec.jsonl" 2>"$tmp/err"; then
		n=$(grep -c '"kind":"memory"' "$tmp/rec.jsonl")
	fi
	if [ "$n" -ge "$min_records" ]; then ok; else ko "$name: $n memory records, not $min_records"; fi
	[ -n "$rec" ] || return 0
	if [ "$(head -c 8 "$rec" | od -An -tx1 | tr -d ' \n')" = 8943475452414345 ]; then
		agree "$name, as the probe wrote it" "$rec" "$tmp/rec.jsonl"
	else
		skip "$name: the probe's recording is not compact"
	fi
	round_trip "$name, exported" "$rec"
}

# cut_copies COMPACT: cut copies of COMPACT; both readers keep the same
# complete blocks and give the same warning, or both find no meta record.
cut_copies() {
	size=$(wc -c <"$1" | tr -d ' ')
	for cut in 5 16 17 $((size / 3)) $((size / 2)) $((size - 1)); do
		head -c "$cut" "$1" >"$tmp/cut.cgt"
		"$cgtrace" export --order stream "$tmp/cut.cgt" >"$tmp/cut.jsonl" 2>"$tmp/cut.err"
		st=$?
		python3 "$decoder" --check "$tmp/cut.cgt" >/dev/null 2>"$tmp/err"
		pst=$?
		warning=$(grep 'trace truncated after' "$tmp/err")
		if [ $st -ne $pst ]; then
			ko "cut at $cut of $size: cgtrace exits $st, Python $pst ($(cat "$tmp/cut.err"))"
		elif [ $st -ne 0 ]; then
			ok
		elif [ -n "$warning" ] && grep -Fqx "$warning" "$tmp/cut.err" &&
			python3 "$decoder" --compare "$tmp/cut.jsonl" "$tmp/cut.cgt" 2>"$tmp/err"; then
			ok
		else
			ko "cut at $cut of $size: other records or warning ($(cat "$tmp/cut.err"))"
		fi
	done
}

if [ "$probe_usable" = 1 ] && [ -f "$lib" ] && [ -x "$threads" ]; then
	min_records=8000
	record threads "" "$threads" 4 2000
	rm -f "$tmp/blocks.cgt"
	if [ -n "$rec" ] &&
		"$cgtrace" export --format compact --block-raw 4096 "$rec" -o "$tmp/blocks.cgt" 2>"$tmp/err"; then
		cut_copies "$tmp/blocks.cgt"
	else
		ko "the threads recording in blocks of 4 KiB"
	fi
else
	skip "a recording of the probe ($lib or $threads not built, or not preloadable here)"
fi

# Device memory, managed and vmm: ids, device checkpoints and identities,
# recorded on the fake CUDA libraries (tests/cuda).
if [ "$probe_usable" = 1 ] && [ -f "$lib" ] && [ -x "$fixtures/rt-shared-gcc" ] && [ -x "$fixtures/drv-dlopen" ]; then
	min_records=10
	record cuda-runtime "$fixtures/lib" "$fixtures/rt-shared-gcc"
	if grep -q '"managed":true' "$tmp/rec.jsonl" && grep -q '"device_memory"' "$tmp/rec.jsonl"; then
		ok
	else
		ko "the fake CUDA runtime's recording: no managed alloc or no device_memory"
	fi
	record cuda-driver "$fixtures/lib" "$fixtures/drv-dlopen"
	if grep -q '"tensor_id":"vmm:' "$tmp/rec.jsonl"; then ok; else ko "the driver's: no vmm: id"; fi
else
	skip "recordings on the fake CUDA libraries (not built in $fixtures, or the probe not preloadable here)"
fi

finish

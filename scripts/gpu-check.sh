#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# gpu-check.sh [BUILD_DIR] [OUT_DIR]
# gpu-check.sh --build-only BUILD_DIR
#
# The check of CUDA device memory recording, for a machine with an NVIDIA GPU.
# Programs that allocate known amounts of device memory run twice -- natively
# and with BUILD_DIR/preload/libcgprobe.so preloaded -- and the trace's device
# peak (cgtrace memory --json) is compared with what the program says it
# allocated:
#
#   alloc-static   scripts/gpu/alloc.cu, nvcc's default static runtime (which
#                  reaches the driver only through cuGetProcAddress)
#   alloc-shared   the same, -cudart shared
#   vmm            scripts/gpu/vmm.c: driver API, cuMemCreate/cuMemMap (one
#                  handle mapped twice, released while mapped), cuMemAlloc
#                  directly, through dlsym and through cuGetProcAddress
#   torch-default, torch-expandable
#                  scripts/gpu/torch_alloc.py, default caching allocator and
#                  PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True; the trace's
#                  peak against torch.cuda.max_memory_reserved(), within 5%
#   jax-platform   scripts/gpu/jax_alloc.py with XLA_PYTHON_CLIENT_ALLOCATOR=
#                  platform; figures reported (JAX adds its own buffers), fails
#                  only without device records
#
# A program fails when its exit status differs from the native run's, a
# trace is invalid or incomplete, the device peak is more than 1% off (5% for
# PyTorch), device records, a device identity (cgprobe_device_uuid) or some of the
# program's allocations or frees are missing, or device bytes are left live at
# the end.  A framework that cannot be imported or has no GPU is skipped with
# the reason.
#
# Programs are built with nvcc when it is on the machine (into OUT_DIR/bin),
# else taken from BUILD_DIR/gpu-check/, which `--build-only BUILD_DIR` fills on
# a machine with nvcc but no GPU (copy BUILD_DIR with it to the GPU machine;
# BUILD_DIR/gpu-check/lib holds the shared libraries the programs, the probe
# and cgtrace need, for a machine without the CUDA toolkit).
#
# OUT_DIR (default: a new temporary folder, kept) gets, per program, the
# native and probed output, the traces and cgtrace's answers, and summary.txt
# with the final table.  Nothing is written anywhere else, nothing installed.
#
# Environment: GPU_CHECK_TIMEOUT (seconds per run, default 300),
# GPU_CHECK_PYTHON (default python3), GPU_CHECK_PREBUILT=1 (use
# BUILD_DIR/gpu-check even when nvcc is there), GPU_CHECK_NVCC_ARCH (nvcc
# target flags), GPU_CHECK_MIN_BYTES (CGPROBE_MIN_BYTES for the Python runs).
#
# Exit status: 0 nothing failed, 1 something failed, 2 usage or missing build,
# 77 no GPU on this machine (nvidia-smi missing or listing no device).

set -u
export LC_ALL=C

here=$(cd "$(dirname "$0")" && pwd)
src=$here/gpu
programs=(alloc-static alloc-shared vmm)

usage() {
	cat >&2 <<EOF
usage: $0 [BUILD_DIR] [OUT_DIR]      run the check (default BUILD_DIR: the source tree's build/)
       $0 --build-only BUILD_DIR     compile the test programs into BUILD_DIR/gpu-check/
EOF
	exit 2
}

mode=run
case "${1:-}" in
-h | --help) usage ;;
--build-only)
	[ "$#" -eq 2 ] || usage
	mode=build
	build=$2
	out=
	;;
-*) usage ;;
*)
	[ "$#" -le 2 ] || usage
	build=${1:-$here/../build}
	out=${2:-}
	;;
esac

limit=${GPU_CHECK_TIMEOUT:-300}
python=${GPU_CHECK_PYTHON:-python3}
arch_flags=${GPU_CHECK_NVCC_ARCH:--gencode arch=compute_75,code=compute_75 -gencode arch=compute_90,code=sm_90}
case "$limit" in '' | *[!0-9]*) echo "$0: GPU_CHECK_TIMEOUT must be a number of seconds" >&2 && exit 2 ;; esac

# ---------------------------------------------------------------------------
# The CUDA toolkit, when there is one.

nvcc=
for c in "$(command -v nvcc 2>/dev/null)" "${CUDA_HOME:-}/bin/nvcc" "${CUDA_PATH:-}/bin/nvcc" \
	/usr/local/cuda/bin/nvcc; do
	if [ -n "$c" ] && [ "$c" != /bin/nvcc ] && [ -x "$c" ]; then
		nvcc=$c
		break
	fi
done
cuda_home='' cuda_inc='' cuda_lib='' cuda_stubs=''
if [ -n "$nvcc" ]; then
	cuda_home=$(cd "$(dirname "$(readlink -f "$nvcc")")/.." && pwd)
	for d in "$cuda_home/include" "$cuda_home/targets/x86_64-linux/include"; do
		[ -e "$d/cuda.h" ] && cuda_inc=$d && break
	done
	for d in "$cuda_home/lib64" "$cuda_home/targets/x86_64-linux/lib" "$cuda_home/lib"; do
		[ -d "$d" ] && cuda_lib=$d && break
	done
	for d in "$cuda_lib/stubs" "$cuda_home/targets/x86_64-linux/lib/stubs"; do
		[ -e "$d/libcuda.so" ] && cuda_stubs=$d && break
	done
fi

# build_programs DEST: compiles the test programs into DEST (log: DEST/build.log).
# Sets built[NAME] to each binary made.
declare -A built=()
build_programs() {
	local dest=$1 log=$1/build.log cc=
	mkdir -p "$dest" || return 1
	: >"$log"
	# shellcheck disable=SC2206 # the arch flags are meant to split
	local arch=($arch_flags)
	# $ORIGIN/lib first (BUILD_DIR/gpu-check/lib), then the toolkit's own.
	# shellcheck disable=SC2016 # $ORIGIN is for the dynamic linker
	local rpath='$ORIGIN/lib'
	[ -n "$cuda_lib" ] && rpath="$rpath:$cuda_lib"

	echo "+ $nvcc -O2 ${arch[*]} -o $dest/alloc-static $src/alloc.cu" >>"$log"
	if "$nvcc" -O2 "${arch[@]}" -o "$dest/alloc-static" "$src/alloc.cu" >>"$log" 2>&1; then
		built[alloc-static]=$dest/alloc-static
	fi
	echo "+ $nvcc -O2 ${arch[*]} -cudart shared -Xlinker -rpath -Xlinker $rpath -o $dest/alloc-shared $src/alloc.cu" >>"$log"
	if "$nvcc" -O2 "${arch[@]}" -cudart shared -Xlinker -rpath -Xlinker "$rpath" \
		-o "$dest/alloc-shared" "$src/alloc.cu" >>"$log" 2>&1; then
		built[alloc-shared]=$dest/alloc-shared
	fi

	# vmm.c is plain C: the host compiler, against the driver's stub (never
	# an rpath to the stub: the real libcuda.so.1 must load at run time).
	local inc=() lnk=()
	[ -n "$cuda_inc" ] && inc=(-I "$cuda_inc")
	[ -n "$cuda_stubs" ] && lnk=(-L "$cuda_stubs")
	[ -n "$cuda_lib" ] && lnk+=(-L "$cuda_lib")
	for c in "${CC:-}" cc gcc clang; do
		[ -n "$c" ] && command -v "$c" >/dev/null 2>&1 && cc=$c && break
	done
	if [ -n "$cc" ]; then
		echo "+ $cc -std=c11 -O2 -Wall -Wextra ${inc[*]} -o $dest/vmm $src/vmm.c ${lnk[*]} -lcuda -ldl" >>"$log"
		"$cc" -std=c11 -O2 -Wall -Wextra "${inc[@]}" -o "$dest/vmm" "$src/vmm.c" "${lnk[@]}" \
			-lcuda -ldl >>"$log" 2>&1 && built[vmm]=$dest/vmm
	else
		echo "+ $nvcc -O2 -x c ${inc[*]} -o $dest/vmm $src/vmm.c ${lnk[*]} -lcuda -ldl" >>"$log"
		"$nvcc" -O2 -x c "${inc[@]}" -o "$dest/vmm" "$src/vmm.c" "${lnk[@]}" -lcuda -ldl \
			>>"$log" 2>&1 && built[vmm]=$dest/vmm
	fi
	local p ok=0
	for p in "${programs[@]}"; do
		if [ -n "${built[$p]:-}" ]; then ok=$((ok + 1)); else echo "build of $p failed (see $log)"; fi
	done
	[ "$ok" -eq "${#programs[@]}" ]
}

# dt_needed FILE: the libraries FILE asks for, and where they resolve ("not found" too).
dt_needed() {
	ldd "$1" 2>/dev/null | awk '$2 == "=>" { print $1, ($3 == "not" ? "not found" : $3) }' |
		grep -v -E '^(linux-vdso|ld-linux)' || true
}

# ---------------------------------------------------------------------------
# --build-only

if [ "$mode" = build ]; then
	if [ -z "$nvcc" ]; then
		echo "$0: --build-only needs nvcc (not on PATH, in \$CUDA_HOME/bin or /usr/local/cuda/bin)" >&2
		exit 2
	fi
	mkdir -p "$build" || exit 2
	build=$(cd "$build" && pwd)
	dest=$build/gpu-check
	echo "gpu-check: building into $dest"
	echo "nvcc: $nvcc ($("$nvcc" --version | tail -n 1))"
	echo "CUDA headers: ${cuda_inc:-none}; driver stub: ${cuda_stubs:-none (linking -lcuda as found)}"
	rm -rf "$dest"
	rc=0
	build_programs "$dest" || rc=1
	# The shared libraries needed on a machine without the toolkit (or
	# without cJSON/zstd): the programs' libcudart, the probe's and cgtrace's.
	mkdir -p "$dest/lib"
	for f in "${built[alloc-shared]:-}" "$build/preload/libcgprobe.so" "$build/cgtrace/cgtrace"; do
		if [ -z "$f" ] || [ ! -e "$f" ]; then continue; fi
		while read -r lib path; do
			case "$lib" in
			libcudart.so* | libzstd.so* | libcjson.so*)
				if [ -e "$path" ]; then cp -L "$path" "$dest/lib/$lib" || rc=1; fi
				;;
			esac
		done < <(dt_needed "$f")
	done
	echo
	for p in "${programs[@]}"; do
		f=$dest/$p
		if [ ! -e "$f" ]; then
			echo "  $p: NOT BUILT"
			continue
		fi
		needs=$(dt_needed "$f" | awk '{ print $1 }' | tr '\n' ' ')
		case "$p" in
		alloc-static) grep -q libcudart <<<"$needs" && { echo "  $p: links libcudart dynamically, expected the static runtime"; rc=1; } ;;
		alloc-shared) grep -q libcudart <<<"$needs" || { echo "  $p: does not link libcudart.so"; rc=1; } ;;
		vmm) grep -q 'libcuda\.so\.1' <<<"$needs" || { echo "  $p: does not link libcuda.so.1"; rc=1; } ;;
		esac
		printf '  %-19s %9d bytes  needs: %s\n' "$p" "$(stat -c %s "$f")" "$needs"
	done
	for f in "$dest"/lib/*; do
		[ -e "$f" ] && printf '  lib/%-15s %9d bytes\n' "$(basename "$f")" "$(stat -c %s "$f")"
	done
	echo "  build log: $dest/build.log"
	if [ "$rc" -ne 0 ]; then
		echo "gpu-check: --build-only FAILED"
		sed 's/^/    /' "$dest/build.log"
		exit 1
	fi
	echo "gpu-check: built; carry $build (with gpu-check/) to the GPU machine and run $0 $build"
	exit 0
fi

# ---------------------------------------------------------------------------
# The machine.

# The same environment for both runs; nothing inherited may probe the native
# run or steer the probed one.
unset LD_PRELOAD CGPROBE_OUTPUT CGPROBE_QUIET CGPROBE_MIN_BYTES CGPROBE_ONLY CGPROBE_FOLLOW \
	CGPROBE_FLUSH_MS CGPROBE_TAGS CGPROBE_ENTRYPOINT CGPROBE_PHASE CGPROBE_CAPTURE_STEP \
	CGPROBE_CORRELATION_ID CGPROBE_DEVICE CGPROBE_MANIFEST PYTORCH_CUDA_ALLOC_CONF

echo "== gpu-check on $(uname -n), $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
gpu_reason=
if ! command -v nvidia-smi >/dev/null 2>&1; then
	gpu_reason="nvidia-smi not found"
	echo "GPU:     none ($gpu_reason)"
else
	gpus=$(timeout 60 nvidia-smi -L 2>&1)
	if ! grep -q '^GPU [0-9]' <<<"$gpus"; then
		gpu_reason="nvidia-smi lists no device: $(head -n 1 <<<"$gpus")"
		echo "GPU:     none ($gpu_reason)"
	else
		while IFS= read -r l; do echo "GPU:     $l"; done <<<"$gpus"
		drv=$(timeout 60 nvidia-smi --query-gpu=driver_version,memory.total,memory.used \
			--format=csv,noheader 2>/dev/null | head -n 1)
		echo "driver:  ${drv:-?} (version, total, used)"
	fi
fi
if [ -n "$nvcc" ]; then
	echo "nvcc:    $nvcc ($("$nvcc" --version 2>/dev/null | tail -n 1))"
else
	echo "nvcc:    not found"
fi

export PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1

torch_ok=0 jax_ok=0 torch_why='' jax_why=''
# probe_py CODE: runs CODE; sets py_rc and py_msg (its "RESULT " line, or the
# last line it printed when it failed).  Nothing is written to disk.
probe_py() {
	local o
	o=$(timeout 180 "$python" -c "$1" 2>&1) && py_rc=0 || py_rc=$?
	py_msg=$(grep '^RESULT ' <<<"$o" | tail -n 1)
	py_msg=${py_msg#RESULT }
	if [ "$py_rc" -eq 124 ] || [ "$py_rc" -eq 137 ]; then
		py_msg="timed out after 180 s"
	elif [ "$py_rc" -ne 0 ] && [ "$py_rc" -ne 3 ]; then
		py_msg=$(grep -v -e '^[[:space:]]*$' <<<"$o" | tail -n 1)
		py_msg=${py_msg:-exit status $py_rc}
	fi
}
# check_frameworks: whether python3, torch with CUDA and jax with a GPU backend are there.
check_frameworks() {
	if ! command -v "$python" >/dev/null 2>&1; then
		echo "python3: not found"
		torch_why="no $python"
		jax_why="no $python"
		return
	fi
	echo "python3: $(command -v "$python") ($("$python" --version 2>&1))"
	probe_py 'import sys, torch
print("RESULT", torch.__version__, "CUDA", torch.version.cuda)
sys.exit(0 if torch.cuda.is_available() else 3)'
	case "$py_rc" in
	0) torch_ok=1 && echo "torch:   $py_msg, torch.cuda.is_available()" ;;
	3) torch_why="torch $py_msg imports, but torch.cuda.is_available() is False" ;;
	*) torch_why="cannot import torch: $py_msg" ;;
	esac
	[ -n "$torch_why" ] && echo "torch:   $torch_why"
	probe_py 'import os, sys
os.environ.setdefault("XLA_PYTHON_CLIENT_ALLOCATOR", "platform")
os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
import jax
ds = jax.devices()
print("RESULT", jax.__version__, "backends", ",".join(sorted({d.platform for d in ds})))
sys.exit(0 if any(d.platform == "gpu" for d in ds) else 3)'
	case "$py_rc" in
	0) jax_ok=1 && echo "jax:     $py_msg" ;;
	3) jax_why="jax $py_msg: no GPU backend" ;;
	*) jax_why="cannot import jax: $py_msg" ;;
	esac
	[ -n "$jax_why" ] && echo "jax:     $jax_why"
}

if [ -n "$gpu_reason" ]; then
	check_frameworks
	echo "gpu-check: no NVIDIA GPU on this machine ($gpu_reason); nothing checked (exit 77)."
	echo "gpu-check: to prepare binaries for a GPU machine without nvcc: $0 --build-only BUILD_DIR"
	exit 77
fi

# ---------------------------------------------------------------------------
# The build under test.

if [ ! -d "$build" ]; then
	echo "$0: build folder $build not found" >&2
	exit 2
fi
# shellcheck source=scripts/build-tools.sh
. "$here/build-tools.sh"
build_tools "$build"
prebuilt=$build/gpu-check
# Libraries the probe or cgtrace cannot find here come from gpu-check/lib.
probe_ldpath='' cgtrace_ldpath=''
if dt_needed "$probe" | grep -q 'not found'; then
	probe_ldpath=$prebuilt/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
	echo "probe:   some libraries not found; using $prebuilt/lib for probed runs"
fi
if dt_needed "$cgtrace" | grep -q 'not found'; then
	cgtrace_ldpath=$prebuilt/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
fi
cgt() {
	if [ -n "$cgtrace_ldpath" ]; then
		LD_LIBRARY_PATH=$cgtrace_ldpath "$cgtrace" "$@"
	else
		"$cgtrace" "$@"
	fi
}
echo "probe:   $probe"
echo "cgtrace: $cgtrace"

if [ -z "$out" ]; then
	out=$(mktemp -d "${TMPDIR:-/tmp}/cgprobe-gpu-check.XXXXXX") || exit 2
else
	mkdir -p "$out" || exit 2
fi
out=$(cd "$out" && pwd)
echo "out:     $out"
mkdir -p "$out/cache"
export XDG_CACHE_HOME=$out/cache CUDA_CACHE_PATH=$out/cache/nv TRITON_CACHE_DIR=$out/cache/triton \
	TORCHINDUCTOR_CACHE_DIR=$out/cache/inductor MPLCONFIGDIR=$out/cache/mpl TMPDIR=$out/cache
# Only now, with the caches under OUT_DIR: the frameworks start the GPU.
check_frameworks

declare -A bin=() binnote=()
if [ -n "$nvcc" ] && [ "${GPU_CHECK_PREBUILT:-0}" != 1 ]; then
	echo "== building the test programs into $out/bin"
	build_programs "$out/bin"
	for p in "${programs[@]}"; do
		if [ -n "${built[$p]:-}" ]; then
			bin[$p]=${built[$p]}
		elif [ -x "$prebuilt/$p" ]; then
			bin[$p]=$prebuilt/$p
			binnote[$p]="build failed, prebuilt used"
		else
			binnote[$p]="build failed (see $out/bin/build.log)"
		fi
	done
else
	echo "== using prebuilt test programs from $prebuilt"
	for p in "${programs[@]}"; do
		if [ -x "$prebuilt/$p" ]; then
			bin[$p]=$prebuilt/$p
		else
			binnote[$p]="no nvcc and no $prebuilt/$p (make it with --build-only)"
		fi
	done
fi

# ---------------------------------------------------------------------------
# Running and reading traces.

passed=0 failed=0 skipped=0
rows=()

# row NAME STATUS EXPECTED PEAK DIFF COUNTS UUID NOTE
row() {
	rows+=("$(printf '%-17s %-5s %14s %14s %9s %11s %-4s %s' "$@")")
	case "$2" in
	OK) passed=$((passed + 1)) ;;
	FAIL) failed=$((failed + 1)) ;;
	*) skipped=$((skipped + 1)) ;;
	esac
	echo "   => $2${8:+: $8}"
}

json_num() { # KEY TEXT: the first number under KEY in compact JSON
	local m
	m=$(grep -o "\"$1\":[0-9]*" <<<"$2" | head -n 1)
	printf '%s' "${m#*:}"
}

yes_no() { # VALUE: yes when VALUE is not empty
	if [ -n "$1" ]; then echo yes; else echo no; fi
}

mib() { # BYTES: in MiB, one decimal
	local t=$(($1 * 10 / 1048576))
	printf '%d.%d MiB' $((t / 10)) $((t % 10))
}

pct() { # TRACE EXPECTED: the signed difference in percent, two decimals
	local t=$1 e=$2 d s=+
	if [ "$e" -le 0 ]; then
		printf 'n/a'
		return
	fi
	d=$((t - e))
	[ "$d" -lt 0 ] && s=- && d=$((-d))
	d=$(((d * 10000 + e / 2) / e))
	printf '%s%d.%02d%%' "$s" $((d / 100)) $((d % 100))
}

# verdict NAME EXPECTED WHY NOTE: a framework check's result row from the
# last analyse: FAIL with WHY when there is one, else OK with NOTE.
verdict() {
	local status=OK note=$4
	[ -z "$3" ] || status=FAIL note=$3
	row "$1" "$status" "${2:--}" "$a_peak" "$diff" "${a_allocs}/${a_frees}" "$(yes_no "$a_uuid")" "$note"
}

ratio() { # TRACE EXPECTED: TRACE / EXPECTED, four decimals
	local r=$(($1 * 10000 / $2))
	printf '%d.%04d' $((r / 10000)) $((r % 10000))
}

within() { # TRACE EXPECTED PERCENT: true when |TRACE - EXPECTED| <= PERCENT% of EXPECTED
	local d=$(($1 - $2))
	[ "$d" -lt 0 ] && d=$((-d))
	[ $((d * 100)) -le $(($2 * $3)) ]
}

# run_pair NAME SUFFIX [VAR=VALUE...] -- COMMAND...: runs COMMAND natively and
# probed (traces OUT_DIR/NAME/cgprobe.%e.%p.jsonl[SUFFIX]).  Sets rc_native,
# rc_probed, dir.
run_pair() {
	local name=$1 suffix=$2 envs=()
	shift 2
	while [ "$#" -gt 0 ] && [ "$1" != -- ]; do
		envs+=("$1")
		shift
	done
	shift
	dir=$out/$name
	rm -rf "$dir"
	mkdir -p "$dir"
	echo "-- $name: $*${envs[*]:+ (${envs[*]})}"
	env ${envs[@]+"${envs[@]}"} timeout -k 10 "$limit" "$@" >"$dir/native.out" 2>"$dir/native.err"
	rc_native=$?
	local pre=(LD_PRELOAD="$probe" CGPROBE_OUTPUT="$dir/cgprobe.%e.%p.jsonl$suffix")
	[ -n "$probe_ldpath" ] && pre+=(LD_LIBRARY_PATH="$probe_ldpath")
	env ${envs[@]+"${envs[@]}"} timeout -k 10 "$limit" env "${pre[@]}" "$@" \
		>"$dir/probed.out" 2>"$dir/probed.err"
	rc_probed=$?
	echo "   exit status: native $rc_native, probed $rc_probed"
	if grep -q '^cgprobe: ' "$dir/probed.err"; then
		echo "   the probe said:"
		grep '^cgprobe: ' "$dir/probed.err" | head -n 5 | sed 's/^/     /'
	fi
}

# analyse: reads every trace in $dir; the one with the largest CUDA peak is the
# program's.  Sets a_ntraces a_invalid a_trace a_device a_peak a_allocs
# a_frees a_complete a_final a_uuid a_meminfo a_devices.
analyse() {
	local t entry peak best=-1 devrec
	a_ntraces=0 a_invalid=0 a_trace='' a_device='' a_peak=0 a_allocs=0 a_frees=0
	a_complete='?' a_final='?' a_uuid='' a_meminfo=0 a_devices=''
	for t in "$dir"/cgprobe.*.jsonl "$dir"/cgprobe.*.jsonl.zst; do
		[ -e "$t" ] || continue
		a_ntraces=$((a_ntraces + 1))
		[ -n "$a_trace" ] || a_trace=$t
		if ! cgt validate "$t" >"$t.validate.txt" 2>&1; then
			a_invalid=$((a_invalid + 1))
			echo "   INVALID: $(head -n 3 "$t.validate.txt" | tr '\n' ' ')"
		fi
		cgt memory --json "$t" >"$t.memory.json" 2>"$t.memory.err"
		while read -r entry; do
			[ -n "$entry" ] || continue
			peak=$(json_num peak_bytes "$entry")
			a_devices="$a_devices $(grep -o '"device":"[^"]*"' <<<"$entry" | cut -d'"' -f4)"
			if [ "${peak:-0}" -gt "$best" ]; then
				best=$peak
				a_trace=$t
				a_device=$(grep -o '"device":"[^"]*"' <<<"$entry" | cut -d'"' -f4)
				a_peak=$peak
				a_allocs=$(json_num alloc_count "$entry")
				a_frees=$(json_num free_count "$entry")
			fi
		done < <(grep -o '{"device":"cuda:[0-9]*"[^{}]*}' "$t.memory.json")
	done
	[ -n "$a_trace" ] || return 0
	local s
	s=$(cgt summary --json "$a_trace" 2>/dev/null)
	printf '%s\n' "$s" >"$a_trace.summary.json"
	a_complete=$(grep -o '"complete":[a-z]*' <<<"$s" | head -n 1 | cut -d: -f2)
	a_complete=${a_complete:-?}
	if [ -n "$a_device" ]; then
		entry=$(grep -o "{\"device\":\"$a_device\"[^{}]*}" <<<"$s" | head -n 1)
		a_final=$(json_num final_bytes "$entry")
		a_final=${a_final:-?}
	fi
	# The device records alone (the whole trace can be large); export writes
	# each identity as cgprobe_device_* fields of the device's first record.
	cgt export --format jsonl "$a_trace" 2>/dev/null |
		grep -E '"kind":"device_memory"|"cgprobe_device_uuid"' >"$a_trace.device-records.jsonl"
	devrec=$(grep '"cgprobe_device_uuid"' "$a_trace.device-records.jsonl")
	if [ -n "$a_device" ]; then
		devrec=$(grep "\"device\":\"$a_device\"" <<<"$devrec")
	fi
	a_uuid=$(grep -o '"cgprobe_device_uuid":"[^"]*"' <<<"$devrec" | head -n 1 | cut -d'"' -f4)
	a_meminfo=$(grep -c '"kind":"device_memory"' "$a_trace.device-records.jsonl")
	local dn
	dn=$(grep -o '"cgprobe_device_name":"[^"]*"' <<<"$devrec" | head -n 1 | cut -d'"' -f4)
	echo "   traces: $a_ntraces ($a_invalid invalid); main: ${a_trace#"$out"/}, complete $a_complete;" \
		"CUDA devices seen:${a_devices:- none}"
	if [ -n "$a_device" ]; then
		echo "   $a_device: peak $a_peak bytes ($(mib "$a_peak")), allocs $a_allocs, frees $a_frees, live at end ${a_final}, cudaMemGetInfo checkpoints $a_meminfo"
	else
		echo "   no cuda:N device records"
	fi
	if [ -n "$a_uuid" ]; then
		local seen=no
		grep -q -F "$a_uuid" <<<"${gpus:-}" && seen=yes
		echo "   device identity: $a_uuid (${dn:-no name}); among nvidia-smi -L's UUIDs: $seen"
	else
		echo "   device identity: no record with a UUID"
	fi
}

# cgcheck KEY: the value of KEY on the probed run's CGCHECK line.
cgcheck() {
	local line
	line=$(grep '^CGCHECK ' "$dir/probed.out" | tail -n 1)
	line=$(grep -o "$1=[0-9]*" <<<"$line" | head -n 1)
	printf '%s' "${line#*=}"
}

# common_failure: the reason a probed run fails whatever it measured, or nothing.
common_failure() {
	if [ "$rc_native" -eq 124 ] || [ "$rc_native" -eq 137 ]; then
		echo "timed out without the probe (${limit}s)"
	elif [ "$rc_native" -ne 0 ]; then
		echo "fails without the probe (exit $rc_native: $(tail -n 1 "$dir/native.err"))"
	elif [ "$rc_probed" -eq 124 ] || [ "$rc_probed" -eq 137 ]; then
		echo "timed out under the probe (${limit}s)"
	elif [ "$rc_probed" -ne "$rc_native" ]; then
		echo "exit status $rc_probed under the probe, $rc_native without (probed stderr: $(tail -n 1 "$dir/probed.err"))"
	elif [ "$a_ntraces" -eq 0 ]; then
		echo "no trace written"
	elif [ "$a_invalid" -gt 0 ]; then
		echo "$a_invalid invalid trace(s)"
	elif [ "$a_complete" != true ]; then
		echo "trace incomplete"
	elif [ -z "$a_device" ]; then
		echo "no cuda device records in the trace"
	fi
}

# ---------------------------------------------------------------------------
# The C/CUDA programs.

for p in "${programs[@]}"; do
	echo
	if [ -z "${bin[$p]:-}" ]; then
		echo "-- $p: not run: ${binnote[$p]}"
		row "$p" SKIP - - - - - "${binnote[$p]}"
		continue
	fi
	if dt_needed "${bin[$p]}" | grep -q 'not found'; then
		echo "-- $p: ${bin[$p]} needs libraries not found here:"
		dt_needed "${bin[$p]}" | grep 'not found' | sed 's/^/     /'
		row "$p" FAIL - - - - - "not found: $(dt_needed "${bin[$p]}" | awk '$2 == "not" { print $1 }' | tr '\n' ' ')"
		continue
	fi
	run_pair "$p" "" -- "${bin[$p]}"
	analyse
	[ -n "${binnote[$p]:-}" ] && echo "   note: ${binnote[$p]}"
	expected=$(cgcheck expected_peak_bytes)
	exp_allocs=$(cgcheck expected_device_allocs)
	exp_frees=$(cgcheck expected_device_frees)
	why=$(common_failure)
	if [ -z "$why" ] && [ -z "$expected" ]; then
		why="no CGCHECK line in the program's output"
	fi
	if [ "$why" = "no cuda device records in the trace" ] && [ "$p" = alloc-static ]; then
		why="static runtime: no device records (its cuGetProcAddress path is not recorded)"
	fi
	counts="${a_allocs}/${a_frees}"
	if [ -n "$expected" ]; then
		diff=$(pct "$a_peak" "$expected")
		echo "   expected peak $expected bytes ($(mib "$expected")), trace $a_peak bytes: $diff;" \
			"allocs/frees $counts, expected $exp_allocs/$exp_frees"
	else
		diff=-
	fi
	if [ -z "$why" ] && ! within "$a_peak" "$expected" 1; then
		why="device peak $diff off the expected (more than 1%)"
	fi
	if [ -z "$why" ] && [ -z "$a_uuid" ]; then
		why="no device identity (cgprobe_device_uuid)"
	fi
	if [ -z "$why" ] && { [ "$a_allocs" -lt "${exp_allocs:-0}" ] || [ "$a_frees" -lt "${exp_frees:-0}" ]; }; then
		why="allocs/frees $counts on $a_device, fewer than the program's $exp_allocs/$exp_frees"
	fi
	if [ -z "$why" ] && [ "$a_final" != 0 ]; then
		why="$a_final bytes still live on $a_device at the end (missed frees)"
	fi
	note=${binnote[$p]:-}
	if [ -z "$why" ] && { [ "$a_allocs" != "$exp_allocs" ] || [ "$a_frees" != "$exp_frees" ]; }; then
		note="${note:+$note; }more allocs/frees than the program's $exp_allocs/$exp_frees"
	fi
	if [ -n "$why" ]; then
		row "$p" FAIL "${expected:--}" "$a_peak" "$diff" "$counts" "$(yes_no "$a_uuid")" "$why"
	else
		row "$p" OK "$expected" "$a_peak" "$diff" "$counts" yes "$note"
	fi
done

# ---------------------------------------------------------------------------
# PyTorch

py_env=(PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1)
[ -n "${GPU_CHECK_MIN_BYTES:-}" ] && py_env+=(CGPROBE_MIN_BYTES="$GPU_CHECK_MIN_BYTES")

for variant in default expandable; do
	name=torch-$variant
	echo
	if [ "$torch_ok" != 1 ]; then
		echo "-- $name: skipped: $torch_why"
		row "$name" SKIP - - - - - "$torch_why"
		continue
	fi
	conf=()
	[ "$variant" = expandable ] && conf=(PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True)
	run_pair "$name" .zst "${py_env[@]}" ${conf[@]+"${conf[@]}"} -- "$python" "$src/torch_alloc.py"
	analyse
	reserved=$(cgcheck max_memory_reserved)
	allocated=$(cgcheck max_memory_allocated)
	why=$(common_failure)
	[ -z "$why" ] && [ -z "$reserved" ] && why="no CGCHECK line in the script's output"
	diff=- ratio=-
	if [ -n "$reserved" ] && [ "$reserved" -gt 0 ]; then
		diff=$(pct "$a_peak" "$reserved")
		ratio=$(ratio "$a_peak" "$reserved")
		echo "   max_memory_reserved $reserved ($(mib "$reserved")), max_memory_allocated $allocated" \
			"($(mib "${allocated:-0}")); trace peak $a_peak ($(mib "$a_peak")); ratio $ratio ($diff)"
		[ -z "$why" ] && ! within "$a_peak" "$reserved" 5 &&
			why="trace peak / max_memory_reserved = $ratio, more than 5% off"
	fi
	verdict "$name" "$reserved" "$why" "ratio $ratio to max_memory_reserved; live at end $a_final"
done

# ---------------------------------------------------------------------------
# JAX

name=jax-platform
echo
if [ "$jax_ok" != 1 ]; then
	echo "-- $name: skipped: $jax_why"
	row "$name" SKIP - - - - - "$jax_why"
else
	run_pair "$name" .zst "${py_env[@]}" XLA_PYTHON_CLIENT_ALLOCATOR=platform \
		XLA_PYTHON_CLIENT_PREALLOCATE=false -- "$python" "$src/jax_alloc.py"
	analyse
	arrays=$(cgcheck array_bytes)
	why=$(common_failure)
	diff=- ratio=-
	if [ -n "$arrays" ] && [ "$arrays" -gt 0 ]; then
		diff=$(pct "$a_peak" "$arrays")
		ratio=$(ratio "$a_peak" "$arrays")
		echo "   arrays $arrays bytes ($(mib "$arrays")); trace peak $a_peak ($(mib "$a_peak")); ratio $ratio ($diff)"
	fi
	verdict "$name" "$arrays" "$why" "report only: ratio $ratio to the arrays' bytes (XLA adds its own buffers)"
fi

# ---------------------------------------------------------------------------

{
	echo
	echo "== results (bytes; diff = trace peak against expected: the program's own figure," \
		"torch.cuda.max_memory_reserved(), the JAX arrays' bytes)"
	printf '%-17s %-5s %14s %14s %9s %11s %-4s %s\n' program status expected "trace peak" diff \
		"allocs/frees" uuid note
	printf '%s\n' "${rows[@]}"
	echo
	echo "$passed passed, $failed failed, $skipped skipped"
	echo "output: $out"
} | tee "$out/summary.txt"
[ "$failed" -eq 0 ]

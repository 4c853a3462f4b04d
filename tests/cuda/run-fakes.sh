#!/bin/sh
# SPDX-License-Identifier: MIT
#
# Runs the CUDA test programs on the fake runtime and driver, without any
# probe, and checks that they work: the fixtures' own test, before anything
# is measured with them.
#
# Usage: tests/cuda/run-fakes.sh OUT_DIR [c|cu|all]
#   OUT_DIR  what tests/cuda/build.sh built
#   c        the fakes themselves and the programs built with the C compiler
#   cu       the programs built with nvcc
#   all      both (default)
# Exits 0 when every check passed, 1 when one failed, 77 (skipped) when the
# nvcc programs were asked for and are missing and nothing else failed.
set -u

if [ $# -lt 1 ] || [ $# -gt 2 ]; then
	echo "usage: $0 OUT_DIR [c|cu|all]" >&2
	exit 2
fi
out=$(cd "$1" && pwd) || exit 2
group=${2:-all}
case $group in
c | cu | all) ;;
*)
	echo "$0: unknown group $group" >&2
	exit 2
	;;
esac
lib=$out/lib
tmp=$(mktemp -d "${TMPDIR:-/tmp}/run-fakes.XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT
failures=0
checks=0

bad() {
	echo "FAIL: $*"
	failures=$((failures + 1))
}

# run LABEL WANTED_STATUS COMMAND...: stdout in $tmp/LABEL.out, stderr in .err
run() {
	label=$1
	want=$2
	shift 2
	LD_LIBRARY_PATH="$lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$@" \
		>"$tmp/$label.out" 2>"$tmp/$label.err"
	rc=$?
	checks=$((checks + 1))
	if [ "$rc" -ne "$want" ]; then
		bad "$label: exit status $rc, wanted $want"
		sed 's/^/  | /' "$tmp/$label.out" "$tmp/$label.err" | tail -n 30
	else
		echo "ok: $label"
	fi
}

# has LABEL ERE: a line of the program's output (after "PID PROG ") matches.
has() {
	checks=$((checks + 1))
	sed -E 's/^[0-9]+ [^ ]+ //' "$tmp/$1.out" | grep -Eq -- "$2" ||
		bad "$1: no output line matches /$2/"
}

has_err() {
	checks=$((checks + 1))
	grep -Eq -- "$2" "$tmp/$1.err" || bad "$1: no stderr line matches /$2/"
}

lacks() {
	checks=$((checks + 1))
	if sed -E 's/^[0-9]+ [^ ]+ //' "$tmp/$1.out" | grep -Eq -- "$2"; then
		bad "$1: an output line matches /$2/"
	fi
}

# Every F line ends a block an A line gave (same pointer, size and place), and
# nothing is left at the end.
balanced() {
	checks=$((checks + 1))
	msg=$(awk '
		$3 == "A" { live[$5 " " $6 " " $7]++ }
		$3 == "F" {
			k = $5 " " $6 " " $7
			if (!live[k]) { print "free of " k " never allocated"; exit }
			live[k]--
		}
		END { for (k in live) if (live[k]) print "left live: " k }
	' "$tmp/$1.out")
	[ -z "$msg" ] || bad "$1: $msg"
}

check_common() {
	has "$1" '^R done ok$'
	lacks "$1" '^R FAILED'
	lacks "$1" 'clobbered'
	balanced "$1"
}

group_c() {
	# The libraries: versioned like the real runtime, -Bsymbolic like the real driver.
	if command -v nm >/dev/null 2>&1 && command -v readelf >/dev/null 2>&1; then
		checks=$((checks + 7))
		nm -D --defined-only "$lib/libcudart.so.13" | grep -q ' T cudaMalloc@@libcudart.so.13$' ||
			bad "libcudart.so.13: no cudaMalloc@@libcudart.so.13"
		readelf -d "$lib/libcudart.so.13" | grep -q 'SONAME.*\[libcudart.so.13\]' ||
			bad "libcudart.so.13: wrong SONAME"
		nm -D --defined-only "$lib/libcudart.so.12" | grep -q ' T cudaMalloc@@libcudart.so.12$' ||
			bad "libcudart.so.12: no cudaMalloc@@libcudart.so.12"
		readelf -d "$lib/libcudart.so.12" | grep -q 'SONAME.*\[libcudart.so.12\]' ||
			bad "libcudart.so.12: wrong SONAME"
		nm -D --undefined-only "$lib/libuses12.so" | grep -q ' U cudaMalloc@libcudart.so.12$' ||
			bad "libuses12.so: no cudaMalloc@libcudart.so.12 reference"
		readelf -d "$lib/libcuda.so.1" | grep -Eq '\(FLAGS\).*SYMBOLIC' ||
			bad "libcuda.so.1: not linked with -Bsymbolic"
		if nm -D --defined-only "$lib/libcuda.so.1" | grep -q ' T fake_'; then
			bad "libcuda.so.1: exports its helpers"
		fi
	else
		echo "note: no nm/readelf, library checks skipped"
	fi

	run drv-dlopen 0 "$out/drv-dlopen"
	check_common drv-dlopen
	has drv-dlopen '^R proc-v1 cuGetProcAddress 12000 0 0$'
	has drv-dlopen '^R proc cuMemAlloc 2000 0 0 0$'
	has drv-dlopen '^R proc cuNoSuchFunction 13000 0 500 1 null$'
	has drv-dlopen '^R proc cuMemAllocAsync 11000 0 500 2 null$'
	has drv-dlopen '^R thread cuCtxGetDevice 201 -7$'
	has drv-dlopen '^R thread cuMemAlloc_v2 201 untouched$'
	has drv-dlopen '^A cuMemAlloc_v2 0x2000[0-9a-f]{8} 4096 cuda:0$'
	has drv-dlopen '^R cuMemAlloc\(v1\) 0$'
	has drv-dlopen '^A cuMemAlloc 0x[0-9a-f]{1,8} 8192 cuda:0$'
	has drv-dlopen '^A cuMemAllocAsync_ptsz 0x[0-9a-f]+ 65536 cuda:0$'
	has drv-dlopen '^A cuMemAllocManaged 0x[0-9a-f]+ 16384 cuda:0 managed$'
	has drv-dlopen '^A cuMemAllocHost_v2 0x2200[0-9a-f]{8} 4096 cpu pinned$'
	has drv-dlopen '^A cuMemAlloc_v2 0x2100[0-9a-f]{8} 4096 cuda:1$'
	has drv-dlopen '^R dlsym cuMemAlloc_v2 found cuMemFree_v2 found$'
	has drv-dlopen '^A cuMemAlloc_v2 0x[0-9a-f]+ 12345 cuda:0$'
	has drv-dlopen '^R cuMemGetInfo_v2\(NULL,&total\) 0 total-same=yes$'
	has drv-dlopen '^R cuMemGetInfo_v2 dropped>=16MiB=yes$'
	has drv-dlopen '^E cuMemAlloc_v2 1125899906842624 2 untouched$'
	has drv-dlopen '^V map (0x[0-9a-f]+) 2097152 0xcafe0001 0$'
	has drv-dlopen '^R vmm alias ok$'
	has drv-dlopen '^S vmm free mapped=17177772032 released=17177772032 half-unmapped=17177772032 unmapped=17179869184$'
	has drv-dlopen '^S device 1 GPU-fa4ec0da-0000-4000-8000-000000000001 17179869184 Fake CUDA Device 1$'

	run drv-dlopen-log 0 env FAKE_CUDA_LOG=1 "$out/drv-dlopen"
	has_err drv-dlopen-log '^fake-cuda: cuGetProcAddress cuGetProcAddress 12000 0 -> cuGetProcAddress_v2$'
	has_err drv-dlopen-log '^fake-cuda: cuGetProcAddress_v2 cuMemAlloc 3020 0 -> cuMemAlloc_v2$'
	has_err drv-dlopen-log '^fake-cuda: cuGetProcAddress_v2 cuMemAlloc 2000 0 -> cuMemAlloc$'
	has_err drv-dlopen-log '^fake-cuda: cuGetProcAddress_v2 cuMemAllocAsync 11020 2 -> cuMemAllocAsync_ptsz$'
	has_err drv-dlopen-log '^fake-cuda: cuGetProcAddress_v2 cuNoSuchFunction 13000 0 -> not-found \(500\)$'

	run drv-dlopen-oom 0 env FAKE_CUDA_OOM_BYTES=100000 "$out/drv-dlopen"
	check_common drv-dlopen-oom
	has drv-dlopen-oom '^A cuMemAlloc_v2 0x[0-9a-f]+ 4096 cuda:0$'
	has drv-dlopen-oom '^E cuMemAlloc_v2 3145728 2 untouched$'
	has drv-dlopen-oom '^E cuMemCreate 2097152 2 untouched$'

	run drv-linked 0 "$out/drv-linked"
	check_common drv-linked
	has drv-linked '^A cuMemAlloc_v2 0x2000[0-9a-f]{8} 1048576 cuda:0$'
	has drv-linked '^R cuMemGetInfo_v2\(NULL,&total\) 0 total-same=yes$'
	has drv-linked '^R cuMemGetInfo_v2 dropped>=1053576=yes$'
	has drv-linked '^R memset\+copy 0 0 ok$'

	for v in rt-shared-gcc rt-shared-gcc-ptsz; do
		run $v 0 "$out/$v"
		check_common $v
		rt_checks $v
	done
	has rt-shared-gcc '^A cudaMallocAsync 0x[0-9a-f]+ 65536 cuda:0$'
	has rt-shared-gcc-ptsz '^A cudaMallocAsync_ptsz 0x[0-9a-f]+ 65536 cuda:0$'
	has rt-shared-gcc-ptsz '^F cudaFreeAsync_ptsz 0x[0-9a-f]+ 65536 cuda:0$'
	has rt-shared-gcc-ptsz '^A cudaMallocFromPoolAsync_ptsz 0x[0-9a-f]+ 131072 cuda:0$'

	# The runtime through the driver: cuGetProcAddress_v2 lookups, the driver's memory.
	for v in rt-shared-gcc rt-shared-gcc-ptsz; do
		run $v-via-driver 0 env FAKE_CUDART_VIA_DRIVER=1 FAKE_CUDA_LOG=1 "$out/$v"
		check_common $v-via-driver
		has $v-via-driver '^A cudaMalloc 0x2000[0-9a-f]{8} 1000 cuda:0$'
		has $v-via-driver '^A cudaMalloc 0x2000[0-9a-f]{8} 67108864 cuda:0$'
		has $v-via-driver '^A cudaMallocPitch 0x3000[0-9a-f]{8} 10240 cuda:0 '
		has $v-via-driver '^R cudaMemGetInfo dropped>=32MiB=yes$'
		has $v-via-driver '^E cudaMalloc 1125899906842624 2 untouched$'
		has $v-via-driver '^R cudaGetLastError 2 then 0$'
		has $v-via-driver '^A cudaMalloc 0x2100[0-9a-f]{8} 4096 cuda:1$'
		has_err $v-via-driver '^fake-cudart13: driver cuMemAlloc 13000 0 -> cuMemAlloc_v2 in libcuda\.so\.1$'
		has_err $v-via-driver '^fake-cudart13: driver cuMemFreeAsync 13000 2 -> cuMemFreeAsync_ptsz in libcuda\.so\.1$'
		has_err $v-via-driver '^fake-cudart13: driver cuMemGetInfo 13000 0 -> cuMemGetInfo_v2 in libcuda\.so\.1$'
	done
	has rt-shared-gcc-via-driver '^A cudaMallocAsync 0x2000[0-9a-f]{8} 65536 cuda:0$'
	has rt-shared-gcc-ptsz-via-driver '^A cudaMallocAsync_ptsz 0x2000[0-9a-f]{8} 65536 cuda:0$'

	# Two runtime copies in one process: each call in its caller's copy.
	for v in rt-two-copies rt-two-copies-dlopen; do
		run $v 0 "$out/$v"
		check_common $v
		has $v '^R main runtime 13000 device 0$'
		has $v '^A cudaMalloc 0x3000[0-9a-f]{8} 4096 cuda:0$'
		has $v '^R lib runtime 12000 device 1$'
		has $v '^A cudaMalloc 0x3400[0-9a-f]{8} 8192 cuda:1$'
		has $v '^A cudaMallocAsync 0x3400[0-9a-f]{8} 65536 cuda:1$'
		has $v '^R lib used 8192$'
		has $v '^R main device 0 used 4096$'
		has $v '^R lib cudaFree\(foreign\) 1 then 1$'
		has $v '^R main cudaFree\(foreign\) 1 then 1$'
		lacks $v '^R lib .*in (unknown|libcudart\.so\.13)$'
		lacks $v '^R main .*in (unknown|libcudart\.so\.12)$'
	done
	has rt-two-copies '^R libuses12.so linked$'
	has rt-two-copies-dlopen "^R libuses12.so dlopen'ed$"

	run rt-shared-gcc-oom 0 env FAKE_CUDA_OOM_BYTES=100000 "$out/rt-shared-gcc" sync host
	check_common rt-shared-gcc-oom
	has rt-shared-gcc-oom '^A cudaMalloc 0x3000[0-9a-f]{8} 1000 cuda:0$'
	has rt-shared-gcc-oom '^E cudaMalloc 1048576 2 untouched$'
	has rt-shared-gcc-oom '^E cudaMalloc 67108864 2 untouched$'
	has rt-shared-gcc-oom '^A cudaMallocHost 0x[0-9a-f]+ 8192 cpu pinned$'

	# Under AddressSanitizer its malloc comes first and never chains on.
	if ldd "$out/rtld-next-lib.so" 2>/dev/null | grep -q libasan; then
		echo "skip: rtld-next (built with AddressSanitizer)"
	else
		run rtld-next 0 env LD_PRELOAD="$out/rtld-next-lib.so" "$out/rtld-next-prog" 10
		check_common rtld-next
		has rtld-next '^R mallocs 10$'
		has_err rtld-next '^rtld-next-lib: malloc calls [1-9][0-9]+ next .*libc\.so'
	fi
}

# What every build of rt-shared.cu prints on the fake runtime.
rt_checks() {
	has "$1" '^R cudaFree\(0\) 0$'
	has "$1" '^R cudaFree\(NULL\) 0$'
	has "$1" '^R cudaMalloc\(0\) 0 null$'
	has "$1" '^A cudaMalloc 0x3000[0-9a-f]{8} 1000 cuda:0$'
	has "$1" '^A cudaMalloc 0x3000[0-9a-f]{8} 1048576 cuda:0$'
	has "$1" '^A cudaMalloc 0x3000[0-9a-f]{8} 67108864 cuda:0$'
	has "$1" '^R memset\+memcpy 0 0 ok$'
	has "$1" '^A cudaMallocPitch 0x[0-9a-f]+ 10240 cuda:0 pitch=1024 width=1000 height=10$'
	has "$1" '^A cudaMalloc3D 0x[0-9a-f]+ 6144 cuda:0 pitch=512 width=100 height=4 depth=3$'
	has "$1" '^A cudaMallocManaged 0x[0-9a-f]+ 12288 cuda:0 managed$'
	has "$1" '^A cudaMallocHost 0x3200[0-9a-f]{8} 8192 cpu pinned$'
	has "$1" '^A cudaHostAlloc 0x3200[0-9a-f]{8} 12288 cpu pinned$'
	has "$1" '^R cudaMemGetInfo 0 0 total-same=yes$'
	has "$1" '^R cudaMemGetInfo dropped>=32MiB=yes$'
	has "$1" '^E cudaMalloc 1125899906842624 2 untouched$'
	has "$1" '^R cudaGetLastError 2 then 0$'
	has "$1" '^A cudaMalloc 0x3100[0-9a-f]{8} 4096 cuda:1$'
}

missing_cu=0
group_cu() {
	for v in rt-shared rt-shared-ptsz rt-static; do
		if ! [ -x "$out/$v" ]; then
			echo "skip: $v was not built (no nvcc)"
			missing_cu=1
			return
		fi
	done
	for v in rt-shared rt-shared-ptsz; do
		run $v 0 "$out/$v"
		check_common $v
		rt_checks $v
		has $v '^R kernel 0 0$'
	done
	has rt-shared '^A cudaMallocAsync 0x[0-9a-f]+ 65536 cuda:0$'
	has rt-shared-ptsz '^A cudaMallocAsync_ptsz 0x[0-9a-f]+ 65536 cuda:0$'

	# The static runtime cannot start on the fake driver; it must fail cleanly.
	run rt-static 0 env FAKE_CUDA_LOG=1 "$out/rt-static"
	has rt-static '^R init [1-9][0-9]* cuda'
	has rt-static '^R done ok$'
	has_err rt-static '^fake-cuda: cuGetProcAddress_v2 cuMemAlloc 3020 0 -> cuMemAlloc_v2$'
	has_err rt-static '^fake-cuda: cuGetProcAddress_v2 cuMemAllocAsync 11020 2 -> cuMemAllocAsync_ptsz$'
}

case $group in
c) group_c ;;
cu) group_cu ;;
all)
	group_c
	group_cu
	;;
esac

echo "run-fakes: $checks checks, $failures failed"
if [ "$failures" -ne 0 ]; then
	exit 1
fi
if [ "$missing_cu" -ne 0 ]; then
	exit 77
fi
exit 0

#!/bin/sh
# SPDX-License-Identifier: MIT
# Flag lists ($cc, $cflags, ...) are split into words on purpose.
# shellcheck disable=SC2086
#
# Builds the CUDA test fixtures: a fake CUDA runtime and driver and the
# programs that run on them (see tests/cuda/README.md).
#
# Usage: tests/cuda/build.sh BUILD_DIR OUT_DIR
#   BUILD_DIR  the project's build directory (accepted for meson's sake; unused)
#   OUT_DIR    where everything goes:
#     lib/libcudart.so.13 (+ libcudart.so)  the fake runtime
#     lib/libcudart.so.12                   a second copy of it (other addresses)
#     lib/libcuda.so.1 (+ libcuda.so)       the fake driver
#     lib/libuses12.so                      a library linked with libcudart.so.12
#     drv-dlopen drv-linked                 driver programs (gcc)
#     rt-shared-gcc rt-shared-gcc-ptsz      runtime programs (gcc, no kernel)
#     rt-shared rt-shared-ptsz rt-static    runtime programs (nvcc)
#     rtld-next-lib.so rtld-next-prog       the second interposer and its program
#     rt-two-copies rt-two-copies-dlopen    libcudart.so.13 + libuses12.so (linked, dlopen'ed)
#     gpu-hold                              tests/jobs/gpu-hold.c, on libcudart.so.13
#     figures-cuda                          the live figures per device (test figures)
#
# Environment: CC (default cc), NVCC (default: nvcc on PATH, else
# $CUDA_HOME/bin/nvcc, else /usr/local/cuda/bin/nvcc; empty: skip nvcc),
# CUDA_ARCH (default sm_90), CUDA_HOME (default /usr/local/cuda; its
# include/ checks the fakes' signatures against the real headers).
#
# Exits 0 when everything that can be built here was; says what it skipped.
set -eu

if [ $# -ne 2 ]; then
	echo "usage: $0 BUILD_DIR OUT_DIR" >&2
	exit 2
fi
out=$2
src=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out/lib"
out=$(cd "$out" && pwd)

cc=${CC:-cc}
cuda_home=${CUDA_HOME:-/usr/local/cuda}
arch=${CUDA_ARCH:-sm_90}
if [ "${NVCC+set}" = set ]; then
	nvcc=$NVCC
elif command -v nvcc >/dev/null 2>&1; then
	nvcc=$(command -v nvcc)
elif [ -x "$cuda_home/bin/nvcc" ]; then
	nvcc=$cuda_home/bin/nvcc
else
	nvcc=
fi

cflags="-std=gnu11 -O1 -g -Wall -Wextra -Wshadow -Werror=implicit-function-declaration"
lib_flags="-fPIC -fvisibility=hidden -shared -Wl,-z,defs -Wl,-Bsymbolic"
skipped=

run() {
	echo "+ $*"
	"$@"
}

# The fakes. -Bsymbolic: their own references bind inside them, as in the
# real libraries, so an interposer sees only what the program calls.
run $cc $cflags $lib_flags -Wl,-soname,libcudart.so.13 \
	-Wl,--version-script="$src/fake-cudart.map" \
	-o "$out/lib/libcudart.so.13" "$src/fake-cudart.c" "$src/fake-arena.c" -ldl -lpthread
# The same source as a second runtime: its own soname, version node and addresses.
run $cc $cflags $lib_flags -DFAKE_CUDART_MAJOR=12 -Wl,-soname,libcudart.so.12 \
	-Wl,--version-script="$src/fake-cudart12.map" \
	-o "$out/lib/libcudart.so.12" "$src/fake-cudart.c" "$src/fake-arena.c" -ldl -lpthread
run $cc $cflags $lib_flags -Wl,-soname,libcuda.so.1 \
	-Wl,--version-script="$src/fake-cuda.map" \
	-o "$out/lib/libcuda.so.1" "$src/fake-cuda.c" "$src/fake-arena.c" -lpthread
ln -sf libcudart.so.13 "$out/lib/libcudart.so"
ln -sf libcuda.so.1 "$out/lib/libcuda.so"

# Their signatures against the real headers, when there are some, seen as the
# libraries themselves see them (__CUDA_API_VERSION_INTERNAL): cuda.h declares
# the v1 prototypes and renames no definition; cuda_runtime_api.h declares
# both the plain and the _ptsz/_ptds names.
if [ -f "$cuda_home/include/cuda.h" ] && [ -f "$cuda_home/include/cuda_runtime_api.h" ]; then
	real_headers="-DFAKE_REAL_HEADERS -D__CUDA_API_VERSION_INTERNAL=1"
	run $cc $cflags -fsyntax-only $real_headers -I"$cuda_home/include" "$src/fake-cuda.c"
	run $cc $cflags -fsyntax-only $real_headers -I"$cuda_home/include" \
		"$src/fake-cudart.c"
else
	skipped="$skipped signature-check(no $cuda_home/include/cuda.h)"
fi

# Programs that need no CUDA toolkit.
run $cc $cflags -o "$out/drv-dlopen" "$src/drv-dlopen.c" -ldl -lpthread
run $cc $cflags -o "$out/drv-linked" "$src/drv-linked.c" -L"$out/lib" -lcuda
run $cc $cflags -x c -o "$out/rt-shared-gcc" "$src/rt-shared.cu" -x none \
	-L"$out/lib" -l:libcudart.so.13
run $cc $cflags -DCUDA_API_PER_THREAD_DEFAULT_STREAM -x c -o "$out/rt-shared-gcc-ptsz" \
	"$src/rt-shared.cu" -x none -L"$out/lib" -l:libcudart.so.13
run $cc $cflags -fPIC -fvisibility=hidden -shared -o "$out/rtld-next-lib.so" \
	"$src/rtld-next-lib.c" -ldl
run $cc $cflags -fno-builtin -o "$out/rtld-next-prog" "$src/rtld-next-prog.c"
# Two runtime copies in one process: the program links .13, libuses12.so links .12
# (ld warns that they "may conflict": that is the point).
run $cc $cflags -fPIC -fvisibility=hidden -shared -Wl,-z,defs -Wl,-soname,libuses12.so \
	-o "$out/lib/libuses12.so" "$src/uses12.c" -L"$out/lib" -l:libcudart.so.12
run $cc $cflags -o "$out/rt-two-copies" "$src/rt-two-copies.c" \
	-L"$out/lib" -Wl,-rpath-link,"$out/lib" -l:libcudart.so.13 -luses12
run $cc $cflags -DUSES12_DLOPEN -o "$out/rt-two-copies-dlopen" "$src/rt-two-copies.c" \
	-L"$out/lib" -l:libcudart.so.13 -ldl
# The probe's live figures per device (tests/test-figures.c).
run $cc $cflags -I"$src/../../include" -o "$out/figures-cuda" "$src/figures-cuda.c" \
	-L"$out/lib" -l:libcudart.so.13
# One process of a job on one GPU (tests/test-job-gpu.sh): cudaMalloc, hold, free.
run $cc $cflags -o "$out/gpu-hold" "$src/../jobs/gpu-hold.c" -L"$out/lib" -l:libcudart.so.13

# Programs that need nvcc (no GPU: it only compiles).
rm -f "$out/rt-shared" "$out/rt-shared-ptsz" "$out/rt-static"
if [ -z "$nvcc" ] || ! [ -x "$nvcc" ]; then
	skipped="$skipped rt-shared rt-shared-ptsz rt-static(no nvcc)"
else
	nvflags="-arch=$arch -O1 -Xcompiler -Wall"
	if run "$nvcc" $nvflags -cudart shared -o "$out/rt-shared" "$src/rt-shared.cu" &&
		run "$nvcc" $nvflags -cudart shared -default-stream per-thread \
			-o "$out/rt-shared-ptsz" "$src/rt-shared.cu" &&
		run "$nvcc" $nvflags -o "$out/rt-static" "$src/rt-static.cu"; then
		:
	else
		rm -f "$out/rt-shared" "$out/rt-shared-ptsz" "$out/rt-static"
		skipped="$skipped rt-shared rt-shared-ptsz rt-static(nvcc failed)"
	fi
fi

if [ -n "$skipped" ]; then
	echo "build.sh: skipped:$skipped"
else
	echo "build.sh: built everything into $out"
fi
exit 0

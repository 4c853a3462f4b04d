# shellcheck shell=sh
# SPDX-License-Identifier: MIT
# Sourced by the check scripts: build_tools BUILD_DIR makes $build absolute
# and sets $probe and $cgtrace to that build's probe and reader, or exits 2
# naming the one that is missing.
build_tools() {
	build=$(cd "$1" && pwd)
	probe=$build/preload/libcgprobe.so
	cgtrace=$build/cgtrace/cgtrace
	for f in "$probe" "$cgtrace"; do
		if [ ! -e "$f" ]; then
			echo "$0: $f not found; build first (ninja -C $build)" >&2
			exit 2
		fi
	done
}

#!/bin/sh
# SPDX-License-Identifier: MIT
# The core's rooms include only the rooms below them (core/README.md), and
# cgtrace/ only the public header and its own cli.h.
#   check-rooms.sh SOURCE_ROOT
set -u
root=$1
fail=0
allowed() {
	case $1 in
	util) echo "util" ;;
	model) echo "util model" ;;
	write) echo "util model write" ;;
	doc) echo "util model doc" ;;
	read) echo "util model doc read" ;;
	analysis) echo "util model doc read symbols analysis" ;;
	symbols) echo "util symbols" ;;
	export) echo "util model doc read write export" ;;
	view) echo "util model doc read analysis symbols view" ;;
	esac
}
for dir in "$root"/core/*/; do
	room=$(basename "$dir")
	ok=$(allowed "$room")
	[ -n "$ok" ] || { echo "core/$room: a room without rules"; fail=1; continue; }
	for f in "$dir"*.c "$dir"*.h; do
		[ -f "$f" ] || continue
		for h in $(sed -n 's/^#include "\([^"]*\)".*/\1/p' "$f"); do
			[ "$h" = cgtrace.h ] && continue
			home=$(cd "$root/core" && ls -d */"$h" 2>/dev/null | cut -d/ -f1)
			if [ -z "$home" ]; then
				echo "${f#"$root"/}: includes $h, which no room holds"
				fail=1
			elif ! echo " $ok " | grep -q " $home "; then
				echo "${f#"$root"/}: includes $home/$h; $room may use: $ok"
				fail=1
			fi
		done
	done
done
for f in "$root"/cgtrace/*.c "$root"/cgtrace/*.h; do
	[ -f "$f" ] || continue
	for h in $(sed -n 's/^#include "\([^"]*\)".*/\1/p' "$f"); do
		# The tool's own private headers sit beside its sources.
		[ -f "$root/cgtrace/$h" ] && continue
		case $h in cgtrace.h | cli.h) ;; *)
			echo "${f#"$root"/}: includes $h; cgtrace/ uses the public API only"
			fail=1 ;;
		esac
	done
done
[ "$fail" -eq 0 ] && echo "rooms: every include goes downwards"
exit "$fail"

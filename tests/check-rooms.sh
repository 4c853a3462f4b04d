#!/bin/sh
# SPDX-License-Identifier: MIT
# Every room uses only the rooms tests/rooms.table lets it use: each
# #include "x.h" of its files, and each cg symbol its object files leave
# undefined (nm) that another room's object defines (the objects found
# through the build's compile_commands.json). The rooms the table calls
# acyclic have no loop of includes between their files either, and a
# file in a room's folder that no room holds fails, so a new file gets
# its place. First a self-check: the checker must fail, and only as it
# should, on tests/rooms/, two crafted rooms whose lower one includes and
# calls the upper one.
#   check-rooms.sh SOURCE_ROOT BUILD_ROOT [TABLE]
# With TABLE (relative to SOURCE_ROOT) only that table is checked, no self-check.
set -u
export LC_ALL=C
[ $# -ge 2 ] || { echo "usage: check-rooms.sh SOURCE_ROOT BUILD_ROOT [TABLE]" >&2; exit 2; }
root=$(cd "$1" && pwd) || exit 2
build=$(cd "$2" && pwd) || exit 2
tmp=$(mktemp -d "${TMPDIR:-/tmp}/check-rooms.XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT

# check TABLE OUT: the violations of TABLE's rules, one a line, into OUT; exit status 1 if any.
check() {
	table=$1 out=$2 w=$tmp/w
	rm -rf "$w" && mkdir "$w"
	# The table, joined: "room NAME MEMBER... : USE...", "except ROOM USED SYMBOL".
	awk '
		/^[ \t]*(#|$)/ { next }
		/^[ \t]/ { line = line " " $0; next }
		{ if (line != "") print line; line = $0 }
		END { if (line != "") print line }
	' "$root/$table" | awk -v w="$w" '
		$1 == "except" { print $2, $3, $4 > (w "/except"); next }
		$1 == "acyclic" { for (i = 2; i <= NF; i++) print $i > (w "/acyclic"); next }
		{
			room = $1; side = 0
			for (i = 2; i <= NF; i++) {
				if ($i == ":") { side = 1; continue }
				if (side) print room, $i > (w "/uses")
				else print room, $i > (w "/members")
			}
			print room, room > (w "/uses")
		}
	'
	: >>"$w/except"
	: >>"$w/acyclic"
	# Each member file, with its room: a folder's files, a stem's .c and .h,
	# a template's (NAME.in) generated file.
	while read -r room m; do
		case $m in
		*/) for f in "$root/$m"*.c "$root/$m"*.h; do
			[ -f "$f" ] && echo "${f#"$root"/} $room"
		done ;;
		*.in) echo "${m%.in} $room" ;;
		*) for f in "$root/$m.c" "$root/$m.h"; do
			[ -f "$f" ] && echo "${f#"$root"/} $room"
		done ;;
		esac
	done <"$w/members" | sort -u >"$w/files"
	: >"$out"
	# Every source file in a folder the table names holds a room.
	awk '{ sub("[^/]*$", "", $2); print $2 }' "$w/members" | sort -u | while read -r d; do
		for f in "$root/$d"*.c "$root/$d"*.h; do
			[ -f "$f" ] || continue
			grep -q "^${f#"$root"/} " "$w/files" || echo "${f#"$root"/}: in no room"
		done
	done >>"$out"
	# Includes: a header beside the file, else the member whose path ends in it.
	while read -r f room; do
		[ -f "$root/$f" ] && sed -n "s|^#include \"\\([^\"]*\\)\".*|$f $room \\1|p" "$root/$f"
	done <"$w/files" | awk -v w="$w" '
		BEGIN {
			while ((getline l < (w "/files")) > 0) { split(l, a, " "); home[a[1]] = a[2] }
			while ((getline l < (w "/uses")) > 0) { split(l, a, " "); use[a[1], a[2]] = 1 }
		}
		function member(dir, h,   m) {
			if ((dir "/" h) in home)
				return dir "/" h
			for (m in home)
				if (substr(m, length(m) - length(h)) == "/" h)
					return m
			return ""
		}
		{
			f = $1; r = $2; h = $3; dir = f; sub("/[^/]*$", "", dir)
			m = member(dir, h)
			if (m == "") {
				print f ": includes " h ", which no room holds"
				next
			}
			if (!((r, home[m]) in use))
				print f ": includes " h " of " home[m] ", which " r " may not use"
			print f, m > (w "/edges")
		}
	' >>"$out"
	# Loops: between the files (a .c and its .h as one) of the acyclic rooms, by includes.
	awk -v w="$w" '
		BEGIN {
			while ((getline l < (w "/acyclic")) > 0) acyc[l] = 1
			while ((getline l < (w "/files")) > 0) { split(l, a, " "); room[a[1]] = a[2] }
		}
		function stem(f) { sub(/\.[ch]$/, "", f); return f }
		room[$1] in acyc && room[$2] in acyc && stem($1) != stem($2) {
			print stem($1), stem($2)
		}
	' "$w/edges" 2>/dev/null | sort -u | tsort 2>&1 >/dev/null |
		awk '
			function put(   i, j, t, l) {
				for (i = 2; i <= n; i++)
					for (j = i; j > 1 && m[j - 1] > m[j]; j--) {
						t = m[j]; m[j] = m[j - 1]; m[j - 1] = t
					}
				l = "include loop:"
				for (i = 1; i <= n; i++) l = l " " m[i]
				if (n) print l
				n = 0
			}
			/input contains a loop/ { put(); next }
			{ sub(/^tsort: /, ""); m[++n] = $0 }
			END { put() }
		' >>"$out"
	# Objects: compile_commands.json's file and output of each entry, as meson writes them.
	awk -v root="$root/" '
		function norm(p,   n, a, i, k, o) {
			n = split(p, a, "/"); k = 0
			for (i = 1; i <= n; i++) {
				if (a[i] == "" || a[i] == ".") continue
				if (a[i] == ".." && k > 0) { k--; continue }
				s[++k] = a[i]
			}
			o = ""
			for (i = 1; i <= k; i++) o = o "/" s[i]
			return o
		}
		function val(l) { sub(/^[^:]*: *"/, "", l); sub(/",?[ \t]*$/, "", l); return l }
		/"directory":/ { dir = val($0) }
		/"file":/ { file = val($0) }
		/"output":/ {
			src = norm(file ~ /^\// ? file : dir "/" file)
			obj = val($0)
			if (obj !~ /^\//) obj = dir "/" obj
			if (index(src, root) == 1) print substr(src, length(root) + 1), obj
		}
	' "$build/compile_commands.json" | sort -u | join - "$w/files" >"$w/objects"
	# Symbols: "ROOM D SYM" for each an object defines, "ROOM U SYM" for each it needs.
	while read -r _ obj room; do
		[ -f "$obj" ] && echo "$obj $room"
	done <"$w/objects" >"$w/rooms-of"
	awk '{ print $1 }' "$w/rooms-of" | xargs nm -A -g 2>/dev/null | awk -v w="$w" '
		BEGIN {
			while ((getline l < (w "/rooms-of")) > 0) {
				split(l, a, " ")
				room[a[1]] = a[2]
			}
		}
		{
			o = $1; sub(/:[^:]*$/, "", o); r = room[o]
			if ($2 == "U") { if ($3 ~ /^cg/) print r, "U", $3 }
			else if (NF >= 3 && $NF ~ /^cg/) print r, "D", $NF
		}
	' | sort -u >"$w/syms"
	# A symbol's rooms are those whose objects define it; a pattern (NAME*) allows by name.
	awk -v w="$w" '
		BEGIN {
			while ((getline l < (w "/uses")) > 0) {
				split(l, a, " ")
				use[a[1], a[2]] = 1
				if (a[2] ~ /\*$/)
					pats[a[1]] = pats[a[1]] " " substr(a[2], 1, length(a[2]) - 1)
			}
			while ((getline l < (w "/except")) > 0) {
				split(l, a, " ")
				exc[a[1], a[2], a[3]] = 1
			}
		}
		$2 == "D" { def[$3] = def[$3] " " $1; mine[$1, $3] = 1; next }
		{ und[++n] = $1 " " $3 }
		function allowed(r, s,   p, np, d, nd, j) {
			np = split(pats[r], p, " ")
			for (j = 1; j <= np; j++)
				if (index(s, p[j]) == 1)
					return 1
			nd = split(def[s], d, " ")
			for (j = 1; j <= nd; j++)
				if ((r, d[j]) in use || (r, d[j], s) in exc)
					return 1
			return 0
		}
		END {
			for (i = 1; i <= n; i++) {
				split(und[i], a, " ")
				if ((a[1], a[2]) in mine || !(a[2] in def) || allowed(a[1], a[2]))
					continue
				print a[1] ": uses " a[2] " of" def[a[2]]
			}
		}
	' "$w/syms" >>"$out"
	# An exception nothing needs any more is said, not failed: it goes with the change.
	while read -r r u s; do
		grep -q "^$r U $s\$" "$w/syms" ||
			echo "note: $table: except $r $u $s is not needed any more" >&2
	done <"$w/except"
	[ -s "$w/objects" ] || echo "no objects of the table's rooms under $build" >>"$out"
	[ ! -s "$out" ]
}

if [ $# -ge 3 ]; then
	check "$3" "$tmp/out"
	r=$?
	cat "$tmp/out"
	exit "$r"
fi

# The self-check: the crafted rooms break each rule once, and nothing else.
check tests/rooms/selftest.table "$tmp/self"
self=$?
want="include loop: tests/rooms/high tests/rooms/low
low: uses cg_rooms_high of high
tests/rooms/low.c: includes high.h of high, which low may not use"
if [ "$self" -eq 0 ] || [ "$(sort "$tmp/self")" != "$want" ]; then
	echo "rooms: the self-check on tests/rooms/ did not fail as it must; it said:"
	sed 's/^/  /' "$tmp/self"
	exit 1
fi
if check tests/rooms.table "$tmp/out"; then
	echo "rooms: every include and every symbol goes where tests/rooms.table allows"
	exit 0
fi
cat "$tmp/out"
exit 1

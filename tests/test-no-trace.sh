#!/bin/sh
# Input that is no trace says what it is, one line naming it, status 1, from
# every command that reads a trace: a directory, an empty file, bytes that
# are neither encoding (a file and on standard input), and the same empty
# input on standard input. A folder is a job to the commands that take one
# (docs/jobs.md): a folder without traces says so.
#   test-no-trace.sh CGTRACE
set -u
# shellcheck source=tests/lib/sh-check.sh
. "$(dirname "$0")/lib/sh-check.sh"
need_args 1 "test-no-trace.sh CGTRACE" "$@"
cgtrace=$(abs "$1")
make_tmp
cd "$tmp" || exit 1
mkdir folder
: >empty.cgt
printf '\211PNG\r\n\032\n\000\000\000\rIHDR\377\376 binary\n' >junk.cgt

# The commands, each with the options it needs to write nowhere in particular.
commands='summary|memory|top|leaks|timeline|validate|export|plot -o out.svg|report -o out.html'
# The commands that read a folder as a job.
jobs=' summary memory top leaks timeline plot report '
# input|what: the argument (a file, or '- <FILE' for standard input), the message.
cases='folder|is a directory
empty.cgt|empty file
junk.cgt|not a trace: neither compact nor JSONL
- <empty.cgt|empty file
- <junk.cgt|not a trace: neither compact nor JSONL'

rest=$commands'|'
while [ -n "$rest" ]; do
	cmd=${rest%%|*}
	rest=${rest#*|}
	printf '%s\n' "$cases" | while IFS='|' read -r input what; do
		# shellcheck disable=SC2086 # cmd is a command and its options
		case $input in
		'- <'*)
			name='<stdin>'
			"$cgtrace" $cmd - <"${input#- <}" >"$tmp/out" 2>"$tmp/err"
			;;
		*)
			name=$input
			"$cgtrace" $cmd "$input" </dev/null >"$tmp/out" 2>"$tmp/err"
			;;
		esac
		st=$?
		case "$input|$jobs" in
		"folder|"*" ${cmd%% *} "*)
			what='no traces in this folder (names ending in .cgt, .jsonl or .zst)' ;;
		esac
		if [ "$st" -eq 1 ] && [ "$(cat "$tmp/err")" = "$name: $what" ] && [ ! -e out.svg ] &&
			[ ! -e out.html ]; then
			echo ok
		else
			echo "ko cgtrace $cmd $input: status $st, want 1 and '$name: $what'"
			sed 's/^/  stderr: /' "$tmp/err"
		fi
	done
done >"$tmp/results"
pass=$(grep -c '^ok$' "$tmp/results")
grep -v '^ok$' "$tmp/results"
fail=$(grep -c '^ko ' "$tmp/results")
[ "$pass" -eq 45 ] || { echo "$pass checks passed of 45"; fail=$((fail + 1)); }
finish

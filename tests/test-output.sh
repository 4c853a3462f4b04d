#!/bin/sh
# -o FILE of every command that writes one (the exports, plot, report): a
# regular file is replaced through a temporary file and a rename (its
# mode kept, a symbolic link kept and the file it names replaced), a failed
# run leaves the old file and no temporary; - and /dev/stdout are standard
# output, a FIFO is written as it is, a directory is refused.
#   test-output.sh CGTRACE
set -u
# shellcheck source=tests/lib/sh-check.sh
. "$(dirname "$0")/lib/sh-check.sh"
need_args 1 "test-output.sh CGTRACE" "$@"
cgtrace=$(abs "$1")
traces=$(cd "$(dirname "$0")/golden/traces" && pwd)
good=$traces/train.jsonl
bad=$traces/bad.jsonl
make_tmp
cd "$tmp" || exit 1
mkdir out

inode() { stat -c %i "$1"; }
# The only files in out/ are those named: no temporary left behind.
only() {
	got=$(find out -mindepth 1 | sort | tr '\n' ' ')
	want_files=
	for f in "$@"; do want_files="${want_files}out/$f "; done
	[ "$got" = "$want_files" ]
}

# name|command (its -o comes first, the trace last)
cases='export|export
export-canonical|export --order canonical
export-compact|export --format compact
export-folded|export --format folded
export-perfetto|export --format perfetto
export-massif|export --format massif
plot|plot
report|report'

while IFS='|' read -r name cmd; do
	rm -rf out && mkdir out
	# shellcheck disable=SC2086 # cmd is a command and its options
	"$cgtrace" $cmd -o - "$good" >want 2>"$tmp/err" || { ko "$name -o -"; continue; }

	# An existing file is replaced by a new one, whole, with its mode.
	echo old >out/f
	chmod 640 out/f
	before=$(inode out/f)
	# shellcheck disable=SC2086
	if "$cgtrace" $cmd -o out/f "$good" 2>"$tmp/err" && cmp -s want out/f &&
		[ "$(inode out/f)" != "$before" ] && [ "$(stat -c %a out/f)" = 640 ] && only f; then
		ok
	else
		ko "$name: an existing file replaced, mode 640 kept"
	fi

	# A failed run leaves the old file as it was, and nothing beside it.
	echo old >out/f
	# shellcheck disable=SC2086
	"$cgtrace" $cmd -o out/f "$bad" 2>"$tmp/err"
	st=$?
	if [ "$st" -eq 1 ] && [ "$(cat out/f)" = old ] && only f; then ok; else
		ko "$name: a broken trace left the old file (status $st)"
	fi

	# Through a symbolic link: the link stays, the file it names is replaced.
	rm -f out/f && echo old >out/f && ln -s f out/link
	# shellcheck disable=SC2086
	if "$cgtrace" $cmd -o out/link "$good" 2>"$tmp/err" && [ -L out/link ] && cmp -s want out/f &&
		only f link; then
		ok
	else
		ko "$name: -o through a symbolic link"
	fi

	# /dev/stdout is standard output as it is, here a file with a line in it already.
	# shellcheck disable=SC2086
	{ echo first; "$cgtrace" $cmd -o /dev/stdout "$good"; } >stdout 2>"$tmp/err"
	{ echo first; cat want; } >want.stdout
	if cmp -s want.stdout stdout; then ok; else ko "$name: -o /dev/stdout"; fi

	# A FIFO is written, not replaced.
	mkfifo out/fifo
	timeout 20 cat out/fifo >fromfifo &
	reader=$!
	# shellcheck disable=SC2086
	timeout 20 "$cgtrace" $cmd -o out/fifo "$good" 2>"$tmp/err"
	st=$?
	wait "$reader"
	if [ "$st" -eq 0 ] && [ -p out/fifo ] && cmp -s want fromfifo; then ok; else
		ko "$name: -o FIFO (status $st)"
	fi

	# A directory is refused, by name.
	# shellcheck disable=SC2086
	"$cgtrace" $cmd -o out "$good" >/dev/null 2>"$tmp/err"
	st=$?
	if [ "$st" -eq 1 ] && [ "$(cat "$tmp/err")" = "out: is a directory" ]; then ok; else
		ko "$name: -o DIRECTORY (status $st)"
	fi
done <<EOF
$cases
EOF
finish

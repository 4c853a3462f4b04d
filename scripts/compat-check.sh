#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# compat-check.sh [BUILD_DIR]
#
# Runs real, deterministic programs twice -- once natively, once with
# libcgprobe.so preloaded -- and checks that the probe is invisible to them:
# stdout, stderr and every exit status must be byte-identical.  After each
# probed run every trace written must pass `cgtrace validate` and report
# "complete":true, and at least one trace must exist.
#
# A program that is not installed is skipped (SKIP, with the reason); a
# missing tool never fails the check.  Exit status: 0 when nothing failed,
# 1 when something did, 2 on a usage error.

set -u

here=$(cd "$(dirname "$0")" && pwd)
build=${1:-$here/../build}
if [ "$#" -gt 1 ] || [ ! -d "$build" ]; then
	echo "usage: $0 [BUILD_DIR]   (default: the source tree's build/)" >&2
	exit 2
fi
# shellcheck source=scripts/build-tools.sh
. "$here/build-tools.sh"
build_tools "$build"

# The same environment for both runs; nothing inherited may probe the native
# run or steer the probed one.
unset LD_PRELOAD CGPROBE_QUIET CGPROBE_MIN_BYTES CGPROBE_ONLY CGPROBE_FOLLOW \
	CGPROBE_FLUSH_MS CGPROBE_TAGS CGPROBE_ENTRYPOINT CGPROBE_PHASE \
	CGPROBE_CAPTURE_STEP CGPROBE_CORRELATION_ID CGPROBE_DEVICE CGPROBE_MANIFEST
export LC_ALL=C TZ=UTC
limit=${COMPAT_TIMEOUT:-300} # seconds per command

tmp=$(mktemp -d "${TMPDIR:-/tmp}/cgprobe-compat.XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM

now_us() { local t=$EPOCHREALTIME; echo "${t/./}"; }
secs() { printf '%d.%02d' "$(($1 / 1000000))" "$((($1 % 1000000) / 10000))"; }

# ---------------------------------------------------------------------------
# run CMD ARGS...: runs an external command in the current mode.  Only what
# goes through `run` is probed; the checks' own helpers (checksums, running a
# freshly built binary) run natively in both modes.  timeout and env start
# before LD_PRELOAD is set, so they are never traced themselves.  Each exit
# status is appended to the mode's status log, which is compared too.
mode=native
tracedir=
status_log=/dev/null
run() {
	local rc
	if [ "$mode" = probed ]; then
		timeout -k 10 "$limit" env LD_PRELOAD="$probe" \
			CGPROBE_OUTPUT="$tracedir/cgprobe.%e.%p.%n.jsonl" "$@"
	else
		timeout -k 10 "$limit" env "$@"
	fi
	rc=$?
	echo "$1: exit $rc" >>"$status_log"
	return "$rc"
}

# ---------------------------------------------------------------------------
# The programs.  check_NAME runs in $tmp/work (the same path in both modes,
# emptied first, in a subshell, so cd and exports stay there) with inputs
# prepared natively by prep_NAME under $tmp/in/NAME; need_NAME prints a reason
# and fails when the program cannot be run here.

need_cmds() {
	local c
	for c in "$@"; do
		if ! command -v "$c" >/dev/null 2>&1; then
			echo "$c not installed"
			return 1
		fi
	done
}

# python3 may be a pyenv shim (a bash script running pyenv): more processes,
# all of which must trace cleanly.
need_python3() {
	need_cmds python3 || return 1
	python3 -c 'import json, subprocess' >/dev/null 2>&1 || { echo "python3 does not run"; return 1; }
}
prep_python3() {
	cat >"$1/alloc.py" <<'EOF'
import json
import subprocess

squares = [i * i for i in range(200000)]
table = {str(i): {"n": i, "odd": i % 2 == 1, "tags": ["t%d" % (i % 7)]} for i in range(20000)}
text = json.dumps(table, sort_keys=True)
back = json.loads(text)
assert back == table
words = sorted({w for v in back.values() for w in v["tags"]})
done = subprocess.run(["echo", "from a child"], capture_output=True, text=True, check=True)
print(sum(squares), len(text), len(back), ",".join(words))
print(done.stdout.strip(), done.returncode)
EOF
}
check_python3() { run python3 "$1/alloc.py"; }

need_perl() { need_cmds perl; }
check_perl() {
	run perl -e 'my %h; $h{"k$_"} = [$_, $_ * 2] for 1 .. 200000;
		my $s = 0; $s += $h{$_}[1] for keys %h;
		delete $h{"k$_"} for grep { $_ % 3 } 1 .. 200000;
		my %inv = map { $h{$_}[1] => $_ } keys %h;
		print scalar(keys %h), " ", scalar(keys %inv), " $s\n";
		print join(",", map { $inv{$_ * 6} } 1 .. 5), "\n";'
}

need_node() { need_cmds node; }
check_node() {
	run node -e 'const a = Array.from({length: 200000}, (_, i) => i);
		const objs = a.map((x) => ({v: x * 2, s: String(x), o: x % 2 === 1}));
		const text = JSON.stringify(objs);
		const back = JSON.parse(text);
		const sum = back.reduce((t, o) => t + o.v, 0);
		console.log(back.length, text.length, sum, back[12345].s);'
}

need_java() { need_cmds java javac; }
prep_java() {
	cat >"$1/Hello.java" <<'EOF'
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

public class Hello {
    public static void main(String[] args) {
        Map<String, Integer> m = new HashMap<>();
        List<String> l = new ArrayList<>();
        for (int i = 0; i < 100000; i++) {
            m.put("k" + i, i);
            l.add(Integer.toString(i * 3));
        }
        long s = 0;
        for (int v : m.values())
            s += v;
        System.out.println("Hello from Java " + m.size() + " " + l.get(4242) + " " + s);
    }
}
EOF
	# Compiled once, natively, outside both runs.
	javac -d "$1" "$1/Hello.java"
}
check_java() { run java -cp "$1" Hello; }

need_gcc() { need_cmds gcc; }
prep_gcc() {
	# -Wall warns about `unused`: gcc's stderr is compared too.
	cat >"$1/hello.c" <<'EOF'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(void)
{
	int unused;
	size_t n = 1000;
	char *buf = malloc(n);
	unsigned long sum = 0;
	for (size_t i = 0; i < n; i++)
		buf[i] = (char)(i % 97);
	for (size_t i = 0; i < n; i++)
		sum += (unsigned char)buf[i];
	printf("hello from gcc: %lu %zu\n", sum, strlen("abc"));
	free(buf);
	return 3;
}
EOF
}
check_gcc() {
	# Two different outputs: a binary from each mode, run natively afterwards.
	cp "$1/hello.c" hello.c
	run gcc -O1 -Wall -o "hello-$mode" hello.c
	"./hello-$mode"
	echo "hello exit $?"
}

need_make() { need_cmds make; }
prep_make() {
	# Independent targets built in parallel: silent recipes only, so the
	# interleaving of -j2 never shows; the results are printed afterwards.
	{
		printf 'all: t1 t2 t3 t4 t5 t6\n'
		printf '\tcat t1 t2 t3 t4 t5 t6 > all\n'
		for i in 1 2 3 4 5 6; do
			printf 't%d:\n\tseq %d 7 5000 | tr 0-9 a-j > $@\n' "$i" "$i"
		done
	} >"$1/Makefile"
}
check_make() {
	cp "$1/Makefile" Makefile
	run make -s -j2
	cksum <all
}

need_sort() {
	need_cmds sort cksum awk || return 1
	sort --parallel=2 </dev/null >/dev/null 2>&1 || { echo "sort has no --parallel"; return 1; }
}
prep_sort() {
	awk 'BEGIN { x = 12345; for (i = 0; i < 200000; i++) {
		x = (x * 1103515245 + 12345) % 2147483648; printf "%d line %d\n", x, i } }' >"$1/lines"
}
check_sort() {
	run sort --parallel=2 -S 8M -o sorted "$1/lines"
	cksum <sorted
	run sort --parallel=2 -n -r "$1/lines" | cksum
}

need_xz() {
	need_cmds xz cksum awk || return 1
	xz -T2 -c </dev/null >/dev/null 2>&1 || { echo "xz has no -T"; return 1; }
}
prep_xz() {
	# ~9 MB of compressible text: three blocks at -1, so -T2 really threads.
	awk 'BEGIN { for (i = 0; i < 400000; i++) printf "record %d value %d\n", i, (i * 7919) % 100003 }' >"$1/data"
}
check_xz() {
	run xz -T2 -1 -c "$1/data" >data.xz
	cksum <data.xz
	run xz -d -c data.xz | cksum
	cksum <"$1/data"
}

need_sqlite3() { need_cmds sqlite3; }
prep_sqlite3() {
	{
		echo 'CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT, grp INTEGER, val REAL);'
		echo 'BEGIN;'
		awk 'BEGIN { for (i = 1; i <= 10000; i++)
			printf "INSERT INTO t(name, grp, val) VALUES (%cname%d%c, %d, %d.5);\n", 39, i, 39, i % 17, i }'
		echo 'COMMIT;'
		echo 'SELECT count(*), sum(val), min(name), max(name) FROM t;'
		echo 'SELECT grp, count(*), avg(val) FROM t GROUP BY grp ORDER BY grp LIMIT 5;'
		echo 'CREATE INDEX t_name ON t(name);'
		echo "SELECT id FROM t WHERE name = 'name4242';"
	} >"$1/script.sql"
}
check_sqlite3() { run sqlite3 test.db <"$1/script.sql"; }

need_git() { need_cmds git; }
check_git() {
	# Identity, dates and configuration fixed: the hashes are the same each run.
	export GIT_AUTHOR_NAME=Compat GIT_AUTHOR_EMAIL=compat@example.invalid \
		GIT_COMMITTER_NAME=Compat GIT_COMMITTER_EMAIL=compat@example.invalid \
		GIT_AUTHOR_DATE='2024-01-02T03:04:05+00:00' \
		GIT_COMMITTER_DATE='2024-01-02T03:04:05+00:00' \
		GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
	run git init -q -b main repo
	seq 1 1000 >repo/numbers
	printf 'hello\n' >repo/README
	run git -C repo add numbers README
	run git -C repo commit -q -m 'first commit'
	seq 1 2 1000 >repo/numbers
	run git -C repo commit -q -a -m 'second commit'
	run git -C repo log --format=%H%n%s
}

need_bash() { need_cmds bash seq sort head tr; }
check_bash() {
	# shellcheck disable=SC2016 # expanded by the inner bash
	run bash -c '( seq 1 20000 | sort -r | head -5 ); x=$(echo sub | tr a-z A-Z); echo $x'
}

# COMPAT_PROGRAMS narrows the run to some of them.
programs=${COMPAT_PROGRAMS:-python3 perl node java gcc make sort xz sqlite3 git bash}

# ---------------------------------------------------------------------------
# One program, both modes.

# run_mode NAME MODE: the program's observable behaviour into $tmp/res/MODE.
run_mode() {
	local name=$1 res=$tmp/res/$2
	mode=$2
	mkdir -p "$res"
	rm -rf "$tmp/work"
	mkdir "$tmp/work"
	status_log=$res/status
	: >"$status_log"
	(cd "$tmp/work" && "check_$name" "$tmp/in/$name") >"$res/stdout" 2>"$res/stderr"
	echo "check_$name: exit $?" >>"$status_log"
}

passed=0 failed=0 skipped=0
row() { printf '%-8s %-6s %6s %12s %9s %9s%s\n' "$1" "$2" "$3" "$4" "$5" "$6" "${7:+  $7}"; }
row program result traces allocs native_s probed_s

for name in $programs; do
	if ! declare -F "check_$name" >/dev/null; then
		echo "$0: unknown program $name (known: python3 perl node java gcc make sort xz sqlite3 git bash)" >&2
		exit 2
	fi
	if ! reason=$("need_$name"); then
		row "$name" SKIP - - - - "$reason"
		skipped=$((skipped + 1))
		continue
	fi
	mkdir -p "$tmp/in/$name"
	if declare -F "prep_$name" >/dev/null && ! "prep_$name" "$tmp/in/$name" >"$tmp/prep.log" 2>&1; then
		row "$name" SKIP - - - - "preparing inputs failed: $(head -c 200 "$tmp/prep.log" | tr '\n' ' ')"
		skipped=$((skipped + 1))
		continue
	fi
	rm -rf "$tmp/res" "$tmp/traces"
	mkdir -p "$tmp/traces"
	tracedir=$tmp/traces

	# Wall time of each whole run, helpers included (they are cheap).
	t0=$(now_us)
	run_mode "$name" native
	native_us=$(($(now_us) - t0))
	t0=$(now_us)
	run_mode "$name" probed
	probed_us=$(($(now_us) - t0))

	problems=
	for s in stdout stderr status; do
		if ! cmp -s "$tmp/res/native/$s" "$tmp/res/probed/$s"; then
			problems="$problems
    $s differs:
$(diff "$tmp/res/native/$s" "$tmp/res/probed/$s" | head -20 | sed 's/^/      /')"
		fi
	done

	ntraces=0 nallocs=0
	for t in "$tracedir"/*.jsonl; do
		[ -e "$t" ] || continue
		ntraces=$((ntraces + 1))
		base=${t##*/}
		if ! out=$("$cgtrace" validate "$t" 2>&1); then
			problems="$problems
    $base: cgtrace validate failed: $(printf '%s' "$out" | head -c 400)"
		fi
		if ! sum=$("$cgtrace" summary --json "$t" 2>&1); then
			problems="$problems
    $base: cgtrace summary failed: $(printf '%s' "$sum" | head -c 400)"
			continue
		fi
		case $sum in
		*'"complete":true'*) ;;
		*) problems="$problems
    $base: not complete: $(printf '%s' "$sum" | head -c 400)" ;;
		esac
		n=$(printf '%s' "$sum" | sed -n 's/.*"alloc_count":\([0-9][0-9]*\).*/\1/p')
		nallocs=$((nallocs + ${n:-0}))
	done
	if [ "$ntraces" -eq 0 ]; then
		problems="$problems
    no trace written"
	fi

	if [ -z "$problems" ]; then
		row "$name" PASS "$ntraces" "$nallocs" "$(secs "$native_us")" "$(secs "$probed_us")"
		passed=$((passed + 1))
	else
		row "$name" FAIL "$ntraces" "$nallocs" "$(secs "$native_us")" "$(secs "$probed_us")"
		printf '%s\n' "${problems#?}"
		failed=$((failed + 1))
		if [ -n "${COMPAT_KEEP:-}" ]; then
			mkdir -p "$COMPAT_KEEP/$name"
			cp -r "$tmp/res" "$tmp/traces" "$COMPAT_KEEP/$name/"
		fi
	fi
done

echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]

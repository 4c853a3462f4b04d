#!/bin/sh
# cgtrace top, leaks, memory and the folded export on traces of a program
# with known call chains (tests/symbols/sym-target.c writes its own trace,
# stacks and modules as the probe records them): the functions and lines
# named, one site reached through two callers as two stacks, a stripped
# copy resolved through its build-id debug file under CGTRACE_DEBUG_DIR, a
# build-id mismatch and a missing file as module+offset with one warning.
#   test-stacks-cli.sh CGTRACE SYM_TARGET
set -u
# shellcheck source=tests/lib/sh-check.sh
. "$(dirname "$0")/lib/sh-check.sh"
need_args 2 "test-stacks-cli.sh CGTRACE SYM_TARGET" "$@"
cgtrace=$(abs "$1") target=$(abs "$2")
skip_unless_built "$target"
make_tmp
unset CGTRACE_DEBUG_DIR

"$target" trace >"$tmp/t.jsonl" 2>"$tmp/expect" || { echo "FAIL sym-target"; exit 1; }
# expect FILE take_in_helper helper_in_twice twice_in_a twice_in_b take_in_leak
read -r _ _ l_take l_helper l_a l_b l_leak <"$tmp/expect"

# run NAME CMD...: stdout in $tmp/out, stderr in $tmp/err.
run() {
	name=$1
	shift
	"$@" >"$tmp/out" 2>"$tmp/err" || { ko "$name: exit status $?"; return 1; }
}
has() { grep -qF -- "$2" "$tmp/out" && ok || ko "$1: no '$2' in: $(head -c 600 "$tmp/out")"; }
warnings() { grep -c "$2" "$tmp/err"; }

if run top "$cgtrace" top "$tmp/t.jsonl"; then
	has "top names the inlined site" "inl_helper (sym-target.c:$l_take)"
	has "top ranks the peak's 1000 bytes" "1000 B"
	[ -s "$tmp/err" ] && ko "top: warnings" || ok
fi
if run top-total "$cgtrace" top --by total --json "$tmp/t.jsonl"; then
	# fill_a (1000) and fill_b (300 + 200) reach one site: one row, two stacks.
	has "one site, two stacks" '"stacks":2,"count":3,"total_bytes":1500'
fi
if run top-full "$cgtrace" top --by total --full "$tmp/t.jsonl"; then
	has "the first caller" "fill_a (sym-target.c:$l_a)"
	has "the second caller" "fill_b (sym-target.c:$l_b)"
	has "the inline chain" "alloc_twice (sym-target.c:$l_helper)"
	has "inlined marked" "inl_helper (sym-target.c:$l_take) [inlined]"
fi
if run leaks "$cgtrace" leaks "$tmp/t.jsonl"; then
	has "leaks names the leak" "leak_one (sym-target.c:$l_leak)"
	has "leaks counts it" "64 B in 1 allocation on cpu"
fi
if run folded "$cgtrace" export --format folded --by total "$tmp/t.jsonl"; then
	has "folded root first" "main;fill_a;alloc_twice;inl_helper 1000"
	has "folded second caller" "main;fill_b;alloc_twice;inl_helper 500"
	has "folded leak" "main;leak_one 64"
fi
if run memory "$cgtrace" memory --json "$tmp/t.jsonl"; then
	has "memory --json frames" '"function":"inl_helper","file":'
	has "memory --json line" "\"line\":$l_take,"
fi

# A stripped copy, its debug file laid out by build id.
if command -v objcopy >/dev/null && command -v strip >/dev/null; then
	mkdir -p "$tmp/bin" "$tmp/dbg"
	cp "$target" "$tmp/bin/sym-target"
	"$tmp/bin/sym-target" trace >"$tmp/s.jsonl" 2>/dev/null
	id=$(grep -o "\"path\":\"$tmp/bin/sym-target\"[^}]*" "$tmp/s.jsonl" |
		sed -n 's/.*"build_id":"\([0-9a-f]*\)".*/\1/p')
	d=$(printf %s "$id" | cut -c1-2)
	rest=$(printf %s "$id" | cut -c3-)
	mkdir -p "$tmp/dbg/.build-id/$d"
	objcopy --only-keep-debug "$tmp/bin/sym-target" "$tmp/dbg/.build-id/$d/$rest.debug"
	strip --strip-all "$tmp/bin/sym-target"
	if run stripped-alone "$cgtrace" top "$tmp/s.jsonl"; then
		has "stripped without its debug file: module+offset" "sym-target+0x"
	fi
	if run stripped "env" CGTRACE_DEBUG_DIR="$tmp/dbg" "$cgtrace" top "$tmp/s.jsonl"; then
		has "stripped resolves through the build-id file" "inl_helper (sym-target.c:$l_take)"
	fi
else
	skip "stripped copy: no objcopy or strip"
fi

# The file on disk is not the one recorded: module+offset, one warning for the module.
pre='\("path":"[^"]*/sym-target","base":"[^"]*","start":"[^"]*","end":"[^"]*","build_id":"\)'
sed "s#${pre}0#\1@#; s#${pre}[1-9a-f]#\10#; s#${pre}@#\11#" "$tmp/t.jsonl" >"$tmp/m.jsonl"
cmp -s "$tmp/t.jsonl" "$tmp/m.jsonl" && ko "mismatch: the build id not changed"
if run mismatch "$cgtrace" top --full "$tmp/m.jsonl"; then
	has "mismatch: module+offset" "sym-target+0x"
	[ "$(warnings mismatch 'build id')" -eq 1 ] && ok || ko "mismatch: one warning"
	grep -q "inl_helper" "$tmp/out" && ko "mismatch: still named" || ok
fi
sed "s#\"path\":\"$(dirname "$target")/sym-target\"#\"path\":\"/nonexistent/sym-target\"#" \
	"$tmp/t.jsonl" >"$tmp/n.jsonl"
if run missing "$cgtrace" top --full "$tmp/n.jsonl"; then
	has "missing: module+offset" "sym-target+0x"
	[ "$(warnings missing '/nonexistent/sym-target: ')" -eq 1 ] && ok || ko "missing: one warning"
fi
finish

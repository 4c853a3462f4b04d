#!/bin/sh
# Golden tests for the cgtrace command line: runs each case of cases.txt and
# compares stdout, stderr and the exit status with expected/NAME.{out,err}.
#   run-golden.sh CGTRACE [--update]
set -u
case "$1" in /*) cgtrace=$1 ;; *) cgtrace=$(pwd)/$1 ;; esac
update=${2:-}
here=$(cd "$(dirname "$0")" && pwd)
cd "$here" || exit 1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# The compressed copy is made here so the repository holds one source of truth.
zstd -q -f -o "$tmp/train.jsonl.zst" traces/train.jsonl || exit 1
# The summary's sparkline follows the locale's character set: ASCII here,
# block elements in the cases named *-utf8.
export LC_ALL=C
pass=0
fail=0
while IFS='|' read -r name args status input; do
  name=$(echo "$name" | tr -d ' ')
  case "$name" in ''|'#'*) continue ;; esac
  status=$(echo "$status" | tr -d ' ')
  # The optional fourth field is the file on standard input (/dev/null
  # without it, so a command reading stdin never eats this loop's cases).
  input=$(echo "${input:-/dev/null}" | tr -d ' ')
  args=$(echo "$args" | sed "s#traces/train.jsonl.zst#$tmp/train.jsonl.zst#")
  locale=C
  case "$name" in *-utf8) locale=C.UTF-8 ;; esac
  # shellcheck disable=SC2086
  LC_ALL=$locale "$cgtrace" $args <"$input" >"$tmp/out" 2>"$tmp/err"
  got=$?
  sed -i "s#$tmp/#traces/#g" "$tmp/out" "$tmp/err"
  if [ "$update" = "--update" ]; then
    cp "$tmp/out" "expected/$name.out"
    cp "$tmp/err" "expected/$name.err"
  fi
  if [ "$got" != "$status" ]; then
    echo "FAIL $name: exit status $got, expected $status"; cat "$tmp/err"; fail=$((fail + 1)); continue
  fi
  if ! diff -u "expected/$name.out" "$tmp/out" || ! diff -u "expected/$name.err" "$tmp/err"; then
    echo "FAIL $name: output differs"; fail=$((fail + 1)); continue
  fi
  pass=$((pass + 1))
done < cases.txt
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ] && [ "$pass" -gt 0 ]

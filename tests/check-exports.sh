#!/bin/sh
# Every function declared in include/cgtrace.h is exported by libcgtrace.so,
# and nothing else is.
#   check-exports.sh HEADER LIBRARY
set -eu
decl=$(grep -oE 'cgtrace_[a-z_0-9]+\(' "$1" | tr -d '(' | sort -u)
def=$(nm -D --defined-only "$2" | awk '$2 ~ /^[TWDB]$/ {print $3}' | sed 's/@.*//' | sort -u)
missing=$(printf '%s\n' "$decl" | grep -vxF "$def" || true)
extra=$(printf '%s\n' "$def" | grep -vxF "$decl" || true)
[ -z "$missing" ] || { echo "declared but not exported: $missing"; exit 1; }
[ -z "$extra" ] || { echo "exported but not declared: $extra"; exit 1; }
echo "1 passed, 0 failed"

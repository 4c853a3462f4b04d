#!/bin/sh
# libcgprobe.so exports exactly the names its version script lists (the
# wrapped functions and the annotation API) and needs no CUDA library.
#   check-probe-exports.sh MAP LIBRARY
set -eu
listed=$(sed -n '/global:/,/local:/p' "$1" | tr -s ' \t;' '\n' | grep -E '^[A-Za-z_][A-Za-z0-9_]*$' |
  grep -vx 'global\|local' | sort -u)
exported=$(nm -D --defined-only "$2" | awk '$2 ~ /^[TWDBi]$/ {print $3}' | sed 's/@.*//' | sort -u)
missing=$(printf '%s\n' "$listed" | grep -vxF "$exported" || true)
extra=$(printf '%s\n' "$exported" | grep -vxF "$listed" || true)
[ -z "$missing" ] || { echo "listed but not exported: $missing"; exit 1; }
[ -z "$extra" ] || { echo "exported but not listed: $extra"; exit 1; }
if readelf -d "$2" | grep NEEDED | grep -qi 'cuda'; then
  echo "libcgprobe.so needs a CUDA library:"; readelf -d "$2" | grep NEEDED; exit 1
fi
echo "1 passed, 0 failed"

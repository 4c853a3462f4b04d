#!/bin/sh
# SPDX-License-Identifier: MIT
# Runs test-forks.py (its checks are described there) with python3,
# skipped (77) where python3 is absent.
command -v python3 >/dev/null 2>&1 || { echo "SKIP: no python3"; exit 77; }
exec python3 "$(dirname "$0")/test-forks.py" "$@"

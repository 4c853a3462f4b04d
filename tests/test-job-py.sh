#!/bin/sh
# SPDX-License-Identifier: MIT
# Runs tests/test-job-NAME.py, one feature of a job of many processes
# (docs/jobs.md; its checks are described there), with python3, skipped
# (77) where python3 is absent.
#   test-job-py.sh NAME ARGS...
command -v python3 >/dev/null 2>&1 || { echo "SKIP: no python3"; exit 77; }
name=$1
shift
exec python3 "$(dirname "$0")/test-job-$name.py" "$@"

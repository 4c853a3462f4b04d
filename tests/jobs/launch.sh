#!/bin/sh
# SPDX-License-Identifier: MIT
# Starts the two ranks of ddp_train.py as torchrun does (its variables),
# for torch versions whose torchrun fails before starting one (Debian's
# 1.13 on Python 3.11): launch.sh PYTHON SCRIPT PORT. Fails when a rank does.
py=$1 script=$2 port=$3
pids=
for r in 0 1; do
	RANK=$r LOCAL_RANK=$r WORLD_SIZE=2 LOCAL_WORLD_SIZE=2 GROUP_RANK=0 MASTER_ADDR=127.0.0.1 \
		MASTER_PORT=$port "$py" "$script" env &
	pids="$pids $!"
done
st=0
for p in $pids; do wait "$p" || st=1; done
exit $st

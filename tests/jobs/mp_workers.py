# SPDX-License-Identifier: MIT
# Three multiprocessing workers started by METHOD (fork, spawn, forkserver),
# for tests/test-job-mp.sh. Worker 0 keeps 4 MiB in a bytearray until it
# returns; the others allocate next to nothing. Prints every process it
# knows of, one a line, for the test to find each one's trace:
#   main PID
#   worker I PID
#   tracker PID     the resource tracker (spawn, forkserver)
#   server PID      the fork server (forkserver)
# Exits 1 when a worker failed.
#   mp_workers.py METHOD
import multiprocessing as mp
import os
import sys
import time

MiB = 1 << 20


def work(i):
    if i == 0:
        keep = bytearray(4 * MiB)
        keep[-1] = 1
        time.sleep(0.2)
        assert keep[-1] == 1
    else:
        sum(range(1000))


def main():
    method = sys.argv[1]
    ctx = mp.get_context(method)
    print("main", os.getpid(), flush=True)
    workers = [ctx.Process(target=work, args=(i,)) for i in range(3)]
    for w in workers:
        w.start()
    for i, w in enumerate(workers):
        print("worker", i, w.pid, flush=True)
    if method in ("spawn", "forkserver"):
        from multiprocessing import resource_tracker
        print("tracker", resource_tracker._resource_tracker._pid, flush=True)
    if method == "forkserver":
        from multiprocessing import forkserver
        print("server", forkserver._forkserver._forkserver_pid, flush=True)
    for w in workers:
        w.join()
    return 0 if all(w.exitcode == 0 for w in workers) else 1


if __name__ == "__main__":
    sys.exit(main())

# SPDX-License-Identifier: MIT
"""What the Python test programs share: counted checks and their verdict."""

failures = []
passes = 0


def check(cond, what):
    """One check: counted when it holds, printed and kept when it does not."""
    global passes
    if cond:
        passes += 1
    else:
        failures.append(what)
        print("FAIL " + what)


def verdict():
    """The counts on stdout; the exit status (1 when a check failed)."""
    print("%d passed, %d failed" % (passes, len(failures)))
    return 1 if failures else 0

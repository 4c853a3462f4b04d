# SPDX-License-Identifier: MIT
# The small test file tests/test-pytest-plugin.sh runs under 'cgprobe pytest':
# one test over its peak limit and one under, one over its leak limit and
# one under. The lines marked OVER and LEAK are the sites the failures name.
import pytest

_kept = []


@pytest.mark.cgprobe_limit(peak="64 MiB")
def test_over():
    block = bytearray(80 * 1024 * 1024)  # OVER
    del block


@pytest.mark.cgprobe_limit(peak="64 MiB", device="cpu")
def test_under():
    block = bytearray(8 * 1024 * 1024)
    del block


@pytest.mark.cgprobe_leaks(max="1 MiB")
def test_leaks():
    _kept.append(bytearray(4 * 1024 * 1024))  # LEAK


@pytest.mark.cgprobe_leaks(max="1MB")
def test_no_leak():
    block = bytearray(4 * 1024 * 1024)
    del block

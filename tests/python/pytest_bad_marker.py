# SPDX-License-Identifier: MIT
# A marker whose size is no size: the test errors at its setup, saying so.
import pytest


@pytest.mark.cgprobe_limit(peak="lots")
def test_bad_size():
    pass

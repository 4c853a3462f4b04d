# SPDX-License-Identifier: MIT
"""cgprobe's pytest plugin: a span per test, memory limits as markers.

``cgprobe pytest ARGS`` runs ``python3 -m pytest -p cgprobe.pytest_plugin ARGS``
under the probe. Each test runs inside a span named after its node id, and
two markers fail a test that breaks them, checked in the process when the
test function returns, from the probe's live figures (include/cgprobe.h,
cgprobe_memory_*):

    @pytest.mark.cgprobe_limit(peak="64 MiB", device="cpu")
    @pytest.mark.cgprobe_leaks(max="1 MiB", device="cpu")

Both count from what was live when the test function began (its fixtures
set up): the peak is the highest live bytes while it ran less those, a leak
what is still live after it returned (and a garbage collection) beyond
those. Without the probe the markers are not checked, with one warning.
See docs/pytest.md.
"""

import gc
import re
import warnings

import pytest

import cgprobe

_MARKERS = {
    "cgprobe_limit": ("peak", "cgprobe_limit(peak, device='cpu'): fail the test when its live "
                      "bytes on device rise more than peak (\"64 MiB\") above what was live when "
                      "it began (checked under cgprobe pytest)"),
    "cgprobe_leaks": ("max", "cgprobe_leaks(max, device='cpu'): fail the test when more than max "
                      "(\"1 MiB\") of what it allocated on device is still live after it returns "
                      "(checked under cgprobe pytest)"),
}
_UNITS = {"b": 1, "kb": 1000, "mb": 1000 ** 2, "gb": 1000 ** 3, "tb": 1000 ** 4,
          "kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30, "tib": 1 << 40}
_SIZE = re.compile(r"\s*([0-9]+(?:\.[0-9]*)?|\.[0-9]+)\s*([A-Za-z]*)\s*\Z")
_checks_key = pytest.StashKey[list]()
_failures_key = pytest.StashKey[list]()
_live = None  # whether the probe records this process with live figures (pytest_configure)
_warned = False


def parse_size(value):
    """Bytes from 64 MiB, "64MiB", "1 MB" (KB, MB, GB, TB: powers of 1000; KiB, MiB,
    GiB, TiB: of 1024; B or nothing: bytes) or a number of bytes; ValueError else."""
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0:
        return int(value)
    m = _SIZE.match(value) if isinstance(value, str) else None
    unit = _UNITS.get(m.group(2).lower() if m and m.group(2) else "b") if m else None
    if unit is None:
        raise ValueError("%r is not a size (a number and B, KB, MB, GB, TB, KiB, MiB, GiB or "
                         "TiB, such as \"64 MiB\")" % (value,))
    return int(float(m.group(1)) * unit)


def human(n):
    """n bytes as cgtrace prints them: B, then KiB, MiB, GiB, TiB with one decimal."""
    if n < 1024:
        return "%d B" % n
    v, unit = n / 1024.0, "KiB"
    for u in ("MiB", "GiB", "TiB"):
        if v < 1024:
            break
        v, unit = v / 1024.0, u
    return "%.1f %s" % (v, unit)


def pytest_configure(config):
    global _live
    for _, text in _MARKERS.values():
        config.addinivalue_line("markers", text)
    _live = cgprobe.memory_mark() is not None


def pytest_report_header(config):
    if _live:
        return "cgprobe: live figures from the probe; a span per test, cgprobe_* markers checked"
    return ("cgprobe: no probe records this process (run it as 'cgprobe pytest ARGS'): "
            "cgprobe_limit and cgprobe_leaks are not checked")


def _checks(item):
    """The item's markers as (kind, limit in bytes, device); a bad
    one is a usage error of the test, reported at its setup."""
    out = []
    for name, (key, _) in _MARKERS.items():
        for mark in item.iter_markers(name):
            args = dict(mark.kwargs)
            if mark.args:
                args.setdefault(key, mark.args[0])
            unknown = set(args) - {key, "device"}
            if key not in args or unknown or len(mark.args) > 1:
                pytest.fail("%s on %s: give %s=SIZE and optionally device=NAME, not %s"
                            % (name, item.nodeid, key, mark), pytrace=False)
            device = args.get("device", "cpu")
            try:
                limit = parse_size(args[key])
            except ValueError as e:
                pytest.fail("%s on %s: %s=%s" % (name, item.nodeid, key, e), pytrace=False)
            if not isinstance(device, str) or not device:
                pytest.fail("%s on %s: device must name a device such as 'cpu' or 'cuda:0', "
                            "not %r" % (name, item.nodeid, device), pytrace=False)
            out.append((name, limit, device))
    return out


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    span = cgprobe.begin_span(item.nodeid) if _live else 0
    try:
        yield
    finally:
        cgprobe.end_span(span)


def pytest_runtest_setup(item):
    global _warned
    checks = _checks(item)
    item.stash[_checks_key] = checks
    if checks and not _live and not _warned:
        _warned = True
        warnings.warn(pytest.PytestWarning(
            "cgprobe: the probe does not record this process, so cgprobe_limit and "
            "cgprobe_leaks are not checked: run the tests as 'cgprobe pytest ARGS'"))


def _where(item):
    path, line, name = item.location
    return "%s (%s:%d)" % (name, path, (line or 0) + 1)


def _site(item, device, kept=False):
    """Where the peak (kept: a leak) comes from, the file relative to the root when it
    is under it."""
    s = (cgprobe.memory_kept_site if kept else cgprobe.memory_site)(device)
    if s is None:
        return None
    path = s.file
    root = str(item.config.rootpath)
    if path.startswith(root + "/"):
        path = path[len(root) + 1:]
    return "%s:%d (%s)" % (path, s.line, s.function)


def _verdicts(item, checks, before):
    gc.collect()
    failures = []
    for name, limit, device in checks:
        f = cgprobe.memory_now(device)
        if f is None:
            continue
        if name == "cgprobe_limit":
            peak = f.peak_bytes - f.mark_bytes if f.mark == before[device].mark else None
            if peak is None:
                failures.append("cgprobe: cannot check %s of %s: the test made a mark of its "
                                "own (cgprobe.memory_mark)" % (name, _where(item)))
            elif peak > limit:
                site = _site(item, device)
                failures.append(
                    "cgprobe: peak %s on %s over the limit %s%s\n"
                    "  in %s; %s were live when it began, not counted%s"
                    % (human(peak), device, human(limit),
                       ", mostly from " + site if site else "", _where(item),
                       human(f.mark_bytes),
                       "; the largest allocation that raised the peak: %s"
                       % human(f.peak_alloc_bytes) if f.peak_alloc_bytes else ""))
        else:
            grown = f.live_bytes - before[device].live_bytes
            if grown > limit:
                site = _site(item, device, kept=True)
                failures.append(
                    "cgprobe: %s on %s still live after the test, over the leak limit %s%s\n"
                    "  in %s; %d more allocations live than when it began%s"
                    % (human(grown), device, human(limit),
                       ", kept from " + site if site else "", _where(item),
                       f.live_count - before[device].live_count,
                       "; the largest of them kept from there: %s" % human(f.kept_alloc_bytes)
                       if site and f.kept_alloc_bytes else ""))
    return failures


@pytest.hookimpl(hookwrapper=True, trylast=True)
def pytest_runtest_call(item):
    checks = item.stash.get(_checks_key, []) if _live else []
    if not checks:
        yield
        return
    # Garbage of earlier tests is not this test's.
    gc.collect()
    cgprobe.memory_mark()
    before = {device: cgprobe.memory_now(device) for _, _, device in checks}
    outcome = yield
    # None: the probe stopped recording (an output error); it said why on stderr.
    if outcome.excinfo is None and None not in before.values():
        item.stash[_failures_key] = _verdicts(item, checks, before)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    failures = item.stash.get(_failures_key, None) if call.when == "call" else None
    if failures and call.excinfo is None:
        # A failure of the call, so pytest reports it as any other (the FAILURES section,
        # the short summary's line, -x, the exit status).
        try:
            pytest.fail("\n".join(failures), pytrace=False)
        except pytest.fail.Exception:
            call.excinfo = pytest.ExceptionInfo.from_current()
    yield

"""This project's own rerun policy for its test suites: not a plugin any user's tests load.

The core's and the providers' test configurations load it by name (``addopts = -p
dsh_user_questions._reruns`` in their ``[pytest]`` sections); nothing else does, and the
public pytest plugin (`dsh_user_questions._pytest_plugin`) neither declares a marker for it nor
reruns anything.

A test that waits on outside timing (a real pty, a browser, a database server, a subprocess)
is marked ``dsh_timing`` and, with pytest-rerunfailures installed, a failed one runs up to
``dsh_timing_reruns`` more times (ini option, default 2); no other test is retried. Two ini
options choose those tests without touching them: ``dsh_timing_fixtures`` (fixture names:
every test using one; ``name=value`` only for that parameter of a parametrized fixture) and
``dsh_timing_tests`` (``fnmatch`` patterns of test paths or node ids, parameters left out,
e.g. ``tests/cli/test_cli.py`` or ``tests/test_x.py::test_y``). With ``DSH_RERUN_LOG=<file>`` in
the environment, the number of reruns of the session is appended to that file, with a line
for each saying which test was retried and why its try failed (``scripts/test`` adds the
numbers up and prints those lines).

The same mark splits a provider's suite in two where its ``[pytest]`` section sets
``dsh_split_by_timing = true``: ``DSH_TEST_PART=unit`` runs the tests that are not
``dsh_timing`` (its pyXY tox environments, on every Python), ``DSH_TEST_PART=e2e`` only those
(its ``e2e`` environment, on the newest Python); unset, everything runs.
"""

from __future__ import annotations

import fnmatch
import os
from typing import Any

import pytest

MARKER = "dsh_timing"


def pytest_addoption(parser: pytest.Parser) -> None:
    """The ini options choosing which tests are retried."""
    parser.addini(
        "dsh_timing_fixtures",
        "fixtures whose users wait on outside timing (retried)",
        type="args",
        default=[],
    )
    parser.addini(
        "dsh_timing_tests",
        "fnmatch patterns of test paths or node ids (no parameters) that wait on outside timing",
        type="args",
        default=[],
    )
    parser.addini("dsh_timing_reruns", "reruns of a failed timing test", default="2")
    parser.addini(
        "dsh_split_by_timing",
        "DSH_TEST_PART=unit|e2e runs the tests that are not dsh_timing, or only those",
        type="bool",
        default=False,
    )


def pytest_configure(config: pytest.Config) -> None:
    """Declare the ``dsh_timing`` marker."""
    config.addinivalue_line(
        "markers",
        f"{MARKER}: waits on outside timing (a pty, a browser, a database server, a"
        " subprocess); retried when pytest-rerunfailures is installed",
    )


def _is_timing(item: pytest.Item, fixtures: list[str], patterns: list[str]) -> bool:
    if item.get_closest_marker(MARKER) is not None:
        return True
    used = set(getattr(item, "fixturenames", ()))
    params = getattr(getattr(item, "callspec", None), "params", {})
    for fixture in fixtures:
        name, _, value = fixture.partition("=")
        if name in used and (not value or str(params.get(name)) == value):
            return True
    nodeid = item.nodeid.split("[", 1)[0]
    path = nodeid.split("::", 1)[0]
    return any(fnmatch.fnmatch(nodeid, p) or fnmatch.fnmatch(path, p) for p in patterns)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark the timing tests, and give only them reruns."""
    fixtures = list(config.getini("dsh_timing_fixtures"))
    patterns = list(config.getini("dsh_timing_tests"))
    reruns = int(config.getini("dsh_timing_reruns"))
    can_rerun = config.pluginmanager.hasplugin("rerunfailures")
    for item in items:
        if not _is_timing(item, fixtures, patterns):
            continue
        if item.get_closest_marker(MARKER) is None:
            item.add_marker(MARKER)
        if can_rerun and reruns > 0 and item.get_closest_marker("flaky") is None:
            item.add_marker(pytest.mark.flaky(reruns=reruns, reruns_delay=1))
    part = os.environ.get("DSH_TEST_PART", "")
    if part in ("unit", "e2e") and config.getini("dsh_split_by_timing"):
        wanted = part == "e2e"
        kept: list[pytest.Item] = []
        dropped: list[pytest.Item] = []
        for item in items:
            timing = item.get_closest_marker(MARKER) is not None
            (kept if timing == wanted else dropped).append(item)
        if dropped:
            config.hook.pytest_deselected(items=dropped)
            items[:] = kept


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """Append this session's number of reruns to ``$DSH_RERUN_LOG``, when it is set, then a
    ``retried`` line for each: the test and the last line of why its try failed."""
    log = os.environ.get("DSH_RERUN_LOG")
    if not log:
        return
    reruns = terminalreporter.stats.get("rerun", [])
    where = terminalreporter.config.rootpath
    with open(log, "a", encoding="utf-8") as file:
        file.write(f"{len(reruns)} {where}\n")
        for report in reruns:
            file.write(f"retried\t{where}\t{report.nodeid}: {_why(report)}\n")


def _why(report: Any) -> str:
    """The failure's message (pytest's crash line), on one line, at most 200 characters."""
    crash = getattr(report.longrepr, "reprcrash", None)
    text = getattr(crash, "message", None) or str(report.longrepr or "")
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    why = lines[0] if crash is not None and lines else (lines[-1] if lines else "no message")
    return why if len(why) <= 200 else why[:199] + "…"

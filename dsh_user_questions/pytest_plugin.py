"""Pytest fixtures for harness authors, loaded through the ``pytest11`` entry point.

- ``dsh_context``: a fresh `HarnessContext` with the user-questions plugin registered and an
  agent registry;
- ``user_questions``: its service;
- ``scripted_provider``: an empty `ScriptedProvider` registered on that service (``push``
  steps onto it), disposed after the test.

An ``async def`` test that uses one of these fixtures runs in an event loop of its own
(``asyncio.run``) when no async plugin (pytest-asyncio, anyio) has taken it, so a harness's
tests need no async configuration.

It also gives the ``timing`` marker: a test that waits on outside timing (a real pty, a
browser, a database server, a subprocess) and may be retried. With pytest-rerunfailures
installed, a failed ``timing`` test runs up to ``dsh_timing_reruns`` more times (ini option,
default 2); no other test is retried. Two ini options mark tests ``timing`` without touching
them: ``dsh_timing_fixtures`` (fixture names: every test using one; ``name=value`` only for
that parameter of a parametrized fixture) and ``dsh_timing_tests`` (``fnmatch`` patterns of
test paths or node ids, parameters left out, e.g. ``tests/test_cli.py`` or
``tests/test_x.py::test_y``). With ``DSH_RERUN_LOG=<file>`` in the
environment, the number of reruns of the session is appended to that file (``scripts/test``
adds them up).
"""

from __future__ import annotations

import asyncio
import fnmatch
import inspect
import os
from collections.abc import Iterator
from typing import Any

import pytest

from . import plugin
from .harness import HarnessContext
from .service import UserQuestionService
from .testing import ScriptedProvider

_KIT_FIXTURES = frozenset({"dsh_context", "user_questions", "scripted_provider"})


@pytest.fixture
def dsh_context() -> HarnessContext:
    """A fresh harness context with the user-questions plugin registered."""
    ctx = HarnessContext()
    ctx.register(plugin)
    return ctx


@pytest.fixture
def user_questions(dsh_context: HarnessContext) -> UserQuestionService:
    """The ``user_questions`` service of ``dsh_context``."""
    service: UserQuestionService = dsh_context.user_questions
    return service


@pytest.fixture
def scripted_provider(user_questions: UserQuestionService) -> Iterator[ScriptedProvider]:
    """A `ScriptedProvider` registered on ``user_questions`` for the test."""
    provider = ScriptedProvider()
    dispose = user_questions.register_provider(provider)
    yield provider
    dispose()


def pytest_addoption(parser: pytest.Parser) -> None:
    """The ini options choosing which tests are ``timing`` tests."""
    parser.addini(
        "dsh_timing_fixtures",
        "fixtures whose users wait on outside timing (marked timing)",
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


def pytest_configure(config: pytest.Config) -> None:
    """Declare the ``timing`` marker."""
    config.addinivalue_line(
        "markers",
        "timing: waits on outside timing (a pty, a browser, a database server, a subprocess);"
        " retried when pytest-rerunfailures is installed",
    )


def _is_timing(item: pytest.Item, fixtures: list[str], patterns: list[str]) -> bool:
    if item.get_closest_marker("timing") is not None:
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
        if item.get_closest_marker("timing") is None:
            item.add_marker(pytest.mark.timing)
        if can_rerun and reruns > 0 and item.get_closest_marker("flaky") is None:
            item.add_marker(pytest.mark.flaky(reruns=reruns, reruns_delay=1))


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function) -> bool | None:
    """Run an ``async def`` test of the kit's fixtures that no async plugin has taken."""
    function = pyfuncitem.obj
    if type(pyfuncitem) is not pytest.Function or not inspect.iscoroutinefunction(function):
        return None  # a plain test, or an async plugin's own item
    if not _KIT_FIXTURES.intersection(pyfuncitem.fixturenames):
        return None
    if pyfuncitem.get_closest_marker("asyncio") or pyfuncitem.get_closest_marker("anyio"):
        return None
    names = pyfuncitem._fixtureinfo.argnames
    arguments: dict[str, Any] = {name: pyfuncitem.funcargs[name] for name in names}
    asyncio.run(function(**arguments))
    return True


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """Append this session's number of reruns to ``$DSH_RERUN_LOG``, when it is set."""
    log = os.environ.get("DSH_RERUN_LOG")
    if not log:
        return
    reruns = len(terminalreporter.stats.get("rerun", []))
    where = terminalreporter.config.rootpath
    with open(log, "a", encoding="utf-8") as file:
        file.write(f"{reruns} {where}\n")

"""Pytest fixtures for harness authors, loaded through the ``pytest11`` entry point.

- ``dsh_context``: a fresh `HarnessContext` with the user-questions plugin registered and an
  agent registry;
- ``user_questions``: its service;
- ``scripted_provider``: an empty `ScriptedProvider` registered on that service (``push``
  steps onto it), disposed after the test.

An ``async def`` test that uses one of these fixtures runs in an event loop of its own
(``asyncio.run``) when no async plugin (pytest-asyncio, anyio) has taken it, so a harness's
tests need no async configuration.

Nothing else: it declares no marker and no option, and never reruns, skips or reorders a
test. (This project's own suites retry their few tests that wait on outside timing with a
plugin of their own, `dsh_user_questions._reruns`, loaded only by their configuration.)
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Iterator
from typing import Any

import pytest

from . import plugin
from ._service import UserQuestionService
from .harness import HarnessContext
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
    names = inspect.signature(function).parameters
    arguments: dict[str, Any] = {name: pyfuncitem.funcargs[name] for name in names}
    asyncio.run(function(**arguments))
    return True

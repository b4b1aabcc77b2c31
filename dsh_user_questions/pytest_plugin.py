"""Pytest fixtures for harness authors, loaded through the ``pytest11`` entry point.

- ``dsh_context``: a fresh `HarnessContext` with the user-questions plugin registered and an
  agent registry;
- ``user_questions``: its service;
- ``scripted_provider``: an empty `ScriptedProvider` registered on that service (``push``
  steps onto it), disposed after the test.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from . import plugin
from .harness import HarnessContext
from .service import UserQuestionService
from .testing import ScriptedProvider


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

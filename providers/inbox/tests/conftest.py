"""Fixtures: a store on a real SQLite file or a real PostgreSQL server, for the same tests."""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from _postgres import PostgresServer, find_bin
from _processes import Harness
from dsh_user_questions import UserQuestionService
from dsh_user_questions.harness import HarnessContext

from dsh_user_questions_inbox import Inbox, open_inbox
from dsh_user_questions_inbox.provider import InboxProvider

ENGINES = ["sqlite", "postgresql"]


def _postgres_or_skip() -> Path:
    bindir = find_bin()
    if bindir is None:
        message = "PostgreSQL is not installed (Debian package postgresql)"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"{message}; CI must install it (.ci/run)")
        pytest.skip(message)
    return bindir


@pytest.fixture(scope="session")
def postgres() -> Iterator[PostgresServer]:
    """One PostgreSQL server for the session; each test takes a fresh database on it."""
    server = PostgresServer(_postgres_or_skip())
    try:
        server.start()
        yield server
    finally:
        server.destroy()


@pytest.fixture
def own_postgres() -> Iterator[PostgresServer]:
    """A PostgreSQL server of the test's own, which the test may restart."""
    server = PostgresServer(_postgres_or_skip())
    try:
        server.start()
        yield server
    finally:
        server.destroy()


@pytest.fixture(params=ENGINES)
def inbox_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A fresh store URL on each engine."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'inbox.db'}"
    server: PostgresServer = request.getfixturevalue("postgres")
    return server.new_database()


@pytest.fixture
def inbox(inbox_url: str) -> Iterator[Inbox]:
    """An open store at ``inbox_url``."""
    store = open_inbox(inbox_url)
    try:
        yield store
    finally:
        store.close()


@pytest.fixture
def harnesses() -> Iterator[list[Harness]]:
    """Harness processes started by the test; killed if the test leaves them running."""
    started: list[Harness] = []
    yield started
    for harness in started:
        if harness.process.poll() is None:
            harness.kill()


@pytest.fixture
async def provider(inbox_url: str) -> AsyncIterator[InboxProvider]:
    """An inbox provider on its own connection to the test's store."""
    made = InboxProvider(inbox_url, harness="test-harness")
    yield made
    await asyncio.to_thread(made.close)


@pytest.fixture
def service(provider: InboxProvider, dsh_context: HarnessContext) -> UserQuestionService:
    """The context's service with the inbox provider registered."""
    dsh_context.user_questions.register_provider(provider)
    return dsh_context.user_questions

"""Waiting, from async tests, for the store to reach a state."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

from dsh_user_questions_inbox import Inbox, QuestionRecord


async def until(condition: Callable[[], object], what: str, timeout: float = 60.0) -> None:
    """Wait for ``condition()`` to hold, checking in a thread (it may read the store)."""
    deadline = time.monotonic() + timeout
    while not await asyncio.to_thread(condition):
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.02)


async def pending_one(inbox: Inbox) -> QuestionRecord:
    """The one pending question, once it is recorded."""
    await until(lambda: inbox.records(state="pending"), "the question to be recorded")
    (record,) = inbox.records(state="pending")
    return record

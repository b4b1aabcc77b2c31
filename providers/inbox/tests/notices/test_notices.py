"""Exactly one notification per question across processes on a store, with its answer link."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest
from dsh_user_questions import AskUserQuestionItem, AskUserQuestionRequest
from dsh_user_questions._links import verify_link_token
from dsh_user_questions._notify import Notifier
from dsh_user_questions.testing import json_receiver

from dsh_user_questions_inbox import Inbox, State, open_inbox
from dsh_user_questions_inbox._notices import Notices, QuestionNotifier


@pytest.fixture
def posts() -> Iterator[tuple[int, list[dict[str, Any]]]]:
    """A JSON receiver on 127.0.0.1: its port and the messages it got."""
    with json_receiver() as found:
        yield found


def waiting() -> AskUserQuestionRequest:
    return AskUserQuestionRequest(
        questions=[AskUserQuestionItem(id="db", header="Database", question="Drop the table?")]
    )


async def settle_tasks(*notifiers: QuestionNotifier) -> None:
    for _ in range(200):
        if not any(n._tasks for n in notifiers):
            return
        await asyncio.sleep(0.02)


async def test_two_processes_send_one_notification(
    inbox_url: str, posts: tuple[int, list[dict[str, Any]]]
) -> None:
    """Two notifiers on two connections to one store (two harnesses) send one message."""
    port, got = posts
    first, second = open_inbox(inbox_url), open_inbox(inbox_url)
    try:
        record = first.add(waiting(), harness="build-bot", agent="main")
        a = QuestionNotifier(first, Notifier([f"json://127.0.0.1:{port}/"]))
        b = QuestionNotifier(second, Notifier([f"json://127.0.0.1:{port}/"]))
        a.question_waiting(record)
        b.question_waiting(record)
        await settle_tasks(a, b)
    finally:
        first.close()
        second.close()
    [message] = got
    assert message["title"] == "A question is waiting: Database"
    assert message["message"].startswith(
        "build-bot (agent main) asks:\n- Database: Drop the table?"
    )


async def test_the_link_opens_that_question_when_a_server_published_one(
    inbox: Inbox, posts: tuple[int, list[dict[str, Any]]]
) -> None:
    """With a public URL published in the store, the message ends with a link for that question."""
    port, got = posts
    secret = Notices(inbox).publish_links("https://inbox.example")
    record = inbox.add(waiting(), harness="h")
    notifier = QuestionNotifier(inbox, Notifier([f"json://127.0.0.1:{port}/"]))
    notifier.question_waiting(record)
    await settle_tasks(notifier)
    [message] = got
    link = message["message"].rsplit("Answer: ", 1)[1]
    assert link.startswith("https://inbox.example/q/")
    assert verify_link_token(secret, link.rsplit("/", 1)[1]) == record.id


async def test_one_reminder_while_still_pending(
    inbox: Inbox, posts: tuple[int, list[dict[str, Any]]]
) -> None:
    """After the reminder delay a still-pending question gets one reminder; an answered one none."""
    port, got = posts
    pending = inbox.add(waiting(), harness="h")
    answered = inbox.add(waiting(), harness="h")
    notifier = QuestionNotifier(inbox, Notifier([f"json://127.0.0.1:{port}/"]), remind=0.3)
    notifier.question_waiting(pending)
    notifier.question_waiting(answered)
    inbox.answer(answered.id, {"answers": [{"id": "db", "custom": "no"}]}, surface="cli")
    await settle_tasks(notifier)
    titles = sorted(message["title"] for message in got)
    assert titles == [
        "A question is waiting: Database",
        "A question is waiting: Database",
        "Reminder: still waiting: Database",
    ]
    assert inbox.get(pending.id).state is State.PENDING  # type: ignore[union-attr]


async def test_a_dead_receiver_never_fails_the_caller(inbox: Inbox) -> None:
    """A receiver nobody listens on is logged; question_waiting returns at once either way."""
    notifier = QuestionNotifier(inbox, Notifier(["json://127.0.0.1:9/"], timeout=2))
    notifier.question_waiting(inbox.add(waiting(), harness="h"))
    await settle_tasks(notifier)
    await notifier.aclose()

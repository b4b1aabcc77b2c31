"""Exactly one notification per question across processes on a store, with its answer link."""

from __future__ import annotations

import asyncio
import logging
import re
import socket
import threading
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


@pytest.fixture
def silent_receiver() -> Iterator[tuple[int, threading.Event, threading.Event]]:
    """A receiver on 127.0.0.1 that takes a connection and never answers: its port, an event
    set once a sender connected, and one to set to drop the connection unanswered."""
    server = socket.create_server(("127.0.0.1", 0))
    connected, drop = threading.Event(), threading.Event()

    def hold() -> None:
        server.settimeout(60)
        try:
            connection, _ = server.accept()
        except OSError:  # nobody came (the test failed first) or the server closed
            return
        connected.set()
        drop.wait(120)
        connection.close()  # unanswered: the sender sees the connection end

    thread = threading.Thread(target=hold, daemon=True)
    thread.start()
    try:
        yield server.getsockname()[1], connected, drop
    finally:
        drop.set()
        server.close()
        thread.join(10)


async def test_a_dead_receiver_never_fails_the_caller(
    inbox: Inbox,
    silent_receiver: tuple[int, threading.Event, threading.Event],
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A receiver that never answers is logged; question_waiting returns at once either way.

    The receiver answers nothing until the test drops it, and the notifier would wait an hour
    for it: question_waiting has returned before the receiver even holds the request (it got
    it only afterwards), so it never waited on the send. The failed send is then a warning
    naming the target and the notification; the caller gets no error."""
    port, connected, drop = silent_receiver
    notifier = QuestionNotifier(inbox, Notifier([f"json://127.0.0.1:{port}/"], timeout=3600))
    caplog.set_level(logging.WARNING, logger="dsh_user_questions.notify")
    notifier.question_waiting(inbox.add(waiting(), harness="h"))  # returns: nothing raised
    assert not connected.is_set()  # the send has not even reached the receiver yet
    assert await asyncio.to_thread(connected.wait, 60), "the notification was never sent"
    drop.set()  # the receiver goes away without an answer
    await settle_tasks(notifier)
    await notifier.aclose()
    warned = [r.getMessage() for r in caplog.records if r.name == "dsh_user_questions.notify"]
    assert len(warned) == 1, warned
    assert re.fullmatch(
        rf"(sending a notification to json://127\.0\.0\.1:{port}.* failed: \w+"
        rf"|the notification target json://127\.0\.0\.1:{port}.* refused"
        r" 'A question is waiting: Database')",
        warned[0],
    ), warned[0]

"""Notifications of a team's inbox: a question with an audience goes only to its people's
Apprise tags (each a receiver of its own on 127.0.0.1), each send is a ``notified`` event
naming the tag; the people file's escalation notifies and admits a second audience."""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from dsh_user_questions import team
from dsh_user_questions._notify import Notifier
from dsh_user_questions.testing import json_receiver

from dsh_user_questions_inbox import AnswerOutcome, Inbox
from dsh_user_questions_inbox._notices import QuestionNotifier

PEOPLE = """
[people.ana]
tags = ["ana"]
[people.bo]
tags = ["bo", "pager"]
[people.cy]
tags = ["cy"]
[groups]
oncall = ["ana", "bo"]
leads = ["cy"]
"""

QUESTION = {
    "questions": [{"id": "db", "header": "Database", "question": "Drop the table?"}],
}

Receivers = dict[str, list[dict[str, Any]]]


@pytest.fixture
def receivers(tmp_path: Path) -> Iterator[tuple[Path, Receivers]]:
    """A JSON receiver per person (tag) and one untagged target, in one Apprise
    configuration file: its path, and what each receiver got."""
    with contextlib.ExitStack() as stack:
        got: Receivers = {}
        lines = []
        for name in ("ana", "bo", "cy", "untagged"):
            port, posts = stack.enter_context(json_receiver())
            got[name] = posts
            url = f"json://127.0.0.1:{port}/"
            lines.append(url if name == "untagged" else f"{name}={url}")
        config = tmp_path / "apprise.txt"
        config.write_text("\n".join(lines) + "\n", encoding="utf-8")
        yield config, got


async def settle(*notifiers: QuestionNotifier) -> None:
    for _ in range(500):
        if not any(n._tasks for n in notifiers):
            return
        await asyncio.sleep(0.02)


def notified(inbox: Inbox, question_id: str) -> list[str | None]:
    return [e.by for e in inbox.events(question_id) if e.event == "notified"]


async def test_a_question_with_an_audience_notifies_only_its_people(
    inbox: Inbox, tmp_path: Path, receivers: tuple[Path, Receivers]
) -> None:
    """For group:oncall, Ana's and Bo's receivers get the message, Cy's and the untagged one
    do not; the log names each tag sent to."""
    config, got = receivers
    people = tmp_path / "people.toml"
    people.write_text(PEOPLE, encoding="utf-8")
    inbox.people = team.People.load(people)
    record = await asyncio.to_thread(
        inbox.add, {**QUESTION, "audience": ["group:oncall"]}, harness="h"
    )
    notifier = QuestionNotifier(inbox, Notifier([str(config)]))
    notifier.question_waiting(record)
    await settle(notifier)
    assert [len(got[name]) for name in ("ana", "bo", "cy", "untagged")] == [1, 1, 0, 0]
    assert got["ana"][0]["title"] == "A question is waiting: Database"
    # Bo's tags are bo and pager; only bo has a target here.
    assert sorted(notified(inbox, record.id)) == ["ana", "bo"]  # type: ignore[type-var]


async def test_a_question_without_an_audience_notifies_every_target(
    inbox: Inbox, receivers: tuple[Path, Receivers]
) -> None:
    """No audience: every target, as before; one ``notified`` event per target, in Apprise's
    privacy form."""
    config, got = receivers
    record = await asyncio.to_thread(inbox.add, QUESTION, harness="h")
    notifier = QuestionNotifier(inbox, Notifier([str(config)]))
    notifier.question_waiting(record)
    await settle(notifier)
    assert [len(got[name]) for name in ("ana", "bo", "cy", "untagged")] == [1, 1, 1, 1]
    shown = notified(inbox, record.id)
    assert len(shown) == 4
    assert all((by or "").startswith("json://127.0.0.1:") for by in shown)


async def test_escalation_notifies_and_admits_the_second_audience(
    inbox: Inbox, tmp_path: Path, receivers: tuple[Path, Receivers]
) -> None:
    """A question for Ana waits unanswered past the escalation: Cy (group:leads) is notified
    and may answer now; the log has the escalation and who was notified."""
    config, got = receivers
    people = tmp_path / "people.toml"
    people.write_text(PEOPLE + '[escalation]\nafter = 0.5\nto = ["group:leads"]\n', "utf-8")
    inbox.people = team.People.load(people)
    record = await asyncio.to_thread(inbox.add, {**QUESTION, "audience": ["ana"]}, harness="h")
    notifier = QuestionNotifier(inbox, Notifier([str(config)]))
    notifier.question_waiting(record)
    await settle(notifier)
    assert [len(got[name]) for name in ("ana", "bo", "cy", "untagged")] == [1, 0, 1, 0]
    assert notified(inbox, record.id) == ["ana", "cy"]
    events = [(e.event, e.by) for e in inbox.events(record.id)]
    assert ("escalated", "group:leads") in events
    answer = {"answers": [{"id": "db", "selected": [], "custom": "yes"}]}
    result = await asyncio.to_thread(inbox.answer, record.id, answer, surface="web", by="cy")
    assert result.outcome is AnswerOutcome.APPLIED


async def test_an_answered_question_is_not_escalated(
    inbox: Inbox, tmp_path: Path, receivers: tuple[Path, Receivers]
) -> None:
    """Answered before the escalation is due: nobody else is notified, nothing escalated."""
    config, got = receivers
    people = tmp_path / "people.toml"
    people.write_text(PEOPLE + '[escalation]\nafter = 3\nto = ["group:leads"]\n', "utf-8")
    inbox.people = team.People.load(people)
    record = await asyncio.to_thread(inbox.add, {**QUESTION, "audience": ["ana"]}, harness="h")
    notifier = QuestionNotifier(inbox, Notifier([str(config)]))
    notifier.question_waiting(record)
    answer = {"answers": [{"id": "db", "selected": [], "custom": "yes"}]}
    assert (
        await asyncio.to_thread(inbox.answer, record.id, answer, surface="web", by="ana")
    ).applied
    await settle(notifier)
    assert len(got["cy"]) == 0
    assert "escalated" not in [e.event for e in inbox.events(record.id)]


async def test_each_person_gets_a_link_of_their_own(
    inbox: Inbox, tmp_path: Path, receivers: tuple[Path, Receivers]
) -> None:
    """With links served, each person of the audience is sent a link naming them (a link per
    person), which answers as that person when no logging-in proxy names whoever opens it."""
    from dsh_user_questions._links import link_recipient, verify_link_token

    from dsh_user_questions_inbox._notices import Notices

    config, got = receivers
    people = tmp_path / "people.toml"
    people.write_text(PEOPLE, encoding="utf-8")
    inbox.people = team.People.load(people)
    secret = Notices(inbox).publish_links("https://inbox.example")
    record = await asyncio.to_thread(
        inbox.add, {**QUESTION, "audience": ["group:oncall"]}, harness="h"
    )
    notifier = QuestionNotifier(inbox, Notifier([str(config)]))
    notifier.question_waiting(record)
    await settle(notifier)
    for name in ("ana", "bo"):
        assert len(got[name]) == 1
        found = re.search(r"https://inbox\.example/q/(\S+)", got[name][0]["message"])
        assert found is not None, got[name][0]
        token = found.group(1)
        assert verify_link_token(secret, token) == record.id
        assert link_recipient(token) == name

"""A team's inbox, on both engines: who may answer (an audience), how many must approve (a
review's approvals, tallied by the core in the transaction that settles it), escalation, and
the log of each step (refused, approved, opened, escalated), pruned with its record."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import attrs
import pytest
from _requests import LOGIN, PKG, pick
from _waits import pending_one
from dsh_user_questions import (
    AskUserQuestionItem,
    AskUserQuestionRequest,
    UserQuestionService,
    team,
)
from dsh_user_questions.plan_review import PLAN_REVIEW_ID, plan_review_question

from dsh_user_questions_inbox import AnswerOutcome, Inbox, State, open_inbox
from dsh_user_questions_inbox._seal import Sealer

DSH_INBOX = str(Path(sys.executable).parent / "dsh-inbox")

PEOPLE = """
[people.ana]
tags = ["ana"]
[people.bo]
tags = ["bo"]
[people.cy]
tags = ["cy"]
[groups]
oncall = ["ana", "bo"]
leads = ["cy"]
everyone = ["ana", "bo", "cy", "dee", "eve"]
"""

APPROVE = {"answers": [{"id": PLAN_REVIEW_ID, "selected": ["Approve"]}]}
KEEP_PLANNING = {"answers": [{"id": PLAN_REVIEW_ID, "selected": [], "custom": "add a rollback"}]}


def people_file(folder: Path, extra: str = "") -> Path:
    path = folder / "people.toml"
    path.write_text(PEOPLE + extra, encoding="utf-8")
    return path


@pytest.fixture
def people(tmp_path: Path) -> team.People:
    return team.People.load(people_file(tmp_path))


def review(approvals: int = 2, audience: tuple[str, ...] = ("group:oncall",)) -> dict[str, Any]:
    """A plan review of ``audience`` that ``approvals`` distinct people must approve."""
    item = plan_review_question("# Deploy\n\nto production")
    assert item.intent is not None
    item = attrs.evolve(item, intent=attrs.evolve(item.intent, approvals=approvals))
    return AskUserQuestionRequest(questions=[item], audience=audience).to_dict()


def for_(audience: tuple[str, ...], request: dict[str, Any] = PKG) -> dict[str, Any]:
    return {**request, "audience": list(audience)}


def log(inbox: Inbox, question_id: str) -> list[tuple[str, str | None, str | None]]:
    return [(e.event, e.by, e.surface) for e in inbox.events(question_id)]


def test_an_outsider_is_refused_and_only_the_refusal_is_logged(
    inbox: Inbox, people: team.People
) -> None:
    """Someone outside the audience (or nobody named) is refused with the core's message:
    the record stays pending and unanswered; the log has a ``refused`` event, with where."""
    inbox.people = people
    record = inbox.add(for_(("group:oncall",)), harness="h")
    result = inbox.answer(record.id, pick("npm"), surface="web", by="dee", address="10.0.0.9")
    assert result.outcome is AnswerOutcome.REFUSED
    assert result.message == "dee may not answer this question: it is for group:oncall"
    nobody = inbox.answer(record.id, pick("npm"), surface="code")
    assert nobody.outcome is AnswerOutcome.REFUSED
    assert nobody.message == (
        "this question is for group:oncall: sign in so the page knows who you are"
    )
    stored = inbox.get(record.id)
    assert stored is not None
    assert stored.state is State.PENDING
    assert stored.answer is None
    assert [(e.event, e.by, e.surface, e.address) for e in inbox.events(record.id)] == [
        ("asked", None, "harness", None),
        ("refused", "dee", "web", "10.0.0.9"),
        ("refused", None, "code", None),
    ]
    # Someone in it answers as ever.
    assert inbox.answer(record.id, pick("npm"), surface="web", by="bo").applied


def test_one_person_approving_twice_counts_once(inbox: Inbox, people: team.People) -> None:
    """Ana approves from the page and again from code: counted once (still 1 of 2, still
    pending); Bo's approval settles it approved, by Bo; the log names each approver."""
    inbox.people = people
    record = inbox.add(review(), harness="h")
    first = inbox.answer(record.id, APPROVE, surface="web", by="ana", address="10.0.0.7")
    again = inbox.answer(record.id, APPROVE, surface="code", by="ana")
    assert (first.outcome, first.approvals) == (AnswerOutcome.COUNTED, (1, 2))
    assert (again.outcome, again.approvals) == (AnswerOutcome.COUNTED, (1, 2))
    pending = inbox.get(record.id)
    assert pending is not None
    assert pending.state is State.PENDING
    done = inbox.answer(record.id, APPROVE, surface="cli", by="bo")
    assert (done.outcome, done.approvals) == (AnswerOutcome.APPLIED, (2, 2))
    assert done.record is not None
    assert done.record.answered_by == "bo"
    assert done.record.answer is not None
    assert done.record.answer["answers"][0]["selected"] == ["Approve"]
    assert log(inbox, record.id) == [
        ("asked", None, "harness"),
        ("approved", "ana", "web"),
        ("approved", "bo", "cli"),
        ("answered", "bo", "cli"),
    ]
    assert inbox.events(record.id)[1].address == "10.0.0.7"
    late = inbox.answer(record.id, KEEP_PLANNING, surface="web", by="ana")
    assert late.outcome is AnswerOutcome.ALREADY_ANSWERED


def test_a_rejection_settles_a_two_approval_review_at_once(
    inbox: Inbox, people: team.People
) -> None:
    """After Ana's approval, Bo's "Keep planning" settles the review at once with Bo's answer."""
    inbox.people = people
    record = inbox.add(review(), harness="h")
    assert inbox.answer(record.id, APPROVE, surface="web", by="ana").outcome is (
        AnswerOutcome.COUNTED
    )
    result = inbox.answer(record.id, KEEP_PLANNING, surface="web", by="bo")
    assert result.outcome is AnswerOutcome.APPLIED
    assert result.approvals == (1, 2)
    settled = inbox.get(record.id)
    assert settled is not None
    assert settled.state is State.ANSWERED
    assert settled.answered_by == "bo"
    assert settled.to_answer() is not None
    assert settled.to_answer().answers[0].custom == "add a rollback"  # type: ignore[union-attr]
    assert log(inbox, record.id) == [
        ("asked", None, "harness"),
        ("approved", "ana", "web"),
        ("answered", "bo", "web"),
    ]


def test_approvals_given_at_once_settle_once(inbox_url: str, people: team.People) -> None:
    """Five people approve a 2-approval review at the same moment, each on a connection of
    their own: one approval settles it, one more is counted, the rest find it answered; the
    log has exactly the two approvers, and one answer by the one who settled it."""
    setup = open_inbox(inbox_url)
    setup.people = people
    record = setup.add(review(audience=("group:everyone",)), harness="h")
    names = ["ana", "bo", "cy", "dee", "eve"]
    stores = [open_inbox(inbox_url) for _ in names]
    start = threading.Barrier(len(names))
    outcomes: dict[str, AnswerOutcome] = {}

    def approve(name: str, store: Inbox) -> None:
        store.people = people
        start.wait()
        outcomes[name] = store.answer(record.id, APPROVE, surface="web", by=name).outcome

    threads = [
        threading.Thread(target=approve, args=pair) for pair in zip(names, stores, strict=True)
    ]
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(120)
        got = sorted(outcomes.values())
        assert got.count(AnswerOutcome.APPLIED) == 1
        assert got.count(AnswerOutcome.COUNTED) == 1
        assert got.count(AnswerOutcome.ALREADY_ANSWERED) == 3
        steps = log(setup, record.id)
        approvers = [by for event, by, _ in steps if event == "approved"]
        answered = [by for event, by, _ in steps if event == "answered"]
        settled = setup.get(record.id)
        assert settled is not None
        assert settled.answered_by in approvers
        assert len(approvers) == 2
        assert answered == [settled.answered_by]
        assert {outcomes[name] for name in approvers} == {
            AnswerOutcome.APPLIED,
            AnswerOutcome.COUNTED,
        }
    finally:
        for store in (setup, *stores):
            store.close()


def test_escalation_admits_its_people_once_due(inbox: Inbox, tmp_path: Path) -> None:
    """Before the people file's escalation is due, Cy (a lead) is refused; once the question
    has waited its ``after`` seconds, Cy may answer, and the escalation is logged once."""
    inbox.people = team.People.load(
        people_file(tmp_path, '[escalation]\nafter = 3600\nto = ["group:leads"]\n')
    )
    record = inbox.add(for_(("ana",)), harness="h")
    assert inbox.answer(record.id, pick("npm"), surface="web", by="cy").outcome is (
        AnswerOutcome.REFUSED
    )
    # The question waited an hour and more (its creation moved back).
    inbox._engine.write(
        "UPDATE dsh_inbox_questions SET created = created - 7200 WHERE id = :id", {"id": record.id}
    )
    old = inbox.get(record.id)
    assert old is not None
    assert inbox.may_answer(old, "cy") is None
    assert inbox.may_answer(old, "bo") is not None  # escalated to the leads, not to everyone
    assert inbox.answer(record.id, pick("npm"), surface="web", by="cy").applied
    assert log(inbox, record.id) == [
        ("asked", None, "harness"),
        ("refused", "cy", "web"),
        ("escalated", "group:leads", "deadline"),
        ("answered", "cy", "web"),
    ]


def test_opened_events_and_pruning_every_new_event(inbox: Inbox, people: team.People) -> None:
    """A surface's ``opened`` event (with who and where); only surface events are taken; a
    pruned record's refused, approved, opened and answered events go with it."""
    inbox.people = people
    record = inbox.add(review(), harness="h")
    assert inbox.record_event(record.id, "opened", by="ana", surface="web", address="10.0.0.7")
    assert not inbox.record_event("0000000000000000", "opened", by="ana", surface="web")
    with pytest.raises(ValueError, match="record_event\\(\\) logs opened, not 'answered'"):
        inbox.record_event(record.id, "answered", surface="web")
    inbox.answer(record.id, APPROVE, surface="web", by="dee")
    inbox.answer(record.id, APPROVE, surface="web", by="ana")
    inbox.answer(record.id, APPROVE, surface="web", by="bo")
    assert inbox.claim_delivery(record.id)
    assert [e.event for e in inbox.events(record.id)] == [
        "asked", "opened", "refused", "approved", "approved", "answered", "delivered",
    ]  # fmt: skip
    kept = inbox.add(review(), harness="h")
    inbox.answer(kept.id, APPROVE, surface="web", by="ana")
    assert inbox.prune(0) == 1
    assert inbox.events(record.id) == []
    assert [e.event for e in inbox.events(kept.id)] == ["asked", "approved"]


def _cli(
    inbox_url: str, *args: str, stdin: str = "", env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [DSH_INBOX, "--inbox", inbox_url, *args],
        input=stdin, capture_output=True, text=True, timeout=120, check=False,
        env={**os.environ, **(env or {})},
    )  # fmt: skip


def test_dsh_inbox_answer_refuses_an_outsider(inbox: Inbox, inbox_url: str) -> None:
    """``dsh-inbox answer`` by a login outside the audience: the core's message naming the
    login, exit 5, nothing stored, a ``refused`` event on ``cli`` that ``dsh-inbox log``
    prints."""
    record = inbox.add(for_(("ana", "bo")), harness="h")
    done = _cli(inbox_url, "answer", record.id, stdin=json.dumps(pick("npm")))
    assert done.returncode == 5, done.stderr
    assert done.stderr.strip() == (
        f"dsh-inbox: {LOGIN} may not answer this question: it is for ana, bo"
    )
    stored = inbox.get(record.id)
    assert stored is not None
    assert stored.state is State.PENDING
    assert stored.answer is None
    assert log(inbox, record.id) == [("asked", None, "harness"), ("refused", LOGIN, "cli")]
    value = _cli(inbox_url, "answer", record.id, "--value", "npm")
    assert value.returncode == 5
    shown = _cli(inbox_url, "log", record.id)
    assert f"{record.id}  refused by {LOGIN} on cli" in shown.stdout


def test_an_approval_from_the_shell_and_the_page_counts_once(inbox: Inbox, inbox_url: str) -> None:
    """The login approves with ``dsh-inbox answer`` (counted, 1 of 2, exit 0) and again from
    the page: still 1 of 2; Ana's approval settles it; ``dsh-inbox log`` names each approver."""
    record = inbox.add(review(audience=(LOGIN, "ana")), harness="h")
    assert "no approval yet (0 of 2)" in _cli(inbox_url, "show", record.id).stdout
    done = _cli(inbox_url, "answer", record.id, stdin=json.dumps(APPROVE))
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == (
        f"your approval of question {record.id} was counted: 1 of 2 approvals; it stays open"
        " until the others approve"
    )
    shown = _cli(inbox_url, "show", record.id).stdout
    assert f"for: {LOGIN}, ana\napproved by {LOGIN} (1 of 2)\n" in shown
    again = inbox.answer(record.id, APPROVE, surface="web", by=LOGIN)
    assert (again.outcome, again.approvals) == (AnswerOutcome.COUNTED, (1, 2))
    assert inbox.answer(record.id, APPROVE, surface="web", by="ana").applied
    shown = _cli(inbox_url, "log", record.id).stdout
    assert f"approved by {LOGIN} on cli" in shown
    assert "approved by ana on web" in shown
    assert "answered by ana on web" in shown


def test_a_secret_answer_of_an_audience_is_logged_without_its_text(
    inbox: Inbox, inbox_url: str, tmp_path: Path
) -> None:
    """A secret answered by a person of its audience: the log (and ``dsh-inbox log``, text and
    JSON) names the person, never what they said; an outsider's try names nothing of it either."""
    request = AskUserQuestionRequest(
        questions=[AskUserQuestionItem(id="token", question="The token?", secret=True)],
        audience=("ana",),
    )
    record = inbox.add(request, harness="h", seal=Sealer(tmp_path / "key").registered_key)
    given = {"answers": [{"id": "token", "selected": [], "custom": "s3cr3t-npm-81"}]}
    assert inbox.answer(record.id, given, surface="web", by="bo").outcome is (AnswerOutcome.REFUSED)
    assert inbox.answer(record.id, given, surface="web", by="ana").applied
    assert log(inbox, record.id)[1:] == [("refused", "bo", "web"), ("answered", "ana", "web")]
    for args in (("log", record.id), ("log", record.id, "--json")):
        shown = _cli(inbox_url, *args)
        assert shown.returncode == 0, shown.stderr
        assert "ana" in shown.stdout
        assert "s3cr3t" not in shown.stdout
    assert "s3cr3t" not in json.dumps([e.to_dict() for e in inbox.events()])


def test_dsh_inbox_answer_with_a_broken_people_file_says_so(
    inbox: Inbox, inbox_url: str, tmp_path: Path
) -> None:
    """A question for a group while the people file is no TOML: one line naming the file, exit
    1, nothing stored (no traceback)."""
    record = inbox.add(for_(("group:oncall",)), harness="h")
    broken = tmp_path / "people.toml"
    broken.write_text("[people.ana\n", encoding="utf-8")
    done = _cli(
        inbox_url, "answer", record.id, stdin=json.dumps(pick("npm")),
        env={"DSH_USER_QUESTIONS_PEOPLE": str(broken)},
    )  # fmt: skip
    assert done.returncode == 1
    assert done.stderr.startswith(f"dsh-inbox: people file {broken}: not TOML")
    assert "Traceback" not in done.stderr
    stored = inbox.get(record.id)
    assert stored is not None
    assert stored.state is State.PENDING


async def test_ask_returns_the_review_once_two_people_approved(
    service: UserQuestionService, inbox: Inbox
) -> None:
    """Through the inbox provider: ask() of a 2-approval review stays waiting after Ana's
    approval (counted, twice) and returns Bo's settling answer, answered_by Bo."""
    request = AskUserQuestionRequest.from_dict(review(audience=("ana", "bo")))
    asking = asyncio.ensure_future(service.ask(request))
    record = await pending_one(inbox)
    for surface in ("web", "cli"):
        counted = await asyncio.to_thread(
            inbox.answer, record.id, APPROVE, surface=surface, by="ana"
        )
        assert counted.outcome is AnswerOutcome.COUNTED
    await asyncio.sleep(0.2)  # the asker heard of each change and kept waiting
    assert not asking.done()
    await asyncio.to_thread(inbox.answer, record.id, APPROVE, surface="web", by="bo")
    got = await asyncio.wait_for(asking, 60)
    assert got.answered_by == "bo"
    assert got.answers[0].selected == ("Approve",)

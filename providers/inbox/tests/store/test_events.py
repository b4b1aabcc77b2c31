"""The log of every step, on both engines: each state change's event written with it, once;
who and from which surface; never an answer's text; pruned with its record; ``dsh-inbox log``."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from pathlib import Path

from _requests import PKG, pick
from _waits import pending_one
from dsh_user_questions import AskUserQuestionItem, AskUserQuestionRequest
from dsh_user_questions.harness import HarnessContext

from dsh_user_questions_inbox import Inbox, InboxEvent, State
from dsh_user_questions_inbox.provider import InboxProvider

DSH_INBOX = str(Path(sys.executable).parent / "dsh-inbox")


def steps(inbox: Inbox, question_id: str) -> list[tuple[str, str | None, str | None]]:
    """The question's events as (event, by, surface), oldest first."""
    return [(e.event, e.by, e.surface) for e in inbox.events(question_id)]


def test_asked_answered_delivered_each_once_with_who_and_where(inbox: Inbox) -> None:
    """The answer's event names its person and surface; a second answer (refused) logs
    nothing; delivery is logged once however often it is claimed."""
    record = inbox.add(PKG, harness="h")
    assert inbox.answer(record.id, pick("npm"), surface="web", by="ana").applied
    assert not inbox.answer(record.id, pick("pnpm"), surface="cli", by="bob").applied
    assert inbox.claim_delivery(record.id)
    assert not inbox.claim_delivery(record.id)
    assert steps(inbox, record.id) == [
        ("asked", None, "harness"),
        ("answered", "ana", "web"),
        ("delivered", None, "harness"),
    ]
    assert all(isinstance(e, InboxEvent) for e in inbox.events())


def test_withdrawn_then_a_late_answer_and_a_cancel(inbox: Inbox) -> None:
    """Withdrawn, then its late answer by whom; a cancelled question's close from its surface."""
    withdrawn = inbox.add(PKG, harness="h")
    inbox.settle(withdrawn.id, State.WITHDRAWN, surface="harness", delivered=True)
    inbox.answer(withdrawn.id, pick("npm"), surface="cli", by="ana")
    assert steps(inbox, withdrawn.id) == [
        ("asked", None, "harness"),
        ("withdrawn", None, "harness"),
        ("delivered", None, "harness"),
        ("answered-late", "ana", "cli"),
    ]
    cancelled = inbox.add(PKG, harness="h")
    assert inbox.settle(cancelled.id, State.CANCELLED, surface="web")
    assert not inbox.settle(cancelled.id, State.WITHDRAWN, surface="harness")
    assert [e for e, _, _ in steps(inbox, cancelled.id)] == ["asked", "cancelled"]


def test_an_overdue_question_logs_its_expiry(inbox: Inbox) -> None:
    """A question past its deadline is expired once, by the deadline."""
    record = inbox.add(PKG, harness="h", deadline=time.time() - 1)
    assert inbox.expire_overdue(record.id)
    assert not inbox.expire_overdue(record.id)
    assert steps(inbox, record.id)[-1] == ("expired", None, "deadline")


def test_since_and_every_question(inbox: Inbox) -> None:
    """Without an id: every question's events; ``since`` leaves out the older ones."""
    first = inbox.add(PKG, harness="h")
    later = time.time()
    while time.time() <= later:  # the clock's next tick
        time.sleep(0.001)
    second = inbox.add(PKG, harness="h")
    assert {e.question_id for e in inbox.events()} == {first.id, second.id}
    assert [e.question_id for e in inbox.events(since=later)] == [second.id]


def test_retention_prunes_events_with_their_record(inbox: Inbox) -> None:
    """A pruned record's events go with it; a kept record's stay."""
    gone = inbox.add(PKG, harness="h")
    inbox.settle(gone.id, State.WITHDRAWN, surface="harness", delivered=True)
    kept = inbox.add(PKG, harness="h")
    assert inbox.prune(0) == 1
    assert inbox.events(gone.id) == []
    assert [e.event for e in inbox.events(kept.id)] == ["asked"]


async def test_a_secret_answer_is_logged_as_given_without_its_text(
    inbox_url: str, inbox: Inbox, dsh_context: HarnessContext
) -> None:
    """A secret's answer: the log says who answered it, and holds nothing of what they said."""
    provider = InboxProvider(inbox_url, harness="secret-asker")
    dsh_context.user_questions.register_provider(provider)
    request = AskUserQuestionRequest(
        questions=[AskUserQuestionItem(id="token", question="The token?", secret=True)]
    )
    try:
        asking = asyncio.ensure_future(dsh_context.user_questions.ask(request))
        record = await pending_one(inbox)
        given = {"answers": [{"id": "token", "selected": [], "custom": "s3cr3t-npm-81"}]}
        await asyncio.to_thread(inbox.answer, record.id, given, surface="web", by="ana")
        got = await asyncio.wait_for(asking, 30)
        assert got.answers[0].custom == "s3cr3t-npm-81"
        assert got.answered_by == "ana"
        log = [e.to_dict() for e in inbox.events(record.id)]
        assert ("answered", "ana", "web") in steps(inbox, record.id)
        assert "s3cr3t" not in json.dumps(log)
        done = await asyncio.to_thread(
            subprocess.run,
            [DSH_INBOX, "--inbox", inbox_url, "log", record.id, "--json"],
            capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert "s3cr3t" not in done.stdout
        assert [e["event"] for e in json.loads(done.stdout)][:2] == ["asked", "answered"]
    finally:
        await asyncio.to_thread(provider.close)


def test_dsh_inbox_log_prints_each_step_inert(inbox: Inbox, inbox_url: str) -> None:
    """``dsh-inbox log ID`` prints a line per event (names inert); ``--json`` the events with
    ``event``, ``by``, ``surface``, ``at``; an unknown id or a bad ``--since`` is refused."""
    record = inbox.add(PKG, harness="h")
    inbox.answer(record.id, pick("npm"), surface="web", by="ana\x1b[2J")

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [DSH_INBOX, "--inbox", inbox_url, "log", *args],
            capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip

    shown = run(record.id)
    assert shown.returncode == 0, shown.stderr
    assert f"{record.id}  answered by ana<U+001B>[2J on web" in shown.stdout
    assert "\x1b" not in shown.stdout
    events = json.loads(run(record.id, "--json").stdout)
    assert [(e["event"], e["by"], e["surface"]) for e in events] == [
        ("asked", None, "harness"),
        ("answered", "ana\x1b[2J", "web"),
    ]
    assert all(isinstance(e["at"], float) for e in events)
    assert json.loads(run("--json", "--since", "1h").stdout) == events
    assert run("nope").returncode == 1
    assert "--since: 'soon' is not a duration" in run("--since", "soon").stderr

"""The core's conformance suite, with the inbox provider and its shell surface as the human.

The provider is registered on the suite's context over a store of the test's own. The driver's
screen is what ``dsh-inbox list`` and ``dsh-inbox show`` print for every pending question; it
answers through the store as a surface does (``Inbox.answer``) and closes with ``dsh-inbox
cancel``.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import tempfile
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from _postgres import PostgresServer
from dsh_user_questions import AskUserQuestionRequest
from dsh_user_questions.conformance import (
    Approve,
    Choose,
    Enter,
    KeepPlanning,
    Other,
    ProviderConformance,
    Reply,
    Skip,
    TalkInstead,
)
from dsh_user_questions.harness import HarnessContext

from dsh_user_questions_inbox import Inbox, State, cli, open_inbox
from dsh_user_questions_inbox.provider import InboxProvider


def _run_cli(*args: str) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        cli.main(args)
    return out.getvalue()


def _item(question: dict[str, Any], reply: Reply) -> dict[str, Any] | None:
    """The wire answer item a person gives for ``reply``; ``None`` closes the question."""
    if isinstance(reply, Choose):
        return {"id": question["id"], "selected": list(reply.labels)}
    if isinstance(reply, Other):
        return {"id": question["id"], "selected": list(reply.labels), "custom": reply.text}
    if isinstance(reply, Skip):
        return {"id": question["id"], "selected": []}
    if isinstance(reply, Enter):  # a typed question's value, as a surface sends it
        value = list(reply.value) if isinstance(reply.value, tuple) else reply.value
        return {"id": question["id"], "selected": [], "value": value}
    intent = question["intent"]
    if isinstance(reply, Approve):
        return {"id": question["id"], "selected": [intent["approve"]]}
    if isinstance(reply, KeepPlanning):
        if reply.feedback is not None:
            return {"id": question["id"], "selected": [], "custom": reply.feedback}
        others = [o["label"] for o in question["options"] if o["label"] != intent["approve"]]
        return {"id": question["id"], "selected": others[:1]}
    assert isinstance(reply, TalkInstead)
    return None


class ShellDriver:
    """A person at a shell: reads dsh-inbox list/show, answers through the store."""

    def __init__(self, url: str, inbox: Inbox) -> None:
        self.url = url
        self.inbox = inbox
        # What `dsh-inbox answer` would tell the person, by the questions asked.
        self.told: dict[tuple[str, ...], bool] = {}

    def _find(self, request: AskUserQuestionRequest) -> str:
        wire = request.to_dict()
        for record in self.inbox.records(state=State.PENDING):
            if record.request == wire:
                return record.id
        raise AssertionError("the question is not pending in the inbox")

    async def screen(self) -> str:
        def read() -> str:
            parts = [_run_cli("--inbox", self.url, "list")]
            for record in self.inbox.records(state=State.PENDING):
                parts.append(_run_cli("--inbox", self.url, "show", record.id))
            return "\n".join(parts)

        return await asyncio.to_thread(read)

    async def reply(self, request: AskUserQuestionRequest, replies: Sequence[Reply]) -> None:
        question_id = await asyncio.to_thread(self._find, request)
        items = [_item(q, r) for q, r in zip(request.to_dict()["questions"], replies, strict=True)]
        if any(item is None for item in items):
            await asyncio.to_thread(_run_cli, "--inbox", self.url, "cancel", question_id)
            return
        result = await asyncio.to_thread(
            self.inbox.answer, question_id, {"answers": items}, surface="conformance"
        )
        assert result.applied, result
        # As `dsh-inbox answer` does: wait for the asker's receipt. Only "received" says the
        # asker took it; "no asker is waiting" says it is kept for a resume, "not-taken" that
        # the asker stopped waiting as it landed.
        reception = await asyncio.to_thread(
            self.inbox.wait_received, question_id, cli.RECEIPT_SECONDS
        )
        asked = tuple(question.question for question in request.questions)
        self.told[asked] = reception == "received"

    async def receipt(self, request: AskUserQuestionRequest) -> bool | None:
        """Whether the shell told the person their answer was taken (None: nothing answered)."""
        return self.told.get(tuple(question.question for question in request.questions))

    async def cancel(self, request: AskUserQuestionRequest) -> None:
        question_id = await asyncio.to_thread(self._find, request)
        await asyncio.to_thread(_run_cli, "--inbox", self.url, "cancel", question_id)


class TestInboxOnSQLite(ProviderConformance):
    """The contract over a SQLite store."""

    # The typed answers a surface stores as values (an upload's file is written by the
    # surface that takes it: the page's and the terminal's own tests).
    input_types = frozenset({"number", "date", "time", "datetime", "files"})

    def store_url(self) -> str:
        return f"sqlite:///{Path(tempfile.mkdtemp(prefix='dsh-inbox-conf-')) / 'inbox.db'}"

    @contextlib.asynccontextmanager
    async def connect(self, ctx: HarnessContext) -> AsyncIterator[ShellDriver]:
        url = self.store_url()
        provider = InboxProvider(url, harness="conformance")
        dispose = ctx.user_questions.register_provider(provider)
        inbox = open_inbox(url)
        try:
            yield ShellDriver(url, inbox)
        finally:
            dispose()
            await asyncio.to_thread(provider.close)
            inbox.close()


class TestInboxOnPostgreSQL(TestInboxOnSQLite):
    """The contract over a PostgreSQL store."""

    _server: PostgresServer

    @pytest.fixture(autouse=True)
    def _database(self, postgres: PostgresServer) -> None:
        self._server = postgres

    def store_url(self) -> str:
        return self._server.new_database()

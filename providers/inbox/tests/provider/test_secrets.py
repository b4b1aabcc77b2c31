"""Secret answers: sealed to the asking harness, never in clear in the store, logs or records."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import pytest
from dsh_user_questions import AskUserQuestionItem, AskUserQuestionRequest, UserQuestionError
from dsh_user_questions.harness import HarnessContext

from dsh_user_questions_inbox import State, open_inbox
from dsh_user_questions_inbox.provider import InboxProvider

SECRET = "hunter2-sealed-\u00e9-XYZ"


def secret_request() -> AskUserQuestionRequest:
    return AskUserQuestionRequest(
        questions=[
            AskUserQuestionItem(id="token", question="The deploy token?", secret=True),
            AskUserQuestionItem(id="name", question="Project name?"),
        ]
    )


async def pending_id(url: str) -> str:
    inbox = open_inbox(url)
    try:
        for _ in range(400):
            pending = [r for r in inbox.records() if r.state is State.PENDING]
            if pending:
                return pending[0].id
            await asyncio.sleep(0.025)
    finally:
        inbox.close()
    raise AssertionError("the question never reached the store")


async def test_a_secret_reaches_the_asker_but_never_the_store_or_the_logs(
    inbox_url: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The asker gets the clear text; the stored answer (and the SQLite file) holds only the
    sealed form; no log record carries it."""
    caplog.set_level(logging.DEBUG)
    async with HarnessContext() as ctx:
        from dsh_user_questions import plugin

        ctx.register(plugin)
        provider = InboxProvider(inbox_url, harness="secret-keeper")
        ctx.user_questions.register_provider(provider)
        try:
            asking = asyncio.ensure_future(ctx.user_questions.ask(secret_request()))
            question_id = await pending_id(inbox_url)
            other = open_inbox(inbox_url)  # another process's view: `dsh-inbox answer`
            try:
                other.answer(
                    question_id,
                    {"answers": [{"id": "token", "custom": SECRET}, {"id": "name", "custom": "x"}]},
                    surface="cli",
                )
                stored = other.get(question_id)
            finally:
                other.close()
            answer = await asyncio.wait_for(asking, 60)
        finally:
            provider.close()
    assert answer.to_dict()["answers"][0] == {"id": "token", "selected": [], "custom": SECRET}
    assert stored is not None
    assert stored.answer is not None
    assert stored.answer["answers"][0]["custom"].startswith("sealed:")
    assert stored.answer["answers"][1]["custom"] == "x"
    assert SECRET not in repr(stored.to_dict())
    assert SECRET not in caplog.text
    if inbox_url.startswith("sqlite:///"):
        database = Path(inbox_url.removeprefix("sqlite:///"))
        for path in database.parent.glob(database.name + "*"):  # the file, its WAL and SHM
            assert SECRET.encode() not in path.read_bytes()


def test_an_answer_to_a_secret_without_a_key_is_refused(inbox_url: str) -> None:
    """A secret answer for a question whose asker left no key is BAD_ANSWER, nothing stored."""
    inbox = open_inbox(inbox_url)
    try:
        record = inbox.add(secret_request(), harness="h")
        with pytest.raises(UserQuestionError) as info:
            inbox.answer(record.id, {"answers": [{"id": "token", "custom": SECRET}]}, surface="cli")
        assert info.value.code == "BAD_ANSWER"
        assert inbox.get(record.id).state is State.PENDING  # type: ignore[union-attr]
    finally:
        inbox.close()

"""A receipt means taken: a surface says an answer was received only when the asker's ask()
returned it to its caller (the core's receipt), also when the caller is cancelled as it lands."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

from _requests import PKG
from _waits import pending_one, until
from dsh_user_questions import AskUserQuestionRequest, hookimpl
from dsh_user_questions.harness import HarnessContext

from dsh_user_questions_inbox import Inbox, QuestionRecord
from dsh_user_questions_inbox.provider import InboxProvider

DSH_INBOX = str(Path(sys.executable).parent / "dsh-inbox")


def answer_with_cli(url: str, question_id: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [DSH_INBOX, "--inbox", url, "answer", question_id],
        input='{"answers": [{"id": "pkg", "selected": ["npm"]}]}',
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


class SlowObserver:
    """Holds ask() after the provider returned, so the caller can be cancelled meanwhile."""

    @hookimpl
    async def dsh_user_questions_answered(self, request: object, answer: object) -> None:
        await asyncio.sleep(30)


async def test_the_cli_says_received_only_when_the_asker_got_it(
    inbox_url: str, inbox: Inbox, dsh_context: HarnessContext
) -> None:
    """dsh-inbox answer: "its asker received the answer" when ask() returned it; when the
    asking task is cancelled as the answer lands, exit 4 "not received" (never "received"),
    and the answer goes to the late-answer hook."""
    late: list[QuestionRecord] = []
    provider = InboxProvider(inbox_url, harness="receipts", on_late_answer=late.append)
    dsh_context.user_questions.register_provider(provider)
    try:
        asking = asyncio.ensure_future(
            dsh_context.user_questions.ask(AskUserQuestionRequest.from_dict(PKG))
        )
        record = await pending_one(inbox)
        done = await asyncio.to_thread(answer_with_cli, inbox_url, record.id)
        assert done.returncode == 0, done.stderr
        assert "its asker received the answer" in done.stdout
        await asyncio.wait_for(asking, 30)
        assert inbox.get(record.id).received_at is not None

        dsh_context.register(SlowObserver(), name="slow")
        asking = asyncio.ensure_future(
            dsh_context.user_questions.ask(AskUserQuestionRequest.from_dict(PKG))
        )
        await until(lambda: inbox.records(state="pending"), "the second question")
        (second,) = inbox.records(state="pending")
        answering = asyncio.ensure_future(asyncio.to_thread(answer_with_cli, inbox_url, second.id))
        await until(lambda: inbox.get(second.id).delivered, "the provider to take it")
        asking.cancel()
        done = await answering
        assert done.returncode == 4, (done.stdout, done.stderr)
        assert "not received" in done.stderr
        assert "received the answer" not in done.stdout
        await until(lambda: late, "the late-answer hook")
        assert late[0].id == second.id
        assert inbox.get(second.id).received_at is None
    finally:
        await asyncio.to_thread(provider.close)


async def test_an_answer_with_no_asker_waiting_is_kept_for_it(inbox_url: str, inbox: Inbox) -> None:
    """Nobody waits (the harness is down): the CLI says the answer is kept for its harness,
    not that anyone received it."""
    record = inbox.add(PKG, harness="down")
    done = await asyncio.to_thread(answer_with_cli, inbox_url, record.id)
    assert done.returncode == 0
    assert "no asker is waiting" in done.stdout
    assert "received the answer" not in done.stdout

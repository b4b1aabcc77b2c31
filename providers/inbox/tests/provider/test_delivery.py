"""Exactly-once delivery: every final record says whether its asker got it, and a restarted
harness finds (Inbox.undelivered) and resumes exactly what it has not received."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys

import pytest
from _processes import Harness, dsh_inbox_answer, pending, until
from _requests import LOGIN, PKG, pick
from dsh_user_questions import AskUserQuestionRequest, UserQuestionError, UserQuestionService
from dsh_user_questions.harness import HarnessContext

from dsh_user_questions_inbox import AlreadyDelivered, Inbox, State
from dsh_user_questions_inbox.provider import InboxProvider


def answers_of(harness: Harness, count: int) -> dict[str, object]:
    """The next ``count`` resumed outcomes of a harness in undelivered mode, by question id."""
    got: dict[str, object] = {}
    while len(got) < count:
        event = harness.events.get(timeout=120)
        if event["event"] in ("answer", "error", "taken"):
            key = str(event.get("id", len(got)))
            assert key not in got, f"{key} delivered twice"
            got[key] = event
    return got


@pytest.mark.flaky(reruns=2)
def test_the_readme_recipe_across_kill_9_delivers_each_outcome_once(
    inbox: Inbox, inbox_url: str, harnesses: list[Harness]
) -> None:
    """Ask 6 and answer 2 while the harness runs; kill -9 it just after a third answer lands;
    while it is down answer 1 more, cancel 1 and leave 1 pending; the restarted harness (same
    label, the README's undelivered() recipe) gets exactly the outcomes it had not received,
    each once, and the pending one when it is answered. Nothing is delivered twice."""
    first = Harness(inbox_url, "bot", "ask", "6")
    harnesses.append(first)
    records = pending(inbox, "bot", 6)
    ids = [record.id for record in records]
    for question_id in ids[:2]:
        assert dsh_inbox_answer(inbox_url, question_id, pick("npm")).wait()[0] == 0
    seen_first = {json.dumps(first.next("answer")["answer"]) for _ in range(2)}
    assert seen_first == {json.dumps(pick("npm", by=LOGIN))}
    until(lambda: all(inbox.get(i).delivered for i in ids[:2]), "the first two delivered")
    # Just after an answer: it may or may not have reached the harness before the kill.
    inbox.answer(ids[2], pick("pnpm"), surface="racer")
    first.kill()
    # Before the restart: answered, cancelled, left pending.
    assert dsh_inbox_answer(inbox_url, ids[3], pick("pnpm")).wait()[0] == 0
    inbox.settle(ids[4], State.CANCELLED, surface="cli")
    undelivered = [r.id for r in inbox.undelivered(harness="bot")]
    assert ids[0] not in undelivered
    assert ids[1] not in undelivered
    assert set(ids[3:]) <= set(undelivered)
    second = Harness(inbox_url, "bot", "undelivered")
    harnesses.append(second)
    second.next("ready")
    got = answers_of(second, len(undelivered) - 1)  # all but the pending one, at once
    assert dsh_inbox_answer(inbox_url, ids[5], pick("npm")).wait()[0] == 0
    got.update(answers_of(second, 1))
    second.next("done")
    second.finish()
    assert sorted(got) == sorted(undelivered)
    assert got[ids[3]]["answer"] == pick("pnpm", by=LOGIN)
    assert got[ids[4]] == {"event": "error", "id": ids[4], "code": "ASK_CANCELLED"}
    assert got[ids[5]]["answer"] == pick("npm", by=LOGIN)
    assert all(record.delivered for record in inbox.get_many(ids))
    assert inbox.undelivered(harness="bot") == []


@pytest.mark.flaky(reruns=2)
def test_kill_9_during_an_answer_loses_nothing(
    inbox: Inbox, inbox_url: str, harnesses: list[Harness]
) -> None:
    """kill -9 while dsh-inbox answer is running: the answer is either received by the first
    harness or found undelivered by the restarted one, never both, never neither."""
    first = Harness(inbox_url, "mid", "ask", "1")
    harnesses.append(first)
    (record,) = pending(inbox, "mid", 1)
    answering = dsh_inbox_answer(inbox_url, record.id, pick("npm"))
    first.kill()
    assert answering.wait()[0] == 0
    received_first = any(e["event"] == "answer" for e in list(first.events.queue))
    delivered = inbox.get(record.id).delivered
    assert not (received_first and not delivered)
    second = Harness(inbox_url, "mid", "undelivered")
    harnesses.append(second)
    events = []
    while not events or events[-1]["event"] != "done":
        events.append(second.events.get(timeout=120))
    received_second = [e for e in events if e["event"] == "answer"]
    second.finish()
    assert len(received_second) == (0 if delivered else 1)
    assert inbox.get(record.id).delivered


async def test_two_processes_of_one_label_share_each_outcome_once(
    inbox_url: str, inbox: Inbox
) -> None:
    """Two providers with one label both resume everything undelivered: each answer reaches
    exactly one of them; the other is told AlreadyDelivered."""
    records = [inbox.add(PKG, harness="shared") for _ in range(6)]
    for record in records[:3]:
        inbox.answer(record.id, pick("npm"), surface="cli")
    one = InboxProvider(inbox_url, harness="shared")
    two = InboxProvider(inbox_url, harness="shared")
    try:

        async def resume_all(provider: InboxProvider) -> list[str]:
            taken = []
            for record in await asyncio.to_thread(inbox.undelivered, harness="shared"):
                try:
                    await provider.resume(record.id)
                except AlreadyDelivered:
                    continue
                taken.append(record.id)
            return taken

        both = asyncio.gather(resume_all(one), resume_all(two))
        await asyncio.sleep(0.3)
        for record in records[3:]:
            await asyncio.to_thread(inbox.answer, record.id, pick("pnpm"), surface="cli")
        first, second = await asyncio.wait_for(both, 60)
        assert sorted(first + second) == sorted(record.id for record in records)
        assert not set(first) & set(second)
    finally:
        await asyncio.to_thread(one.close)
        await asyncio.to_thread(two.close)


async def test_a_live_answer_is_marked_delivered_and_resume_gives_it_once(
    service: UserQuestionService, inbox: Inbox
) -> None:
    """An answer returned by ask() is delivered: not listed again, and a resume of it is
    AlreadyDelivered; an ending that is an error is raised again by every resume."""
    asking = asyncio.ensure_future(service.ask(AskUserQuestionRequest.from_dict(PKG)))
    await until_async(lambda: inbox.records(state="pending"))
    (record,) = inbox.records()
    await asyncio.to_thread(inbox.answer, record.id, pick("npm"), surface="cli")
    await asyncio.wait_for(asking, 60)
    assert inbox.get(record.id).delivered
    assert inbox.undelivered(harness="test-harness") == []
    with pytest.raises(AlreadyDelivered):
        await service.resume(record.id)
    closed = inbox.add(PKG, harness="test-harness")
    inbox.settle(closed.id, State.CANCELLED, surface="cli")
    for _ in range(2):
        with pytest.raises(UserQuestionError) as caught:
            await service.resume(closed.id)
        assert caught.value.code == "ASK_CANCELLED"


async def test_a_deadline_passing_while_nobody_waited_is_an_expiry_on_resume(
    service: UserQuestionService, inbox: Inbox
) -> None:
    """A pending question whose deadline passed while its harness was down is expired by the
    resume (ASK_TIMED_OUT), not waited for for ever."""
    import time

    record = inbox.add(PKG, harness="test-harness", deadline=time.time() + 0.3)
    with pytest.raises(UserQuestionError) as caught:
        await asyncio.wait_for(service.resume(record.id), 30)
    assert caught.value.code == "ASK_TIMED_OUT"
    assert inbox.get(record.id).state is State.EXPIRED


async def until_async(condition: object) -> None:
    for _ in range(3000):
        if await asyncio.to_thread(condition):  # type: ignore[arg-type]
            return
        await asyncio.sleep(0.02)
    raise AssertionError("timed out")


def test_the_default_label_is_unique_per_process() -> None:
    """Two processes on one host (same pid is possible in two containers) get different
    default labels: host name plus a random part, stable within the process."""
    code = (
        "from dsh_user_questions_inbox.provider import default_harness_label as d;"
        "print(d() if d() == d() else 'unstable')"
    )
    env = {k: v for k, v in os.environ.items() if k != "DSH_USER_QUESTIONS_INBOX_HARNESS"}
    labels = [
        subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
        ).stdout.strip()
        for _ in range(2)
    ]
    import socket

    assert labels[0] != labels[1]
    assert all(label.startswith(socket.gethostname() + ":") for label in labels)


# Lifecycle -------------------------------------------------------------------------------------


@pytest.mark.parametrize("how", ["timeout", "abort", "in-flight"])
async def test_no_record_is_left_pending_after_a_clean_close(
    inbox_url: str, inbox: Inbox, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    """Through the installed plugin and `async with HarnessContext()`: an ask that timed out
    or was aborted right before the block ends, or is still in flight when it ends, leaves its
    record final (expired / withdrawn), never pending."""
    from dsh_user_questions.harness import AbortController

    monkeypatch.setenv("DSH_USER_QUESTIONS_INBOX", inbox_url)
    monkeypatch.setenv("DSH_USER_QUESTIONS_PROVIDER", "inbox")
    in_flight = None
    async with HarnessContext() as ctx:
        ctx.load_entrypoints()
        request = AskUserQuestionRequest.from_dict(PKG)
        if how == "timeout":
            with pytest.raises(UserQuestionError):
                await ctx.user_questions.ask(request, timeout=0.3)
        elif how == "abort":
            controller = AbortController()
            asyncio.get_running_loop().call_later(0.3, controller.abort)
            with pytest.raises(UserQuestionError):
                await ctx.user_questions.ask(
                    AskUserQuestionRequest.from_dict(PKG, signal=controller.signal)
                )
        else:
            in_flight = asyncio.ensure_future(ctx.user_questions.ask(request))
            await until_async(lambda: inbox.records(state="pending"))
    (record,) = inbox.records()
    assert record.state is (State.EXPIRED if how == "timeout" else State.WITHDRAWN)
    assert record.delivered
    if in_flight is not None:
        with pytest.raises((UserQuestionError, asyncio.CancelledError)):
            await asyncio.wait_for(in_flight, 30)


async def test_the_readme_recipe_runs_as_written(
    inbox_url: str, inbox: Inbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The README's resume block, executed as written (in an async function with ``ctx``):
    it resumes exactly the label's undelivered questions."""
    import re
    import textwrap
    from pathlib import Path

    readme = (Path(__file__).parents[2] / "README.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", readme, flags=re.DOTALL)
    (recipe,) = [textwrap.dedent(b) for b in blocks if "inbox.undelivered(" in b]
    recipe = recipe.replace("...", "resumed.append(err.code)")
    recipe = re.sub(
        r"^( *)(answer = await .*)$", r"\1\2\n\1resumed.append(answer)", recipe, flags=re.M
    )
    monkeypatch.setenv("DSH_USER_QUESTIONS_INBOX", inbox_url)
    monkeypatch.setenv("DSH_USER_QUESTIONS_PROVIDER", "inbox")
    monkeypatch.setenv("DSH_USER_QUESTIONS_INBOX_HARNESS", "build-bot")
    answered = inbox.add(PKG, harness="build-bot")
    inbox.answer(answered.id, pick("npm"), surface="cli")
    closed = inbox.add(PKG, harness="build-bot")
    inbox.settle(closed.id, State.CANCELLED, surface="cli")
    inbox.add(PKG, harness="someone-else")
    resumed: list[object] = []
    async with HarnessContext() as ctx:
        ctx.load_entrypoints()
        source = "async def recipe(ctx, resumed):\n" + textwrap.indent(recipe, "    ")
        namespace: dict[str, object] = {}
        exec(compile(source, "README.md", "exec"), namespace)
        await namespace["recipe"](ctx, resumed)  # type: ignore[operator]
    first, second = resumed
    assert first.answers[0].selected == ("npm",)  # type: ignore[attr-defined]
    assert second == "ASK_CANCELLED"
    assert inbox.undelivered(harness="build-bot") == []

"""Idempotent questions: one record per request key, from any process, after any crash."""

from __future__ import annotations

import asyncio
import threading

import pytest
from _processes import Harness, dsh_inbox_answer, pending
from _requests import LOGIN, PKG, pick
from _waits import pending_one, until
from dsh_user_questions import (
    AskUserQuestionAnswer,
    AskUserQuestionRequest,
    CallerRefusedError,
    StoreError,
    UserQuestionError,
    UserQuestionService,
    tool,
)
from dsh_user_questions.harness import AbortController, HarnessContext
from dsh_user_questions.providing import Filing, receipt

from dsh_user_questions_inbox import Inbox, State
from dsh_user_questions_inbox._notices import Notices
from dsh_user_questions_inbox.provider import InboxProvider


def keyed(key: str, **extra: object) -> AskUserQuestionRequest:
    """The package-manager request with ``key``."""
    return AskUserQuestionRequest.from_dict(PKG, key=key, **extra)  # type: ignore[arg-type]


async def test_asking_twice_with_one_key_keeps_one_record(
    service: UserQuestionService, inbox: Inbox
) -> None:
    """Two concurrent asks with one key: one record; its answer returns from both."""
    first = asyncio.ensure_future(service.ask(keyed("thread-1:call-1")))
    record = await pending_one(inbox)
    second = asyncio.ensure_future(service.ask(keyed("thread-1:call-1")))
    await asyncio.sleep(0.3)
    assert [r.id for r in inbox.records()] == [record.id]
    assert record.key == "thread-1:call-1"
    await asyncio.to_thread(inbox.answer, record.id, pick("npm"), surface="cli")
    expected = AskUserQuestionAnswer.from_dict(pick("npm"))
    assert await asyncio.wait_for(asyncio.gather(first, second), 60) == [expected, expected]
    assert inbox.get(record.id).delivered


async def test_an_answer_given_while_nobody_waited_comes_back_at_once(
    service: UserQuestionService, inbox: Inbox
) -> None:
    """A process died with the question pending; it was answered; asking again with the key
    (another harness label) returns that answer at once and marks it delivered, so the
    dead label's undelivered list no longer has it."""
    wire = keyed("run-7:tool-3").to_dict()
    record = inbox.add(wire, harness="died")
    inbox.answer(record.id, pick("pnpm"), surface="web")
    assert [r.id for r in inbox.undelivered(harness="died")] == [record.id]
    answer = await asyncio.wait_for(service.ask(keyed("run-7:tool-3")), 10)
    assert answer == AskUserQuestionAnswer.from_dict(pick("pnpm"))
    assert [r.id for r in inbox.records()] == [record.id]  # the one record, read once
    assert inbox.get(record.id).delivered
    assert inbox.undelivered(harness="died") == []


async def test_a_pending_keyed_question_is_taken_over_by_the_new_asker(
    service: UserQuestionService, inbox: Inbox
) -> None:
    """Attaching to a pending record makes it this harness's (its label), then waits."""
    record = inbox.add(keyed("k-pending").to_dict(), harness="died")
    asking = asyncio.ensure_future(service.ask(keyed("k-pending")))
    await until(lambda: inbox.get(record.id).harness == "test-harness", "the take-over")
    assert not asking.done()
    await asyncio.to_thread(inbox.answer, record.id, pick("npm"), surface="cli")
    assert (await asyncio.wait_for(asking, 60)).answers[0].selected == ("npm",)


async def test_a_key_of_other_questions_is_refused(
    service: UserQuestionService, inbox: Inbox
) -> None:
    """A key names one question: a request with other questions under it is BAD_QUESTION."""
    inbox.add(keyed("shared").to_dict(), harness="h")
    other = AskUserQuestionRequest.from_dict(
        {"questions": [{"id": "x", "question": "Other?", "options": [{"label": "a"}]}]},
        key="shared",
    )
    with pytest.raises(UserQuestionError) as caught:
        await service.ask(other)
    assert caught.value.code == "BAD_QUESTION"
    assert '"shared"' in caught.value.message
    assert len(inbox.records()) == 1


def test_a_pending_question_keyed_the_old_ambiguous_way_is_a_clear_error(inbox: Inbox) -> None:
    """Issue 35: a question still pending under the key tool.durable_key wrote before ids were
    escaped (``langgraph:t:1:c``) is never adopted by the new key (that spelling is also thread
    ``t`` + call ``1:c``): STORE_UNUSABLE naming it and how to close it; once closed, the new
    key asks anew."""
    old = inbox.add(keyed("langgraph:t:1:c").to_dict(), harness="h")
    new_key = tool.durable_key("langgraph", "t:1", "c")
    assert new_key == "langgraph:t~3A1:c"
    with pytest.raises(StoreError) as caught:
        inbox.add(keyed(new_key).to_dict(), harness="h")
    assert caught.value.code == "STORE_UNUSABLE"
    assert f"dsh-inbox cancel {old.id}" in caught.value.message
    assert "'langgraph:t:1:c'" in caught.value.message
    assert [record.id for record in inbox.records()] == [old.id]
    # Another call's key (thread t, call 1:c) is not the old record's either: refused alike.
    with pytest.raises(StoreError):
        inbox.add(keyed(tool.durable_key("langgraph", "t", "1:c")).to_dict(), harness="h")
    assert inbox.settle(old.id, State.CANCELLED, surface="cli")
    fresh = inbox.add(keyed(new_key).to_dict(), harness="h")
    assert fresh.id != old.id
    assert fresh.state is State.PENDING


async def test_a_cancelled_keyed_question_stays_cancelled(
    service: UserQuestionService, inbox: Inbox
) -> None:
    """The human closed it: asking again with its key is ASK_CANCELLED again."""
    record = inbox.add(keyed("closed").to_dict(), harness="h")
    inbox.settle(record.id, State.CANCELLED, surface="web")
    for _ in range(2):
        with pytest.raises(UserQuestionError) as caught:
            await service.ask(keyed("closed"))
        assert caught.value.code == "ASK_CANCELLED"


async def test_a_given_up_key_asks_anew_unless_a_late_answer_came(
    service: UserQuestionService, inbox: Inbox
) -> None:
    """Withdrawn without an answer: the key goes to a fresh question. Withdrawn, then
    answered late: asking again returns the late answer (and marks it delivered)."""
    controller = AbortController()
    asking = asyncio.ensure_future(service.ask(keyed("k1", signal=controller.signal)))
    first = await pending_one(inbox)
    controller.abort()
    with pytest.raises(UserQuestionError):
        await asking
    await until(lambda: inbox.get(first.id).state is State.WITHDRAWN, "the withdrawal")
    again = asyncio.ensure_future(service.ask(keyed("k1")))
    second = await pending_one(inbox)
    assert second.id != first.id
    assert inbox.by_key("k1").id == second.id
    assert inbox.get(first.id).key is None
    await asyncio.to_thread(inbox.answer, second.id, pick("npm"), surface="cli")
    await asyncio.wait_for(again, 60)

    late = inbox.add(keyed("k2").to_dict(), harness="h")
    inbox.settle(late.id, State.EXPIRED, surface="harness")
    inbox.answer(late.id, pick("pnpm"), surface="cli")
    answer = await asyncio.wait_for(service.ask(keyed("k2")), 10)
    assert answer.answers[0].selected == ("pnpm",)
    stored = inbox.get(late.id)
    assert stored.late_delivered_at is not None
    assert stored.delivered


class Listening:
    """A registered provider that listens, as ``dsh-ask`` does, for where the inbox files its
    question (the ask's receipt, taken before the inbox provider runs), then asks the inbox."""

    def __init__(self, inner: InboxProvider) -> None:
        self.inner = inner
        self.filings: list[Filing] = []

    async def ask(self, request: AskUserQuestionRequest) -> AskUserQuestionAnswer:
        receipt(request).when_filed(self.filings.append)
        return await self.inner.ask(request)


async def test_a_keyed_ask_aborted_while_its_question_is_filed_withdraws_it(
    provider: InboxProvider,
    dsh_context: HarnessContext,
    inbox: Inbox,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The abort lands while the provider files the new question on the asker's receipt (it
    reads the link settings in a thread): the question is withdrawn all the same, and the
    key asks anew. Before the fix it stayed pending, leased, until the provider closed."""
    reading = threading.Event()
    go_on = threading.Event()
    read = Notices.link_settings

    def slow_link_settings(self: Notices, **kwargs: float | None) -> tuple[str, bytes] | None:
        reading.set()
        go_on.wait(60)
        return read(self, **kwargs)

    monkeypatch.setattr(Notices, "link_settings", slow_link_settings)
    listening = Listening(provider)
    service = dsh_context.user_questions
    service.register_provider(listening)
    controller = AbortController()
    asking = asyncio.ensure_future(service.ask(keyed("filed", signal=controller.signal)))
    assert await asyncio.to_thread(reading.wait, 60)
    first = await pending_one(inbox)
    controller.abort()
    with pytest.raises(UserQuestionError) as caught:
        await asking
    assert caught.value.code == "ASK_ABORTED"
    go_on.set()
    await until(lambda: inbox.get(first.id).state is State.WITHDRAWN, "the withdrawal")
    again = asyncio.ensure_future(service.ask(keyed("filed")))
    second = await pending_one(inbox)
    assert second.id != first.id
    await asyncio.to_thread(inbox.answer, second.id, pick("npm"), surface="cli")
    assert (await asyncio.wait_for(again, 60)).answers[0].selected == ("npm",)
    assert [f.question_id for f in listening.filings] == [second.id]  # its own receipt's


async def test_nothing_is_filed_or_read_for_an_asker_that_does_not_listen(
    service: UserQuestionService, inbox: Inbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An ask with a signal has a receipt (the provider takes it), but nobody listens for the
    filing: the link settings are not read for it (they were, for every such ask)."""
    reads: list[object] = []
    read = Notices.link_settings

    def counted(self: Notices, **kwargs: float | None) -> tuple[str, bytes] | None:
        reads.append(self)
        return read(self, **kwargs)

    monkeypatch.setattr(Notices, "link_settings", counted)
    plain = AskUserQuestionRequest.from_dict(PKG, signal=AbortController().signal)
    for request in (keyed("quiet", signal=AbortController().signal), plain):
        asking = asyncio.ensure_future(service.ask(request))
        record = await pending_one(inbox)
        await asyncio.to_thread(inbox.answer, record.id, pick("npm"), surface="cli")
        await asyncio.wait_for(asking, 60)
    assert reads == []


class TestLeases:
    """One run asks a key at a time: a lease on the key, freed when its holder stops."""

    async def test_a_second_live_harness_asking_the_key_is_refused(
        self, inbox_url: str, inbox: Inbox, service: UserQuestionService
    ) -> None:
        """A second provider (as another live process would) asking a key the first is
        asking is refused with ASKED_ELSEWHERE naming the key; the first alone gets the answer;
        once the first closed, the key is free for the second."""
        other = InboxProvider(inbox_url, harness="other-process")
        try:
            mine = asyncio.ensure_future(service.ask(keyed("both")))
            record = await pending_one(inbox)
            with pytest.raises(UserQuestionError) as caught:
                await other.ask(keyed("both"))
            assert caught.value.code == "ASKED_ELSEWHERE"
            assert isinstance(caught.value, CallerRefusedError)
            assert caught.value.outcome.keeps_pending  # never the answer of a durable call
            assert '"both"' in caught.value.message
            assert "another live harness" in caught.value.message
            assert len(inbox.records()) == 1
            await asyncio.to_thread(inbox.answer, record.id, pick("pnpm"), surface="cli")
            assert (await asyncio.wait_for(mine, 60)).answers[0].selected == ("pnpm",)
            with pytest.raises(UserQuestionError) as again:
                await other.ask(keyed("both"))  # the first provider still runs: still its key
            assert again.value.code == "ASKED_ELSEWHERE"
        finally:
            await asyncio.to_thread(other.close)

    async def test_a_closed_providers_key_is_taken_at_once(
        self, inbox_url: str, inbox: Inbox
    ) -> None:
        """A provider that closed released its leases: the next asker of its key gets the
        answer given meanwhile, with no wait for a heartbeat to age."""
        first = InboxProvider(inbox_url, harness="first")
        asking = asyncio.ensure_future(first.ask(keyed("handed-on")))
        record = await pending_one(inbox)
        await asyncio.to_thread(first.close)
        with pytest.raises(UserQuestionError):
            await asking
        await asyncio.to_thread(inbox.answer, record.id, pick("npm"), surface="cli")
        second = InboxProvider(inbox_url, harness="second")
        try:
            answer = await asyncio.wait_for(second.ask(keyed("handed-on")), 60)
        finally:
            await asyncio.to_thread(second.close)
        assert answer.answers[0].selected == ("npm",)
        assert [r.id for r in inbox.records()] == [record.id]


@pytest.mark.flaky(reruns=2)
def test_kill_9_then_the_same_key_in_a_new_process_gets_the_answer(
    inbox: Inbox, inbox_url: str, harnesses: list[Harness]
) -> None:
    """A harness asks with a key and is killed; the question is answered with dsh-inbox
    answer; a new process (another label) asking with that key gets the answer at once, once;
    no second record is made."""
    first = Harness(inbox_url, "before-crash", "key", "thread-9:call-1")
    harnesses.append(first)
    (record,) = pending(inbox, "before-crash", 1)
    first.kill()
    assert dsh_inbox_answer(inbox_url, record.id, pick("npm")).wait() == (0, "")
    second = Harness(inbox_url, "after-crash", "key", "thread-9:call-1")
    harnesses.append(second)
    assert second.next("answer")["answer"] == pick("npm", by=LOGIN)
    second.next("done")
    second.finish()
    assert [r.id for r in inbox.records()] == [record.id]
    assert inbox.get(record.id).delivered

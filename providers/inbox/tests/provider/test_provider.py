"""The inbox provider in a harness: ask, abort, timeout, cancel, resume, late answers."""

from __future__ import annotations

import asyncio
import concurrent.futures
import gc
import time

import pytest
from _requests import PKG, pick
from _waits import pending_one, until
from dsh_user_questions import (
    AskUserQuestionAnswer,
    AskUserQuestionRequest,
    UserQuestionError,
    UserQuestionService,
    hookimpl,
)
from dsh_user_questions.harness import AbortController, AbortSignal, HarnessContext

from dsh_user_questions_inbox import AnswerOutcome, Inbox, QuestionRecord, State
from dsh_user_questions_inbox.provider import InboxProvider


def request(signal: AbortSignal | None = None) -> AskUserQuestionRequest:
    """The package-manager request."""
    return AskUserQuestionRequest.from_dict(PKG, signal=signal)


async def test_an_answer_from_another_surface_returns_from_ask(
    service: UserQuestionService, inbox: Inbox
) -> None:
    """ask() records the question; an answer written by another store returns from ask()."""
    asking = asyncio.ensure_future(service.ask(request()))
    record = await pending_one(inbox)
    assert record.harness == "test-harness"
    assert record.request == AskUserQuestionRequest.from_dict(PKG).to_dict()
    result = await asyncio.to_thread(inbox.answer, record.id, pick("npm"), surface="cli")
    assert result.applied
    assert await asyncio.wait_for(asyncio.shield(asking), 60) == AskUserQuestionAnswer.from_dict(
        pick("npm")
    )
    assert inbox.get(record.id).surface == "cli"


async def test_the_agent_id_is_recorded(
    service: UserQuestionService, inbox: Inbox, dsh_context: HarnessContext
) -> None:
    """The calling agent's id is kept in the record."""
    from dsh_user_questions.harness import Agent

    agent = Agent("planner")
    dsh_context.agents.enter(agent)
    asking = asyncio.ensure_future(service.ask(AskUserQuestionRequest.from_dict(PKG, agent=agent)))
    record = await pending_one(inbox)
    assert record.agent == "planner"
    await asyncio.to_thread(inbox.answer, record.id, pick("npm"), surface="cli")
    await asyncio.wait_for(asking, 60)


async def test_an_abort_withdraws_the_question(service: UserQuestionService, inbox: Inbox) -> None:
    """An abort raises ASK_ABORTED and the record says withdrawn, by the harness."""
    controller = AbortController()
    asking = asyncio.ensure_future(service.ask(request(controller.signal)))
    record = await pending_one(inbox)
    controller.abort("the agent moved on")
    with pytest.raises(UserQuestionError) as caught:
        await asking
    assert caught.value.code == "ASK_ABORTED"
    await until(lambda: inbox.get(record.id).state is State.WITHDRAWN, "the withdrawal")
    assert inbox.get(record.id).surface == "harness"


async def test_the_asks_timeout_expires_the_question(
    service: UserQuestionService, inbox: Inbox
) -> None:
    """ask(timeout=...) raises ASK_TIMED_OUT and the record says expired."""
    with pytest.raises(UserQuestionError) as caught:
        await service.ask(request(), timeout=0.5)
    assert caught.value.code == "ASK_TIMED_OUT"
    await until(lambda: inbox.records(state="expired"), "the expiry")
    assert inbox.records()[0].surface == "harness"


@pytest.mark.parametrize(
    ("how", "state"),
    [("signal", State.WITHDRAWN), ("timeout", State.EXPIRED), ("abort", State.WITHDRAWN)],
)
async def test_one_verdict_live_recorded_and_resumed(
    service: UserQuestionService, inbox: Inbox, how: str, state: State
) -> None:
    """The core's verdict (is_timeout) decides: a signal from AbortSignal.timeout, the ask's
    own timeout and an abort give the same code live and from resume(), and the record's
    state follows it (expired only for the ask's own timeout)."""
    controller = AbortController()
    signal = {"signal": AbortSignal.timeout(0.3), "abort": controller.signal}.get(how)
    timeout = 0.3 if how == "timeout" else None
    if how == "abort":
        asyncio.get_running_loop().call_later(0.3, controller.abort, "moved on")
    with pytest.raises(UserQuestionError) as live:
        await service.ask(request(signal), timeout=timeout)
    await until(lambda: inbox.records(state=state), f"the record to be {state}")
    (record,) = await asyncio.to_thread(inbox.records)
    assert record.delivered
    with pytest.raises(UserQuestionError) as resumed:
        await service.resume(record.id)
    assert resumed.value.code == live.value.code


async def test_a_request_timeout_is_recorded_as_the_deadline(
    service: UserQuestionService, inbox: Inbox
) -> None:
    """A request carrying its timeout gets a deadline in the record, so every surface sees
    when it expires."""
    before = time.time()
    asking = asyncio.ensure_future(service.ask(AskUserQuestionRequest.from_dict(PKG, timeout=600)))
    record = await pending_one(inbox)
    assert before + 600 <= record.deadline <= time.time() + 600
    await asyncio.to_thread(inbox.answer, record.id, pick("npm"), surface="cli")
    await asyncio.wait_for(asking, 60)


async def test_cancelling_the_caller_withdraws_the_question(
    service: UserQuestionService, inbox: Inbox
) -> None:
    """Cancelling the task that awaits ask() withdraws the question too."""
    asking = asyncio.ensure_future(service.ask(request()))
    record = await pending_one(inbox)
    asking.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asking
    await until(lambda: inbox.get(record.id).state is State.WITHDRAWN, "the withdrawal")


async def test_a_cancel_from_a_surface_raises_ask_cancelled(
    service: UserQuestionService, inbox: Inbox
) -> None:
    """The human closing the question elsewhere ends ask() with ASK_CANCELLED."""
    asking = asyncio.ensure_future(service.ask(request()))
    record = await pending_one(inbox)
    assert await asyncio.to_thread(inbox.settle, record.id, State.CANCELLED, surface="web")
    with pytest.raises(UserQuestionError) as caught:
        await asyncio.wait_for(asking, 60)
    assert caught.value.code == "ASK_CANCELLED"


async def test_a_bad_answer_is_refused_and_the_ask_keeps_waiting(
    service: UserQuestionService, inbox: Inbox
) -> None:
    """A surface's bad answer is refused with BAD_ANSWER; the next good one is returned."""
    asking = asyncio.ensure_future(service.ask(request()))
    record = await pending_one(inbox)
    with pytest.raises(UserQuestionError) as caught:
        await asyncio.to_thread(inbox.answer, record.id, pick("bun"), surface="cli")
    assert caught.value.code == "BAD_ANSWER"
    assert not asking.done()
    await asyncio.to_thread(inbox.answer, record.id, pick("pnpm"), surface="web")
    assert (await asyncio.wait_for(asking, 60)).answers[0].selected == ("pnpm",)


async def test_many_concurrent_asks_each_get_their_own_answer(
    service: UserQuestionService, inbox: Inbox
) -> None:
    """Twenty concurrent asks: each returns the answer given to its own record."""
    asks = [asyncio.ensure_future(service.ask(request())) for _ in range(20)]
    await until(lambda: inbox.count("pending") == 20, "twenty questions")
    records = inbox.records(state="pending")
    labels = {}
    for n, record in enumerate(records):
        labels[record.id] = "pnpm" if n % 2 else "npm"
        await asyncio.to_thread(inbox.answer, record.id, pick(labels[record.id]), surface="t")
    answers = await asyncio.wait_for(asyncio.gather(*asks), 60)
    assert sorted(a.answers[0].selected[0] for a in answers) == sorted(labels.values())


async def test_a_pending_ask_holds_no_record_of_its_question(
    service: UserQuestionService, inbox: Inbox
) -> None:
    """While asks wait, the harness keeps no record read back from the store, nor the finished
    write of it: ten thousand pending asks stay small (BENCHMARKS.md, "The inbox")."""
    asks = [asyncio.ensure_future(service.ask(request())) for _ in range(5)]
    await until(lambda: inbox.count("pending") == 5, "five questions")
    ids = {record.id for record in inbox.records(state="pending")}
    await asyncio.sleep(0.2)  # every ask is past its write, waiting
    gc.collect()
    held = [o for o in gc.get_objects() if type(o) is QuestionRecord and o.id in ids]
    assert held == [], f"{len(held)} records of pending questions are held"
    writes = [
        o
        for o in gc.get_objects()
        if isinstance(o, concurrent.futures.Future)
        and o.done()
        and isinstance(o.result(), QuestionRecord)
    ]
    assert writes == []
    for record_id in ids:
        await asyncio.to_thread(inbox.answer, record_id, pick("npm"), surface="t")
    await asyncio.wait_for(asyncio.gather(*asks), 60)


# Resume ------------------------------------------------------------------------------------------


async def test_resume_returns_an_answer_given_while_nobody_waited(
    service: UserQuestionService, inbox: Inbox
) -> None:
    """A question answered while no process waited is returned by resume()."""
    record = inbox.add(PKG, harness="earlier-run")
    inbox.answer(record.id, pick("npm"), surface="cli")
    assert await service.resume(record.id) == AskUserQuestionAnswer.from_dict(pick("npm"))


async def test_resume_waits_for_a_pending_question(
    service: UserQuestionService, inbox: Inbox
) -> None:
    """resume() of a pending question waits for its answer."""
    record = inbox.add(PKG, harness="earlier-run")
    resuming = asyncio.ensure_future(service.resume(record.id))
    await asyncio.sleep(0.2)
    assert not resuming.done()
    await asyncio.to_thread(inbox.answer, record.id, pick("pnpm"), surface="web")
    assert (await asyncio.wait_for(resuming, 60)).answers[0].selected == ("pnpm",)


@pytest.mark.parametrize(
    ("state", "code"),
    [
        (State.WITHDRAWN, "ASK_ABORTED"),
        (State.EXPIRED, "ASK_TIMED_OUT"),
        (State.CANCELLED, "ASK_CANCELLED"),
    ],
)
async def test_resume_raises_as_ask_would_for_an_ended_question(
    service: UserQuestionService, inbox: Inbox, state: State, code: object
) -> None:
    """resume() of a withdrawn, expired or cancelled question raises that ending's error."""
    record = inbox.add(PKG, harness="earlier-run")
    inbox.settle(record.id, state, surface="harness")
    with pytest.raises(UserQuestionError) as caught:
        await service.resume(record.id)
    assert caught.value.code == code


async def test_resume_of_an_unknown_id_is_a_lookup_error(service: UserQuestionService) -> None:
    """An id the store does not know is a LookupError naming it."""
    with pytest.raises(LookupError, match="nope"):
        await service.resume("nope")


async def test_an_abort_during_resume_withdraws_the_question(
    service: UserQuestionService, inbox: Inbox
) -> None:
    """Aborting a resumed wait raises ASK_ABORTED and withdraws the question."""
    record = inbox.add(PKG, harness="earlier-run")
    controller = AbortController()
    resuming = asyncio.ensure_future(service.resume(record.id, signal=controller.signal))
    await asyncio.sleep(0.2)
    controller.abort()
    with pytest.raises(UserQuestionError) as caught:
        await resuming
    assert caught.value.code == "ASK_ABORTED"
    await until(lambda: inbox.get(record.id).state is State.WITHDRAWN, "the withdrawal")


async def test_resume_needs_a_provider_that_keeps_questions(
    dsh_context: HarnessContext,
) -> None:
    """A provider without resume() gets a NotImplementedError saying why."""

    class Forgetful:
        async def ask(self, request: AskUserQuestionRequest) -> AskUserQuestionAnswer:
            raise AssertionError("not asked")

    dsh_context.user_questions.register_provider(Forgetful())
    with pytest.raises(NotImplementedError, match="keeps no questions"):
        await dsh_context.user_questions.resume("q1")


async def test_resume_without_a_provider_is_no_provider(dsh_context: HarnessContext) -> None:
    """resume() with no provider raises NO_PROVIDER, as ask() does."""
    with pytest.raises(UserQuestionError) as caught:
        await dsh_context.user_questions.resume("q1")
    assert caught.value.code == "NO_PROVIDER"


# Late answers ------------------------------------------------------------------------------------


class LateAnswers:
    """A harness plugin collecting the late answers it is handed."""

    def __init__(self) -> None:
        self.records: list[QuestionRecord] = []

    @hookimpl
    def dsh_user_questions_late_answer(self, record: QuestionRecord) -> None:
        self.records.append(record)


async def test_a_late_answer_after_a_timeout_reaches_the_hook(
    inbox_url: str, inbox: Inbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Through the installed plugin: the ask times out, a later answer is kept as late and the
    harness's dsh_user_questions_late_answer hook receives the record, once."""
    monkeypatch.setenv("DSH_USER_QUESTIONS_INBOX", inbox_url)
    monkeypatch.setenv("DSH_USER_QUESTIONS_INBOX_HARNESS", "late-test")
    monkeypatch.setenv("DSH_USER_QUESTIONS_PROVIDER", "inbox")
    ctx = HarnessContext()
    late = LateAnswers()
    ctx.register(late, name="late-answers")
    assert "inbox" in ctx.load_entrypoints()
    try:
        with pytest.raises(UserQuestionError) as caught:
            await ctx.user_questions.ask(request(), timeout=0.3)
        assert caught.value.code == "ASK_TIMED_OUT"
        await until(lambda: inbox.records(state="expired"), "the expiry")
        (record,) = inbox.records()
        result = await asyncio.to_thread(inbox.answer, record.id, pick("npm"), surface="cli")
        assert result.outcome is AnswerOutcome.LATE
        await until(lambda: late.records, "the late-answer hook")
        await asyncio.sleep(0.5)  # a second delivery would arrive within this
        (delivered,) = late.records
        assert delivered.id == record.id
        assert delivered.late_answer == pick("npm")
        assert delivered.state is State.EXPIRED
    finally:
        await ctx.aclose()


async def test_the_provider_prunes_final_records_past_the_retention(
    inbox_url: str, inbox: Inbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With DSH_USER_QUESTIONS_INBOX_RETENTION=1s, a provider that starts asking deletes an old
    answered (and delivered) record; the pending question stays."""
    old = inbox.add(PKG, harness="h")
    inbox.answer(old.id, pick("npm"), surface="cli")
    assert inbox.claim_delivery(old.id)
    await until(lambda: time.time() - inbox.get(old.id).settled_at > 1.5, "the record to age")
    monkeypatch.setenv("DSH_USER_QUESTIONS_INBOX_RETENTION", "1s")
    made = InboxProvider(inbox_url, harness="pruner")
    try:
        asking = asyncio.ensure_future(made.ask(request()))
        await until(lambda: inbox.get(old.id) is None, "the prune")
        await until(lambda: inbox.records(), "the new question")
        (record,) = inbox.records()
        assert record.state is State.PENDING
        asking.cancel()
        with pytest.raises(asyncio.CancelledError):
            await asking
    finally:
        await asyncio.to_thread(made.close)

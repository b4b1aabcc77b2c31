"""The fault suite: providers that fail in every way, hangs, aborts, races and random requests.

The service stands between a model's tool call and a UI it does not control, so no provider
behaviour may crash it, hang its caller, leave work behind or lose an error's code.
"""

from __future__ import annotations

import asyncio
import gc
import random
import sys
import threading
import time
from collections.abc import AsyncIterator
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dsh_user_questions import (
    AskUserQuestionAnswer,
    AskUserQuestionAnswerItem,
    AskUserQuestionIntent,
    AskUserQuestionItem,
    AskUserQuestionOption,
    AskUserQuestionRequest,
    UserQuestionError,
    UserQuestionErrorCode,
    UserQuestionService,
    hookimpl,
    plugin,
)
from dsh_user_questions.harness import AbortController, AbortSignal, Agent, HarnessContext
from dsh_user_questions.testing import (
    ScriptedProvider,
    make_request,
)

PNPM = {"answers": [{"id": "pkg", "selected": ["pnpm"]}]}
PNPM_ANSWER = AskUserQuestionAnswer([AskUserQuestionAnswerItem(id="pkg", selected=["pnpm"])])


def holds_no_listener(signal: AbortSignal) -> bool:
    """Whether the signal keeps nothing to call (no mapping of listeners among its referents).

    Read through the garbage collector's view of the object, not a private attribute name.
    """
    return not any(isinstance(ref, dict) and ref for ref in gc.get_referents(signal))


@pytest.fixture
async def loop_reports() -> AsyncIterator[list[dict[str, Any]]]:
    """What the running loop's exception handler receives ("never retrieved" and the like)."""
    loop = asyncio.get_running_loop()
    reports: list[dict[str, Any]] = []
    loop.set_exception_handler(lambda _loop, context: reports.append(context))
    yield reports
    loop.set_exception_handler(None)


async def settle(turns: int = 5) -> None:
    """Let the loop run a few turns, then collect garbage so dropped tasks report now."""
    for _ in range(turns):
        await asyncio.sleep(0)
    gc.collect()
    for _ in range(turns):
        await asyncio.sleep(0)


def signals() -> list[AbortSignal | None]:
    """No signal (the provider runs in the caller's task) and a live one (its own task)."""
    return [None, AbortController().signal]


# Providers that raise ----------------------------------------------------------------------------


class CustomError(Exception):
    """An exception type no library knows."""


EXCEPTIONS = [
    ValueError("bad value"),
    RuntimeError("provider crashed"),
    KeyError("missing"),
    OSError(5, "I/O error"),
    TimeoutError("ui timed out"),
    ConnectionResetError("the web page went away"),
    CustomError("custom"),
]


# Providers that return nonsense ----------------------------------------------------------------

NOT_ANSWERS = [
    (None, "got NoneType"),
    ("pnpm", "got str"),
    (42, "got int"),
    (b'{"answers": []}', "got bytes"),
    (["pnpm"], "got list"),
    (AskUserQuestionAnswerItem(id="pkg", selected=["pnpm"]), "got AskUserQuestionAnswerItem"),
    (object(), "got object"),
    ({"answers": "pnpm"}, "answers: must be an array, not a string"),
    ({"answers": [{"id": 7}]}, "answers[0].id: must be a string, not a number"),
    ({"answers": [], "extra": 1}, "extra: unknown property; allowed: answers"),
    ({}, "answers: is required"),
]


WRONG_IDS = [
    {"answers": [{"id": "other", "selected": []}]},
    {"answers": [{"id": "PKG", "selected": ["pnpm"]}]},
    {"answers": [{"id": "pkg", "selected": ["pnpm"]}, {"id": "pkg", "selected": ["npm"]}]},
    {"answers": [{"id": "", "selected": []}]},
]


class TestWhatTheProviderGives:
    """What a provider raises or returns reaches the caller as it was, or as BAD_ANSWER."""

    @pytest.mark.parametrize("with_signal", [False, True])
    @pytest.mark.parametrize("error", EXCEPTIONS, ids=lambda e: type(e).__name__)
    async def test_a_provider_exception_propagates_as_the_same_object(
        self,
        user_questions: UserQuestionService,
        scripted_provider: ScriptedProvider,
        error: Exception,
        with_signal: bool,
    ) -> None:
        """Any Exception a provider raises reaches the caller unchanged, with or without a
        signal."""
        scripted_provider.push(error)
        signal = AbortController().signal if with_signal else None
        with pytest.raises(type(error)) as info:
            await user_questions.ask(make_request(signal=signal))
        assert info.value is error
        if signal is not None:
            assert holds_no_listener(signal)

    @pytest.mark.parametrize("signal", signals(), ids=["no-signal", "signal"])
    @pytest.mark.parametrize("code", list(UserQuestionErrorCode), ids=str)
    async def test_a_provider_user_question_error_keeps_its_code(
        self, dsh_context: HarnessContext, code: UserQuestionErrorCode, signal: AbortSignal | None
    ) -> None:
        """A UserQuestionError from a provider plugin keeps its code and message, whatever the
        code."""
        error = UserQuestionError("the provider refused", code)
        dsh_context.register(ScriptedProvider(error), name="scripted")
        with pytest.raises(UserQuestionError) as info:
            await dsh_context.user_questions.ask(make_request(signal=signal))
        assert info.value is error
        assert info.value.code == code

    @pytest.mark.parametrize("signal", signals(), ids=["no-signal", "signal"])
    async def test_a_cancelled_error_from_the_provider_is_never_swallowed(
        self, user_questions: UserQuestionService, signal: AbortSignal | None
    ) -> None:
        """A provider raising CancelledError itself makes ask() raise CancelledError too."""

        class GivesUp:
            async def ask(self, request: AskUserQuestionRequest) -> object:
                await asyncio.sleep(0)
                raise asyncio.CancelledError

        user_questions.register_provider(GivesUp())
        with pytest.raises(asyncio.CancelledError):
            await user_questions.ask(make_request(signal=signal))

    @pytest.mark.parametrize("instant", [True, False], ids=["instant", "after-a-turn"])
    @pytest.mark.parametrize("with_signal", [False, True], ids=["no-signal", "signal"])
    @pytest.mark.parametrize("kind", [SystemExit, KeyboardInterrupt])
    def test_system_exit_and_keyboard_interrupt_are_never_swallowed(
        self, kind: type[BaseException], with_signal: bool, instant: bool
    ) -> None:
        """SystemExit and KeyboardInterrupt from a provider leave asyncio.run() as themselves."""

        class Exits:
            async def ask(self, request: AskUserQuestionRequest) -> object:
                if not instant:
                    await asyncio.sleep(0)
                raise kind("bye")

        async def main() -> None:
            ctx = HarnessContext()
            ctx.register(plugin)
            ctx.user_questions.register_provider(Exits())
            signal = AbortController().signal if with_signal else None
            await ctx.user_questions.ask(make_request(signal=signal))

        with pytest.raises(kind, match="bye"):
            asyncio.run(main())

    @pytest.mark.parametrize("sync", [True, False], ids=["sync", "async"])
    @pytest.mark.parametrize(("result", "problem"), NOT_ANSWERS, ids=lambda v: type(v).__name__)
    async def test_a_result_that_is_no_answer_is_bad_answer(
        self, user_questions: UserQuestionService, result: object, problem: str, sync: bool
    ) -> None:
        """None, wrong types and malformed wire forms from a sync or async provider are
        BAD_ANSWER."""

        class Returns:
            def ask(self, request: AskUserQuestionRequest) -> object:
                if sync:
                    return result

                async def later() -> object:
                    return result

                return later()

        user_questions.register_provider(Returns())
        with pytest.raises(UserQuestionError) as info:
            await user_questions.ask(make_request())
        assert info.value.code == "BAD_ANSWER"
        assert str(info.value).startswith("the user-questions provider gave a bad answer: ")
        assert problem in str(info.value)

    async def test_a_provider_plugin_returning_none_is_bad_answer(
        self, dsh_context: HarnessContext
    ) -> None:
        """A provider hook returning None (pluggy's "no result") is BAD_ANSWER, not a silent
        None."""

        class Nothing:
            @hookimpl
            def dsh_user_questions_ask(self, request: AskUserQuestionRequest) -> None:
                return None

        dsh_context.register(Nothing(), name="nothing")
        with pytest.raises(UserQuestionError) as info:
            await dsh_context.user_questions.ask(make_request())
        assert info.value.code == "BAD_ANSWER"

    @pytest.mark.parametrize("answer", WRONG_IDS)
    async def test_answers_to_questions_never_asked_are_bad_answer(
        self,
        user_questions: UserQuestionService,
        scripted_provider: ScriptedProvider,
        answer: object,
    ) -> None:
        """An item for an id that was not asked, or for the same id twice, is BAD_ANSWER."""
        scripted_provider.push(answer)
        with pytest.raises(UserQuestionError) as info:
            await user_questions.ask(make_request())
        assert info.value.code == "BAD_ANSWER"
        assert "answers[" in str(info.value)


# Hangs, aborts and late answers ----------------------------------------------------------------


class Stubborn:
    """Ignores the signal and swallows cancellation; finishes only when released."""

    def __init__(self, outcome: object) -> None:
        self.outcome = outcome
        self.release = asyncio.Event()
        self.started = asyncio.Event()
        self.finished = asyncio.Event()
        self.cancellations = 0

    async def ask(self, request: AskUserQuestionRequest) -> object:
        self.started.set()
        while not self.release.is_set():
            try:
                await self.release.wait()
            except asyncio.CancelledError:
                self.cancellations += 1
        try:
            if isinstance(self.outcome, BaseException):
                raise self.outcome
            return self.outcome
        finally:
            self.finished.set()


LATE_OUTCOMES = [
    PNPM,
    PNPM_ANSWER,
    {"answers": [{"id": "nope"}]},
    ValueError("late failure"),
    UserQuestionError.cancelled(),
]


class TestAbort:
    """An abort leaves a hung or late provider behind and wakes the caller from any thread."""

    @pytest.mark.parametrize("outcome", LATE_OUTCOMES, ids=lambda o: type(o).__name__)
    async def test_an_answer_after_the_abort_is_ignored_and_never_reported(
        self,
        user_questions: UserQuestionService,
        loop_reports: list[dict[str, Any]],
        outcome: object,
    ) -> None:
        """A provider that ignores the abort and finishes later changes nothing and logs nothing."""
        provider = Stubborn(outcome)
        user_questions.register_provider(provider)
        controller = AbortController()
        task = asyncio.ensure_future(user_questions.ask(make_request(signal=controller.signal)))
        await provider.started.wait()
        controller.abort()
        with pytest.raises(UserQuestionError) as info:
            await asyncio.wait_for(task, 5)
        assert info.value.code == "ASK_ABORTED"
        assert provider.cancellations == 1
        provider.release.set()
        await asyncio.wait_for(provider.finished.wait(), 5)
        del task, info
        await settle()
        assert loop_reports == []
        assert holds_no_listener(controller.signal)

    async def test_a_hung_provider_is_left_behind_on_abort(
        self, user_questions: UserQuestionService, loop_reports: list[dict[str, Any]]
    ) -> None:
        """Aborting returns at once even while the provider still refuses to stop."""
        provider = Stubborn(PNPM)
        user_questions.register_provider(provider)
        controller = AbortController()
        task = asyncio.ensure_future(user_questions.ask(make_request(signal=controller.signal)))
        await provider.started.wait()
        controller.abort()
        with pytest.raises(UserQuestionError) as info:
            await asyncio.wait_for(task, 5)
        assert info.value.code == "ASK_ABORTED"
        assert not provider.finished.is_set()
        provider.release.set()
        await asyncio.wait_for(provider.finished.wait(), 5)
        await settle()
        assert loop_reports == []

    async def test_a_sync_provider_returning_a_pending_future_is_aborted_and_cancelled(
        self,
        user_questions: UserQuestionService,
    ) -> None:
        """A plain function returning a future that never resolves is aborted, and the future
        too."""
        futures: list[asyncio.Future[Any]] = []

        class Future:
            def ask(self, request: AskUserQuestionRequest) -> object:
                futures.append(asyncio.get_running_loop().create_future())
                return futures[-1]

        user_questions.register_provider(Future())
        controller = AbortController()
        asyncio.get_running_loop().call_later(0.01, controller.abort)
        with pytest.raises(UserQuestionError) as info:
            await asyncio.wait_for(user_questions.ask(make_request(signal=controller.signal)), 5)
        assert info.value.code == "ASK_ABORTED"
        await settle()
        assert futures[0].cancelled()

    @pytest.mark.parametrize("how", ["timeout", "thread"])
    async def test_an_abort_from_another_thread_wakes_the_caller(
        self, user_questions: UserQuestionService, loop_reports: list[dict[str, Any]], how: str
    ) -> None:
        """A timeout signal (timer thread) or a thread calling abort() ends a hung ask promptly."""
        provider = Stubborn(PNPM)
        user_questions.register_provider(provider)
        if how == "timeout":
            signal = AbortSignal.timeout(0.01)
        else:
            controller = AbortController()
            signal = controller.signal
        asking = asyncio.ensure_future(user_questions.ask(make_request(signal=signal)))
        if how == "thread":
            # The thread aborts once the provider is running (on a loaded machine a timer of its
            # own could fire before the provider's task ever started).
            await asyncio.wait_for(provider.started.wait(), 5)
            threading.Timer(0.01, controller.abort).start()
        with pytest.raises(UserQuestionError) as info:
            await asyncio.wait_for(asking, 5)
        assert info.value.code == "ASK_ABORTED"
        if how == "timeout":
            assert isinstance(info.value.__cause__, TimeoutError)
        provider.release.set()
        if provider.started.is_set():  # a provider whose task never started has nothing to finish
            await asyncio.wait_for(provider.finished.wait(), 5)
        await settle()
        assert loop_reports == []


# Register and dispose from many threads --------------------------------------------------------


# Abort racing an answer ------------------------------------------------------------------------


class Outcomes:
    """An observer recording every answered and failed ask with its request."""

    def __init__(self) -> None:
        self.events: list[tuple[str, AskUserQuestionRequest]] = []

    @hookimpl
    def dsh_user_questions_answered(self, request: AskUserQuestionRequest) -> None:
        self.events.append(("answered", request))

    @hookimpl
    def dsh_user_questions_failed(self, request: AskUserQuestionRequest) -> None:
        self.events.append(("failed", request))

    def of(self, request: AskUserQuestionRequest) -> list[str]:
        return [kind for kind, seen in self.events if seen is request]


class AnswersAfter:
    """Answers after a number of loop turns, writing down when it finished or was cancelled."""

    def __init__(self, log: list[str]) -> None:
        self.turns = 0
        self.log = log

    async def ask(self, request: AskUserQuestionRequest) -> object:
        try:
            for _ in range(self.turns):
                await asyncio.sleep(0)
        except asyncio.CancelledError:
            self.log.append("provider cancelled")
            raise
        self.log.append("provider finished")
        return PNPM


async def race(
    ctx: HarnessContext,
    observer: Outcomes,
    provider: AnswersAfter,
    answer_after: int,
    abort_after: int,
) -> str:
    """One ask whose provider answers after ``answer_after`` turns and whose signal aborts
    after ``abort_after`` turns; checks the outcome against the order of events."""
    log = provider.log
    log.clear()
    provider.turns = answer_after
    controller = AbortController()
    request = make_request(signal=controller.signal)

    async def abort() -> None:
        for _ in range(abort_after):
            await asyncio.sleep(0)
        log.append("aborted")
        controller.abort()

    aborter = asyncio.ensure_future(abort())  # created first, so it runs first
    asking = asyncio.ensure_future(ctx.user_questions.ask(request))
    try:
        answer = await asking
    except UserQuestionError as error:
        assert error.code == "ASK_ABORTED"  # noqa: PT017 - either outcome of the race is valid
        outcome = "aborted"
    else:
        assert answer == PNPM_ANSWER
        outcome = "answered"
    await aborter
    for _ in range(3):  # a cancelled provider finishes a turn or two after the caller
        await asyncio.sleep(0)
    assert holds_no_listener(controller.signal)
    assert observer.of(request) == [{"answered": "answered", "aborted": "failed"}[outcome]]
    # A provider that finished before the abort keeps its answer; one still working when the
    # abort is observed is cancelled, and the ask is aborted.
    finished = "provider finished" in log
    if finished and log.index("provider finished") < log.index("aborted"):
        assert outcome == "answered", log
    if "provider cancelled" in log:
        assert outcome == "aborted", log
    assert len([event for event in log if event.startswith("provider")]) <= 1
    return outcome


# Random requests -------------------------------------------------------------------------------

_labels = st.sampled_from(["pnpm", "npm", "yarn", "Approve", "", " "])
_ids = st.sampled_from(["pkg", "name", "plan-review", ""])
_questions = st.builds(
    AskUserQuestionItem,
    id=_ids,
    question=st.text(max_size=8),
    detail=st.none() | st.text(max_size=4),
    header=st.none() | st.text(max_size=4),
    options=st.lists(st.builds(AskUserQuestionOption, _labels), max_size=3),
    multi_select=st.booleans(),
    intent=st.none() | st.builds(AskUserQuestionIntent, st.just("plan-review"), _labels),
)
_answer_items = st.fixed_dictionaries(
    {"id": _ids, "selected": st.lists(_labels, max_size=3)},
    optional={"custom": st.text(max_size=3)},
)
_provider_results = st.one_of(
    st.lists(_answer_items, max_size=3).map(lambda items: {"answers": items}),
    st.sampled_from(list(UserQuestionErrorCode)).map(
        lambda code: UserQuestionError("the provider refused", code)
    ),
    st.sampled_from([None, 42, "pnpm", ["pnpm"], {"answers": "x"}, {"nope": 1}]),
)
_scenarios = st.tuples(
    st.lists(_questions, max_size=4),
    st.sampled_from(["none", "root", "child", "stale", "stranger"]),
    st.sampled_from(["none", "live", "aborted"]),
    st.none() | _provider_results,
)

Scenario = tuple[list[AskUserQuestionItem], str, str, object]


async def _ask_each(scenarios: list[Scenario]) -> None:
    ctx = HarnessContext()
    ctx.register(plugin)
    service = ctx.user_questions
    root, child, stale = Agent("root"), Agent("child"), Agent("stale")
    ctx.agents.enter(root)
    ctx.agents.enter(child, owner=root)
    ctx.agents.enter(Agent("stale"))
    agents = {"none": None, "root": root, "child": child, "stale": stale, "stranger": Agent("x")}
    for questions, agent, signal_kind, result in scenarios:
        signal = {
            "none": None,
            "live": AbortController().signal,
            "aborted": AbortSignal.abort("stop"),
        }[signal_kind]
        request = AskUserQuestionRequest(questions=questions, agent=agents[agent], signal=signal)
        provider = ScriptedProvider() if result is None else ScriptedProvider(result)
        dispose = service.register_provider(provider) if result is not None else lambda: None
        try:
            answer = await service.ask(request)
        except UserQuestionError as error:
            # Either outcome is valid for a random scenario: pytest.raises does not apply here.
            assert isinstance(error.code, UserQuestionErrorCode)  # noqa: PT017
            assert str(error)  # noqa: PT017
            if result is None:
                assert error.code != "BAD_ANSWER"  # noqa: PT017
        else:
            assert isinstance(answer, AskUserQuestionAnswer)
            assert provider.requests == [request]
            assert {item.id for item in answer.answers} <= {q.id for q in questions}
        finally:
            dispose()
        if isinstance(signal, AbortSignal):
            assert holds_no_listener(signal)


class TestRandomRequests:
    """Random requests: never a crash, every failure with a code."""

    @pytest.mark.fuzz
    @given(st.lists(_scenarios, min_size=1, max_size=12))
    def test_random_requests_never_crash_and_every_failure_has_a_code(
        self,
        scenarios: list[Scenario],
    ) -> None:
        """Random requests, callers, signals and provider results: an answer or a coded error."""
        asyncio.run(_ask_each(scenarios))


# Abort versus a provider's late outcome --------------------------------------------------------


class SettledTogether:
    """A provider whose awaited future is settled in the same loop step as the abort."""

    def __init__(self, outcome: object) -> None:
        self.outcome = outcome
        self.future: asyncio.Future[None] | None = None

    async def ask(self, request: object) -> object:
        self.future = asyncio.get_running_loop().create_future()
        await self.future
        if isinstance(self.outcome, BaseException):
            raise self.outcome
        return self.outcome


async def settle_with_abort(
    user_questions: UserQuestionService, provider: SettledTogether
) -> asyncio.Future[AskUserQuestionAnswer]:
    user_questions.register_provider(provider)
    controller = AbortController()
    asking = asyncio.ensure_future(user_questions.ask(make_request(signal=controller.signal)))
    await settle()
    assert provider.future is not None
    provider.future.set_result(None)  # the provider resumes first...
    controller.abort(RuntimeError("the session ended"))  # ...the abort comes in the same step
    return asking


class TestRaces:
    """An abort racing an answer or an error: exactly one outcome, the same each time."""

    async def test_an_abort_racing_an_answer_has_exactly_one_outcome(
        self, dsh_context: HarnessContext, loop_reports: list[dict[str, Any]]
    ) -> None:
        """Whatever turn the abort lands on, an ask is answered or aborted, never both or
        neither."""
        observer = Outcomes()
        dsh_context.register(observer, name="outcomes")
        provider = AnswersAfter([])
        dsh_context.user_questions.register_provider(provider)
        for answer_after in range(5):
            outcomes = []
            for abort_after in range(10):
                outcomes.append(
                    await race(dsh_context, observer, provider, answer_after, abort_after)
                )
            # An abort before the ask started aborts it; one long after the answer changes nothing;
            # and once the answer beats the abort, a later abort cannot undo it.
            assert outcomes[0] == "aborted"
            assert outcomes[-1] == "answered"
            flip = outcomes.index("answered")
            assert set(outcomes[flip:]) == {"answered"}, outcomes
        await settle()
        assert loop_reports == []

    async def test_an_abort_from_a_thread_racing_an_answer_has_exactly_one_outcome(
        self, dsh_context: HarnessContext, loop_reports: list[dict[str, Any]]
    ) -> None:
        """An abort from another thread at a random moment still gives exactly one outcome."""
        observer = Outcomes()
        dsh_context.register(observer, name="outcomes")
        rng = random.Random(6)
        seen = set()

        class Sleeps:
            async def ask(self, request: AskUserQuestionRequest) -> object:
                await asyncio.sleep(rng.uniform(0, 0.002))
                return PNPM

        dsh_context.user_questions.register_provider(Sleeps())
        for _ in range(150):
            controller = AbortController()
            request = make_request(signal=controller.signal)
            timer = threading.Timer(rng.uniform(0, 0.002), controller.abort)
            timer.start()
            try:
                answer = await asyncio.wait_for(dsh_context.user_questions.ask(request), 5)
            except UserQuestionError as error:
                assert error.code == "ASK_ABORTED"  # noqa: PT017 - either outcome of the race is valid
                outcome = "failed"
            else:
                assert answer == PNPM_ANSWER
                outcome = "answered"
            timer.join()
            seen.add(outcome)
            assert observer.of(request) == [outcome]
            assert holds_no_listener(controller.signal)
        await settle()
        assert loop_reports == []
        assert seen  # at least one ask ran to an outcome; which ones depends on the machine

    async def test_a_plain_exception_after_the_abort_becomes_ask_aborted(
        self,
        user_questions: UserQuestionService,
    ) -> None:
        """A provider failing with a plain exception once the signal aborted gives ASK_ABORTED."""
        boom = OSError("the screen went away as the user left")
        asking = await settle_with_abort(user_questions, SettledTogether(boom))
        with pytest.raises(UserQuestionError) as info:
            await asyncio.wait_for(asking, 30)
        assert info.value.code == "ASK_ABORTED"
        assert isinstance(info.value.__cause__, RuntimeError)
        assert info.value.__context__ is boom

    async def test_a_user_question_error_beats_the_abort(
        self, user_questions: UserQuestionService
    ) -> None:
        """A UserQuestionError from the provider (ASK_CANCELLED) wins over a simultaneous abort."""
        asking = await settle_with_abort(
            user_questions, SettledTogether(UserQuestionError.cancelled())
        )
        with pytest.raises(UserQuestionError) as info:
            await asyncio.wait_for(asking, 30)
        assert info.value.code == "ASK_CANCELLED"

    async def test_an_answer_handed_back_before_the_abort_is_acted_on_wins(
        self,
        user_questions: UserQuestionService,
    ) -> None:
        """The provider returned its answer before the service acted on the abort: it is taken."""
        answer = {"answers": [{"id": "pkg", "selected": ["npm"]}]}
        asking = await settle_with_abort(user_questions, SettledTogether(answer))
        assert await asyncio.wait_for(asking, 30) == AskUserQuestionAnswer.from_dict(answer)


# Threads registering providers while others ask ------------------------------------------------


class PluginProvider:
    @hookimpl
    def dsh_user_questions_ask(self, request: object) -> object:
        return {"answers": []}


class Always:
    def ask(self, request: object) -> object:
        return {"answers": []}


class TestThreads:
    """Providers registered and disposed from many threads at once."""

    def test_register_and_dispose_from_many_threads_never_hold_two(
        self,
        user_questions: UserQuestionService,
    ) -> None:
        """Threads racing to register, dispose and call stale disposes never make two providers."""
        threads, rounds = 8, 400
        barrier = threading.Barrier(threads)
        lock = threading.Lock()
        state = {"active": 0, "peak": 0, "wins": 0, "refusals": 0}
        failures: list[BaseException] = []
        # Until one thread has been refused, a winner holds its registration a while: the
        # threads then surely meet, however a loaded machine schedules them (on an idle one
        # they meet at once; under load one thread once ran all its rounds alone).
        refused = threading.Event()

        def worker() -> None:
            provider = ScriptedProvider()
            stale = []
            try:
                barrier.wait()
                for _ in range(rounds):
                    try:
                        dispose = user_questions.register_provider(provider)
                    except UserQuestionError as error:
                        assert error.code == "DUPLICATE_PROVIDER"  # noqa: PT017 - a refusal is a valid outcome
                        with lock:
                            state["refusals"] += 1
                        refused.set()
                        for old in stale[-3:]:
                            old()  # a stale dispose must never free another's registration
                        continue
                    with lock:
                        state["active"] += 1
                        state["wins"] += 1
                        state["peak"] = max(state["peak"], state["active"])
                    if not refused.is_set():
                        refused.wait(5)
                    time.sleep(0)
                    with lock:
                        state["active"] -= 1
                    dispose()
                    dispose()
                    stale.append(dispose)
            except BaseException as error:  # reported by the main thread
                failures.append(error)

        switch = sys.getswitchinterval()
        sys.setswitchinterval(1e-6)
        try:
            workers = [threading.Thread(target=worker) for _ in range(threads)]
            for thread in workers:
                thread.start()
            for thread in workers:
                thread.join(30)
        finally:
            sys.setswitchinterval(switch)
        assert failures == []
        assert state["peak"] == 1
        assert state["wins"] > 0
        assert state["refusals"] > 0
        user_questions.register_provider(ScriptedProvider())()  # the slot ends empty

    @staticmethod
    def _gone_once_chosen(
        ctx: HarnessContext, plugin: object, monkeypatch: pytest.MonkeyPatch
    ) -> UserQuestionService:
        """Register ``plugin`` as the provider; it is unregistered right after the service
        chooses it, as another thread's unregister would land. The context's service."""
        service: UserQuestionService = ctx.user_questions
        ctx.register(plugin, name="ui")
        chosen = service._providers

        def chosen_then_gone() -> Any:
            found = chosen()
            if ctx.plugin_manager.is_registered(plugin):
                ctx.unregister(plugin)
            return found

        monkeypatch.setattr(service, "_providers", chosen_then_gone)
        return service

    async def test_a_provider_unregistered_as_it_is_called_is_no_provider(
        self, dsh_context: HarnessContext, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """The one plugin provider is unregistered (by another thread) between the service
        choosing it and calling the hook: nobody answered, so the ask raises NO_PROVIDER, never
        BAD_ANSWER for the None that pluggy returns for a hook nobody implements any more."""
        service = self._gone_once_chosen(dsh_context, PluginProvider(), monkeypatch)
        with pytest.raises(UserQuestionError) as caught:
            await service.ask(make_request())
        assert caught.value.code == "NO_PROVIDER"

    async def test_a_keeping_provider_unregistered_as_it_resumes_is_no_provider(
        self, dsh_context: HarnessContext, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """The same race for resume(): NO_PROVIDER, not "keeps no questions"."""

        class Keeping(PluginProvider):
            @hookimpl
            def dsh_user_questions_resume(self, question_id: str, signal: object) -> object:
                return {"answers": []}

        service = self._gone_once_chosen(dsh_context, Keeping(), monkeypatch)
        with pytest.raises(UserQuestionError) as caught:
            await service.resume("q-1")
        assert caught.value.code == "NO_PROVIDER"

    async def test_providers_registered_from_threads_never_confuse_an_ask(
        self,
        dsh_context: HarnessContext,
    ) -> None:
        """register_provider, ctx.register and ctx.unregister racing asks: only clean outcomes.

        Every ask gets an answer, NO_PROVIDER or DUPLICATE_PROVIDER (never BAD_ANSWER or a crash),
        and once the threads stop at most one provider is active and the state is consistent.
        """
        service: UserQuestionService = dsh_context.user_questions
        stop = threading.Event()
        crashes: list[BaseException] = []

        def plugins() -> None:
            plugin = PluginProvider()
            try:
                while not stop.is_set():
                    try:
                        dsh_context.register(plugin, name="ui")
                    except UserQuestionError as error:
                        codes.add(f"register: {error.code}")
                    else:
                        dsh_context.unregister(plugin)
            except BaseException as error:  # reported below
                crashes.append(error)

        def registered() -> None:
            try:
                while not stop.is_set():
                    try:
                        dispose = service.register_provider(Always())
                    except UserQuestionError as error:
                        codes.add(f"register_provider: {error.code}")
                    else:
                        time.sleep(0)
                        dispose()
            except BaseException as error:  # reported below
                crashes.append(error)

        codes: set[str] = set()
        threads = [threading.Thread(target=plugins), threading.Thread(target=registered)]
        for thread in threads:
            thread.start()
        try:
            for _ in range(3_000):
                try:
                    await service.ask(make_request())
                    codes.add("answered")
                except UserQuestionError as error:
                    codes.add(str(error.code))
                await asyncio.sleep(0)
        finally:
            stop.set()
            for thread in threads:
                thread.join(30)
        assert not crashes
        assert codes <= {
            "answered",
            "NO_PROVIDER",
            "DUPLICATE_PROVIDER",
            "register: DUPLICATE_PROVIDER",
            "register_provider: DUPLICATE_PROVIDER",
        }
        # Quiet now: no provider plugin was left registered, and one provider works.
        assert dsh_context.plugin_manager.get_plugin("ui") is None
        service.register_provider(Always())
        assert await service.ask(make_request()) == AskUserQuestionAnswer([])

"""Opt-in timeouts: ask(request, timeout=...) and AskUserQuestionRequest(timeout=...)."""

from __future__ import annotations

import asyncio
import gc
import math

import pytest

from dsh_user_questions import (
    AskTimedOutError,
    AskUserQuestionAnswer,
    AskUserQuestionRequest,
    UserQuestionError,
    UserQuestionService,
    tool,
)
from dsh_user_questions.harness import AbortController, AbortSignal, HarnessContext
from dsh_user_questions.testing import WAIT_FOR_ABORT, ScriptedProvider, make_request

PNPM = {"answers": [{"id": "pkg", "selected": ["pnpm"]}]}
TIMED_OUT = "the user did not answer ask_user_question in time"


def live_loop_timers() -> int:
    """asyncio timer handles alive and not cancelled (an ask's timeout is the loop's timer)."""
    gc.collect()
    return sum(
        1 for o in gc.get_objects() if isinstance(o, asyncio.TimerHandle) and not o.cancelled()
    )


class TestTimeout:
    """ask(request, timeout=...) and the request's timeout: TIMEOUT, seen by the provider."""

    async def test_a_timeout_ends_an_unanswered_ask_with_its_own_code(
        self, user_questions: UserQuestionService, scripted_provider: ScriptedProvider
    ) -> None:
        """ask(request, timeout=...) raises ASK_TIMED_OUT, chained from the timer's own error."""
        scripted_provider.push(WAIT_FOR_ABORT)
        with pytest.raises(UserQuestionError) as info:
            await asyncio.wait_for(user_questions.ask(make_request(), timeout=0.05), 30)
        assert info.value.code == "ASK_TIMED_OUT"
        assert str(info.value) == TIMED_OUT
        assert isinstance(info.value.__cause__, AskTimedOutError)

    async def test_the_provider_sees_the_timeout_through_the_request_signal(
        self, user_questions: UserQuestionService, scripted_provider: ScriptedProvider
    ) -> None:
        """The provider's request carries a signal that aborts when the timeout expires."""
        scripted_provider.push(WAIT_FOR_ABORT)
        request = make_request(timeout=0.05)
        with pytest.raises(UserQuestionError) as info:
            await asyncio.wait_for(user_questions.ask(request), 30)
        assert info.value.code == "ASK_TIMED_OUT"
        seen = scripted_provider.requests[0]
        assert seen.signal is not None
        assert seen.signal.aborted
        assert isinstance(seen.signal.reason, AskTimedOutError)
        assert seen.questions == request.questions

    async def test_a_provider_ignoring_the_timeout_is_cancelled(
        self,
        user_questions: UserQuestionService,
    ) -> None:
        """A provider that never looks at the signal is cancelled; the caller gets ASK_TIMED_OUT."""
        cancelled = asyncio.Event()

        class Hung:
            async def ask(self, request: AskUserQuestionRequest) -> object:
                try:
                    await asyncio.Event().wait()
                finally:
                    cancelled.set()
                return None

        user_questions.register_provider(Hung())
        with pytest.raises(UserQuestionError) as info:
            await asyncio.wait_for(user_questions.ask(make_request(), timeout=0.05), 30)
        assert info.value.code == "ASK_TIMED_OUT"
        await asyncio.wait_for(cancelled.wait(), 30)

    async def test_the_argument_overrides_the_request_and_none_means_no_timeout(
        self, user_questions: UserQuestionService, scripted_provider: ScriptedProvider
    ) -> None:
        """ask(timeout=) wins over request.timeout; an answer before the deadline is returned."""
        scripted_provider.push(PNPM, PNPM)
        answer = await user_questions.ask(make_request(timeout=0.0), timeout=60)
        assert answer == AskUserQuestionAnswer.from_dict(PNPM)
        assert await user_questions.ask(make_request()) == AskUserQuestionAnswer.from_dict(PNPM)

    async def test_an_infinite_timeout_never_fires(
        self, user_questions: UserQuestionService, scripted_provider: ScriptedProvider
    ) -> None:
        """timeout=math.inf (or 1e10) waits as long as it takes."""

        async def later(request: AskUserQuestionRequest) -> object:
            await asyncio.sleep(0.05)
            return PNPM

        scripted_provider.push(later, later)
        assert await user_questions.ask(make_request(), timeout=math.inf)
        assert await user_questions.ask(make_request(), timeout=1e10)

    @pytest.mark.parametrize(
        ("value", "error"), [(-1, ValueError), (math.nan, ValueError), ("5", TypeError)]
    )
    async def test_a_bad_timeout_is_refused(
        self, user_questions: UserQuestionService, value: object, error: type[Exception]
    ) -> None:
        """A negative, NaN or non-number timeout is refused, on the request and on ask()."""
        with pytest.raises(error, match="timeout must be a number of seconds"):
            AskUserQuestionRequest(questions=make_request().questions, timeout=value)  # type: ignore[arg-type]
        with pytest.raises(error, match="timeout must be a number of seconds"):
            await user_questions.ask(make_request(), timeout=value)  # type: ignore[arg-type]

    async def test_finished_asks_with_a_timeout_leave_nothing_behind(
        self, user_questions: UserQuestionService, scripted_provider: ScriptedProvider
    ) -> None:
        """1,000 answered asks with timeout=300 and a session signal (half of them answered after
        a task switch, so their timer was started) leave no listener on the session's signal, no
        live timer and no task (their bytes: benchmarks/bench_signals.py)."""
        session = AbortController().signal
        loop = asyncio.get_running_loop()
        timers_before = live_loop_timers()

        async def after_a_task_switch(_: AskUserQuestionRequest) -> object:
            await asyncio.sleep(0)
            return PNPM

        scripted_provider.push(*([PNPM, after_a_task_switch] * 500))
        for _ in range(1_000):
            await user_questions.ask(make_request(signal=session), timeout=300)
        scripted_provider.requests.clear()  # the kit keeps every request (and its signal)
        gc.collect()
        assert session._listeners in (None, {})
        assert live_loop_timers() <= timers_before
        assert asyncio.all_tasks(loop) == {asyncio.current_task()}
        assert not session.aborted

    async def test_the_tool_tells_the_model_the_user_did_not_answer_in_time(
        self, dsh_context: HarnessContext, scripted_provider: ScriptedProvider
    ) -> None:
        """tool.run(timeout=...) gives an error result with ASK_TIMED_OUT, never a guess."""
        scripted_provider.push(WAIT_FOR_ABORT)
        arguments = {"questions": [{"id": "pkg", "question": "Which?", "options": []}]}
        result = await asyncio.wait_for(tool.run(dsh_context, arguments, timeout=0.05), 30)
        assert result.is_error
        assert result.content == f"Error: {TIMED_OUT}"
        assert result.error == {"name": "AskTimedOutError", "code": "ASK_TIMED_OUT"}
        assert "judgment" not in result.content


class TestAbortBesideTimeout:
    """An abort signal beside the timeout stays an abort."""

    async def test_the_request_signal_still_aborts_with_ask_aborted(
        self, user_questions: UserQuestionService, scripted_provider: ScriptedProvider
    ) -> None:
        """With a timeout set, an abort of the caller's own signal is still ASK_ABORTED."""
        scripted_provider.push(WAIT_FOR_ABORT)
        controller = AbortController()
        asking = asyncio.ensure_future(
            user_questions.ask(make_request(signal=controller.signal), timeout=60)
        )
        await asyncio.sleep(0.01)
        controller.abort(RuntimeError("the session ended"))
        with pytest.raises(UserQuestionError) as info:
            await asyncio.wait_for(asking, 30)
        assert info.value.code == "ASK_ABORTED"

    def test_an_abort_signal_timeout_stays_an_abort(self) -> None:
        """A signal the caller made with AbortSignal.timeout is the caller's abort: ASK_ABORTED."""
        error = UserQuestionError.aborted_by(AbortSignal.abort(TimeoutError("yours")))
        assert error.code == "ASK_ABORTED"

"""``UserQuestionService.ask_sync``: asking from synchronous code in any thread."""

from __future__ import annotations

import asyncio
import gc
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from dsh_user_questions import AskUserQuestionRequest, UserQuestionErrorCode, plugin
from dsh_user_questions._sync import question_loop
from dsh_user_questions.errors import UserQuestionError
from dsh_user_questions.harness import AbortController, HarnessContext
from dsh_user_questions.testing import (
    WAIT_FOR_ABORT,
    ScriptedProvider,
    make_question,
    make_request,
)

PNPM = {"answers": [{"id": "pkg", "selected": ["pnpm"]}]}


@pytest.fixture
def ctx() -> Iterator[HarnessContext]:
    context = HarnessContext()
    context.register(plugin)
    yield context
    asyncio.run(context.aclose())


def answered_in(threads: list[threading.Thread]) -> Any:
    """A script step answering PNPM that records the thread it ran in."""

    def step(_request: AskUserQuestionRequest) -> Any:
        threads.append(threading.current_thread())
        return PNPM

    return step


class TestWhereTheAskRuns:
    def test_a_plain_thread_gets_the_answer(self, ctx: HarnessContext) -> None:
        """A thread without a loop gets the checked answer; the ask ran on the question loop."""
        threads: list[threading.Thread] = []
        ctx.user_questions.register_provider(ScriptedProvider(answered_in(threads)))
        with ThreadPoolExecutor(1) as pool:
            answer = pool.submit(ctx.user_questions.ask_sync, make_request()).result()
        assert answer.answers[0].selected == ("pnpm",)
        assert threads[0].name == "dsh-user-questions"

    async def test_a_running_loops_thread_is_refused(self, ctx: HarnessContext) -> None:
        """Called on a running loop's thread, ask_sync raises at once, as ``asyncio.run()``
        does, instead of blocking that loop until the human answers; nothing is asked."""
        threads: list[threading.Thread] = []
        provider = ScriptedProvider(answered_in(threads))
        ctx.user_questions.register_provider(provider)
        with pytest.raises(RuntimeError, match=r"running event loop's thread.*await"):
            ctx.user_questions.ask_sync(make_request())
        assert threads == []
        answer = await asyncio.to_thread(ctx.user_questions.ask_sync, make_request())
        assert answer.answers[0].selected == ("pnpm",)
        assert threads == [question_loop(ctx.user_questions).thread]

    def test_the_question_loops_own_thread_asks_on_a_helper_thread(
        self, ctx: HarnessContext
    ) -> None:
        """A provider on the question loop asking synchronously gets its answer from a helper
        thread's loop (the question loop cannot wait for itself)."""
        threads: list[threading.Thread] = []
        inner = make_request(make_question(id="inner"))

        def nested(_request: AskUserQuestionRequest) -> Any:
            got = ctx.user_questions.ask_sync(inner)
            assert got.answers[0].id == "inner"
            return PNPM

        def inner_answer(_request: AskUserQuestionRequest) -> Any:
            threads.append(threading.current_thread())
            return {"answers": [{"id": "inner", "selected": ["npm"]}]}

        ctx.user_questions.register_provider(ScriptedProvider(nested, inner_answer))
        answer = ctx.user_questions.ask_sync(make_request())
        assert answer.answers[0].selected == ("pnpm",)
        assert threads[0].name == "dsh-user-questions-helper"

    def test_threads_asking_at_once_share_one_loop(self, ctx: HarnessContext) -> None:
        """Eight threads asking at once each get an answer, all asked on the one question loop."""
        threads: list[threading.Thread] = []
        ctx.user_questions.register_provider(ScriptedProvider(*[answered_in(threads)] * 8))
        with ThreadPoolExecutor(8) as pool:
            futures = [pool.submit(ctx.user_questions.ask_sync, make_request()) for _ in range(8)]
            answers = [future.result() for future in futures]
        assert all(answer.answers[0].selected == ("pnpm",) for answer in answers)
        assert len(set(threads)) == 1


class TestEndingTheAsk:
    def test_the_timeout_ends_it(self, ctx: HarnessContext) -> None:
        """``timeout`` withdraws an unanswered question: ``ASK_TIMED_OUT``."""
        provider = ScriptedProvider(WAIT_FOR_ABORT)
        ctx.user_questions.register_provider(provider)
        with pytest.raises(UserQuestionError) as caught:
            ctx.user_questions.ask_sync(make_request(), timeout=0.01)
        assert caught.value.code == UserQuestionErrorCode.ASK_TIMED_OUT
        signal = provider.requests[0].signal
        assert signal is not None
        assert signal.aborted

    def test_an_abort_from_another_thread_ends_it(self, ctx: HarnessContext) -> None:
        """The request's signal aborted from a third thread ends the ask with ``ASK_ABORTED``."""
        controller = AbortController()
        asked = threading.Event()

        async def pending(_request: AskUserQuestionRequest) -> Any:
            asked.set()
            await asyncio.Event().wait()

        ctx.user_questions.register_provider(ScriptedProvider(pending))
        aborter = threading.Thread(target=lambda: (asked.wait(), controller.abort("enough")))
        aborter.start()
        with pytest.raises(UserQuestionError) as caught:
            ctx.user_questions.ask_sync(make_request(signal=controller.signal))
        aborter.join()
        assert caught.value.code == UserQuestionErrorCode.ASK_ABORTED

    async def test_aclose_withdraws_a_pending_sync_ask(self) -> None:
        """``aclose()`` on the caller's loop withdraws an ask pending on the question loop."""
        ctx = HarnessContext()
        ctx.register(plugin)
        asked = threading.Event()

        async def pending(_request: AskUserQuestionRequest) -> Any:
            asked.set()
            await asyncio.Event().wait()

        ctx.user_questions.register_provider(ScriptedProvider(pending))
        with ThreadPoolExecutor(1) as pool:
            future = pool.submit(ctx.user_questions.ask_sync, make_request())
            await asyncio.to_thread(asked.wait)
            await ctx.aclose()
            with pytest.raises(UserQuestionError) as caught:
                await asyncio.wrap_future(future)
        assert caught.value.code == UserQuestionErrorCode.ASK_ABORTED

    def test_a_refused_request_raises_in_the_caller(self, ctx: HarnessContext) -> None:
        """A request the rules refuse raises its error in the calling thread."""
        ctx.user_questions.register_provider(ScriptedProvider())
        with pytest.raises(UserQuestionError) as caught:
            ctx.user_questions.ask_sync(AskUserQuestionRequest(questions=()))
        assert caught.value.code == UserQuestionErrorCode.EMPTY_QUESTIONS


class TestTheLoopsLife:
    def test_the_loop_ends_with_its_service(self) -> None:
        """Once the context and its service are gone, the question loop's thread ends."""
        ctx = HarnessContext()
        ctx.register(plugin)
        ctx.user_questions.register_provider(ScriptedProvider(PNPM))
        ctx.user_questions.ask_sync(make_request())
        thread = question_loop(ctx.user_questions).thread
        del ctx
        gc.collect()
        thread.join(30)
        assert not thread.is_alive()


EXITING = """
import atexit
from dsh_user_questions import plugin
from dsh_user_questions._sync import close_sync
from dsh_user_questions.harness import HarnessContext
from dsh_user_questions.testing import ScriptedProvider, make_request

ctx = HarnessContext()
ctx.register(plugin)
atexit.register(close_sync, ctx)  # what the llm plugin does for the context it makes
ctx.user_questions.register_provider(ScriptedProvider({PNPM!r}))
print(ctx.user_questions.ask_sync(make_request()).to_dict()["answers"][0]["selected"][0])
"""


def test_closing_at_exit_finds_the_question_loop_running() -> None:
    """A context closed by an exit callback registered before its first synchronous ask (the
    llm plugin's) closes on its question loop: no "Exception ignored in atexit callback"."""
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-c", EXITING.replace("{PNPM!r}", repr(PNPM))],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, "pnpm\n", "")

"""Timeouts on the asking loop's own timer; abort listeners run on the loop they came from."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import textwrap
import threading

import pytest

from dsh_user_questions import UserQuestionError, UserQuestionErrorCode, UserQuestionService
from dsh_user_questions.harness import AbortController
from dsh_user_questions.testing import WAIT_FOR_ABORT, ScriptedProvider, make_request

TIMEOUT_IN_A_FRESH_PROCESS = textwrap.dedent(
    """
    import asyncio, json, threading
    from dsh_user_questions import UserQuestionError, plugin
    from dsh_user_questions.harness import HarnessContext
    from dsh_user_questions.testing import WAIT_FOR_ABORT, ScriptedProvider, make_request

    async def main():
        async with HarnessContext() as ctx:
            ctx.register(plugin)
            ctx.user_questions.register_provider(ScriptedProvider(WAIT_FOR_ABORT, WAIT_FOR_ABORT))
            codes = []
            try:
                await ctx.user_questions.ask(make_request(), timeout=0.05)
            except UserQuestionError as error:
                codes.append(str(error.code))
            try:
                await ctx.user_questions.ask(make_request(timeout=0.05))
            except UserQuestionError as error:
                codes.append(str(error.code))
        return codes

    codes = asyncio.run(main())
    print(json.dumps({"codes": codes, "threads": sorted(t.name for t in threading.enumerate())}))
    """
)


@pytest.mark.flaky(reruns=2)
def test_ask_timeouts_start_no_timer_thread() -> None:
    """ask(timeout=) and request.timeout expire through the loop: no timer thread is started."""
    import json

    done = subprocess.run(
        [sys.executable, "-c", TIMEOUT_IN_A_FRESH_PROCESS],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    result = json.loads(done.stdout)
    assert result["codes"] == ["ASK_TIMED_OUT", "ASK_TIMED_OUT"]
    assert result["threads"] == ["MainThread"]


async def test_the_timeout_fires_on_the_asking_loop(user_questions: UserQuestionService) -> None:
    """The provider's signal aborts in the loop's own thread when the ask's timeout expires."""
    seen: list[int] = []

    class Provider:
        async def ask(self, request: object) -> object:
            signal = request.signal  # type: ignore[attr-defined]
            done = asyncio.get_running_loop().create_future()
            signal.add_listener(lambda: (seen.append(threading.get_ident()), done.set_result(1)))
            await done
            raise UserQuestionError.aborted_by(signal)

    user_questions.register_provider(Provider())
    with pytest.raises(UserQuestionError) as caught:
        await user_questions.ask(make_request(), timeout=0.02)
    assert caught.value.code is UserQuestionErrorCode.ASK_TIMED_OUT
    assert seen == [threading.get_ident()]


async def test_listeners_added_from_a_loop_run_on_it_whoever_aborts() -> None:
    """An abort from another thread runs a listener added from the loop on the loop's thread."""
    controller = AbortController()
    loop = asyncio.get_running_loop()
    heard = loop.create_future()
    controller.signal.add_listener(lambda: heard.set_result(threading.get_ident()))
    threading.Thread(target=controller.abort).start()
    assert await asyncio.wait_for(heard, 5) == threading.get_ident()


def test_listeners_added_outside_a_loop_run_in_the_aborting_thread() -> None:
    """Without a running loop, a listener runs in the thread that aborts."""
    controller = AbortController()
    heard: list[int] = []
    controller.signal.add_listener(lambda: heard.append(threading.get_ident()))
    aborting = threading.Thread(target=controller.abort)
    aborting.start()
    aborting.join()
    assert heard == [aborting.ident]


async def test_an_abort_from_another_thread_still_ends_the_ask(
    user_questions: UserQuestionService, scripted_provider: ScriptedProvider
) -> None:
    """A signal aborted from a thread ends a pending ask with ASK_ABORTED on the loop."""
    scripted_provider.push(WAIT_FOR_ABORT)
    controller = AbortController()
    asking = asyncio.ensure_future(user_questions.ask(make_request(signal=controller.signal)))
    await asyncio.sleep(0.01)
    threading.Thread(target=controller.abort).start()
    with pytest.raises(UserQuestionError) as caught:
        await asyncio.wait_for(asking, 5)
    assert caught.value.code is UserQuestionErrorCode.ASK_ABORTED

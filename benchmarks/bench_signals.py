"""Work that is over costs nothing: memory kept per abort signal, wait and timed ask made and
dropped (the bounds the harness and timeout tests once asserted; the tests now check what is
left behind by count: listeners on a source, live entries in the timer, tasks).

Each figure: traced bytes (tracemalloc) still allocated after 10,000 of them were made and
dropped, after a warm-up and ``gc.collect()``, divided by 10,000. A leak of one small object
each shows as 50 B or more; what stays otherwise is a constant of the measurement (an integer
holding a reading, a hash table that happened to resize), which the baseline shows too.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import tracemalloc
from collections.abc import Awaitable, Callable

from dsh_user_questions import AskUserQuestionRequest, plugin
from dsh_user_questions.harness import AbortController, AbortSignal, HarnessContext

from ._common import QUESTION, Figure, InstantProvider

COUNT = 10_000
QUICK_COUNT = 2_000
# The bounds the tests held them to before they moved here (tests/harness/test_harness.py,
# tests/service/test_timeouts.py), bytes per call.
SIGNAL_BOUND = 100
WAIT_BOUND = 50
TIMED_ASK_BOUND = 64


def _kept_per_call(step: Callable[[], object], times: int) -> float:
    """Traced bytes still allocated per call after calling ``step`` ``times`` times."""
    step()
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for _ in range(times):
            step()
        gc.collect()
        after = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    return (after - before) / times


async def _kept_per_call_async(run_many: Callable[[int], Awaitable[None]], times: int) -> float:
    """Like `_kept_per_call`, for ``run_many(n)`` doing ``n`` calls on the running loop."""
    await run_many(max(10, times // 50))
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        await run_many(times)
        gc.collect()
        after = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    return (after - before) / times


def _signal_figures(count: int) -> list[Figure]:
    baseline = _kept_per_call(AbortController, count)
    aborted, other = AbortController(), AbortController()
    aborted.abort()
    session = AbortController()
    steps: list[tuple[str, Callable[[], object]]] = [
        ("AbortSignal.timeout(300)", lambda: AbortSignal.timeout(300)),
        (
            "AbortSignal.any([source, aborted source])",
            lambda: AbortSignal.any([other.signal, aborted.signal]),
        ),
        (
            "AbortSignal.any([session, fresh signal])",
            lambda: AbortSignal.any([session.signal, AbortController().signal]),
        ),
        (
            "AbortSignal.any([session, AbortSignal.timeout(300)])",
            lambda: AbortSignal.any([session.signal, AbortSignal.timeout(300)]),
        ),
    ]
    figures = []
    for name, step in steps:
        kept = _kept_per_call(step, count)
        figures.append(
            Figure(
                name=f"memory kept per {name} made and dropped",
                value=kept,
                unit="B",
                baseline_name="AbortController() made and dropped",
                baseline=baseline,
                target=f"< {SIGNAL_BOUND} B",
                met=kept < SIGNAL_BOUND,
            )
        )
    assert not session.signal._listeners, "listeners left on the session's signal"
    assert not other.signal._listeners, "listeners left on a source"
    return figures


async def _wait_figure(count: int) -> Figure:
    controller = AbortController()
    loop = asyncio.get_running_loop()

    async def cancelled(wait: Callable[[], Awaitable[object]], n: int) -> None:
        for _ in range(n):
            task = asyncio.ensure_future(wait())
            await asyncio.sleep(0)
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    kept = await _kept_per_call_async(lambda n: cancelled(controller.signal.wait, n), count)
    bare = await _kept_per_call_async(lambda n: cancelled(loop.create_future, n), count)
    assert not controller.signal._listeners, "listeners left by cancelled waits"
    return Figure(
        name="memory kept per cancelled signal.wait()",
        value=kept,
        unit="B",
        baseline_name="cancelled task awaiting a bare future",
        baseline=bare,
        target=f"< {WAIT_BOUND} B",
        met=kept < WAIT_BOUND,
    )


async def _timed_ask_figure(count: int) -> Figure:
    ctx = HarnessContext()
    ctx.register(plugin)
    ctx.user_questions.register_provider(InstantProvider())
    session = AbortController()
    timed = AskUserQuestionRequest(questions=[QUESTION], signal=session.signal)
    plain = AskUserQuestionRequest(questions=[QUESTION])
    ask = ctx.user_questions.ask

    async def timed_asks(n: int) -> None:
        for _ in range(n):
            await ask(timed, timeout=300)

    async def plain_asks(n: int) -> None:
        for _ in range(n):
            await ask(plain)

    kept = await _kept_per_call_async(timed_asks, count)
    bare = await _kept_per_call_async(plain_asks, count)
    assert not session.signal._listeners, "listeners left on the session's signal"
    assert len(asyncio.all_tasks()) == 1, "tasks left behind"
    return Figure(
        name="memory kept per answered ask(timeout=300) with a session signal",
        value=kept,
        unit="B",
        baseline_name="answered plain ask()",
        baseline=bare,
        target=f"< {TIMED_ASK_BOUND} B",
        met=kept < TIMED_ASK_BOUND,
    )


async def run(quick: bool) -> list[Figure]:
    count = QUICK_COUNT if quick else COUNT
    return [
        *_signal_figures(count),
        await _wait_figure(count),
        await _timed_ask_figure(count),
    ]

"""1,000,000 sequential asks: the memory before and after (no growth: all is released)."""

from __future__ import annotations

import asyncio
import gc
import inspect
import os
import time
import tracemalloc

import pluggy

from dsh_user_questions import (
    AskUserQuestionAnswer,
    AskUserQuestionAnswerItem,
    AskUserQuestionRequest,
    UserQuestionError,
    hookimpl,
    hookspecs,
    plugin,
)
from dsh_user_questions.harness import AbortController, Agent, HarnessContext

from ._common import ANSWER, QUESTION, Figure

COUNT = 1_000_000
QUICK_COUNT = 100_000
WARM_UP = 10_000
# Less than a byte per thousand asks: no growth, only the measurement's constant.
NO_GROWTH = 1024
BAD = AskUserQuestionAnswer([AskUserQuestionAnswerItem(id="pkg", selected=["bun"])])


class MixedProvider:
    """Takes turns: an instant answer, an answer after a task switch, a cancel, a bad answer."""

    def __init__(self) -> None:
        self.calls = 0

    async def ask(self, request: AskUserQuestionRequest) -> AskUserQuestionAnswer:
        self.calls += 1
        turn = self.calls % 4
        if turn == 1:
            await asyncio.sleep(0)
        elif turn == 2:
            raise UserQuestionError.cancelled()
        elif turn == 3:
            return BAD
        return ANSWER

    @hookimpl
    async def dsh_user_questions_ask(self, request: AskUserQuestionRequest) -> object:
        return await self.ask(request)


def _rss() -> int:
    try:
        with open("/proc/self/statm", encoding="ascii") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except OSError:
        return 0


async def _growth(run_many, count: int) -> tuple[int, int, float]:  # type: ignore[no-untyped-def]
    """Traced bytes and RSS gained over ``count`` runs after a warm-up, and the seconds taken.

    A leak grows with the count: one 16-byte object per ask would be 16 MB here. What stays
    is a constant of the measurement (the integer holding the first reading, a float of the
    running loop, a hash table that happened to resize), which the baseline shows too.
    """
    _rss()  # its first call caches a codec: let that happen outside the measurement
    gc.collect()
    tracemalloc.start()
    try:
        await run_many(WARM_UP)
        rss_before = _rss()
        started = time.perf_counter()
        gc.collect()
        before = tracemalloc.get_traced_memory()[0]
        await run_many(count)
        gc.collect()
        after = tracemalloc.get_traced_memory()[0]
        seconds = time.perf_counter() - started
        rss_after = _rss()
    finally:
        tracemalloc.stop()
    return after - before, rss_after - rss_before, seconds


async def run(quick: bool) -> list[Figure]:
    count = QUICK_COUNT if quick else COUNT
    ctx = HarnessContext()
    ctx.register(plugin)
    provider = MixedProvider()
    ctx.user_questions.register_provider(provider)
    root = Agent("main")
    ctx.agents.enter(root)
    # One long-lived signal for every ask: a listener left behind would pile up on it.
    controller = AbortController()
    request = AskUserQuestionRequest(questions=[QUESTION], agent=root, signal=controller.signal)
    ask = ctx.user_questions.ask
    failures = {"ASK_CANCELLED": 0, "BAD_ANSWER": 0}

    async def asks(n: int) -> None:
        for _ in range(n):
            try:
                await ask(request)
            except UserQuestionError as error:
                failures[error.code] += 1
        assert len(asyncio.all_tasks()) == 1, "tasks left behind"

    bare_provider = MixedProvider()
    pm = pluggy.PluginManager("dsh")
    pm.add_hookspecs(hookspecs)
    pm.register(bare_provider)
    hook = pm.hook.dsh_user_questions_ask

    async def bare(n: int) -> None:
        for _ in range(n):
            try:
                result = hook(request=request)
                if inspect.isawaitable(result):
                    await result
            except UserQuestionError:
                pass

    ask_growth, ask_rss, ask_seconds = await _growth(asks, count)
    assert not controller.signal._listeners, "listeners left on the signal"
    assert failures["ASK_CANCELLED"] >= count // 4
    assert failures["BAD_ANSWER"] >= count // 4
    bare_growth, _, bare_seconds = await _growth(bare, count)
    note = (
        f"{count:,} asks (a quarter each: instant, after a task switch, ASK_CANCELLED,"
        f" BAD_ANSWER) with one long-lived signal and a live agent, under tracemalloc:"
        f" {ask_seconds:.1f} s ({ask_seconds / count * 1e6:.1f} µs per ask; bare hook"
        f" {bare_seconds / count * 1e6:.1f} µs); RSS change {ask_rss / 1024:+,.0f} KiB"
    )
    return [
        Figure(
            name=f"memory growth over {count:,} sequential asks",
            value=ask_growth,
            unit="B",
            baseline_name="bare hook calls",
            baseline=bare_growth,
            target=f"none (< {NO_GROWTH:,} B in all)",
            met=ask_growth < NO_GROWTH,
            note=note,
        )
    ]

"""10,000 concurrent pending asks: memory per pending ask, and the time to abort them all."""

from __future__ import annotations

import asyncio
import gc
import time
import tracemalloc
from collections.abc import Callable, Coroutine
from typing import Any

import pluggy

from dsh_user_questions import (
    AskUserQuestionRequest,
    UserQuestionError,
    hookimpl,
    hookspecs,
    plugin,
)
from dsh_user_questions.harness import AbortController, HarnessContext

from ._common import QUESTION, REQUEST, Figure, median

COUNT = 10_000
TARGET_BYTES = 1536  # 1.5 KiB per pending ask (issue 10, item 13)
TARGET_ABORT_RATIO = 1.5  # aborting them, against cancelling as many bare tasks


class HangingProvider:
    """Never answers and ignores the signal, so the service has to leave it behind."""

    def __init__(self) -> None:
        self.waiting = 0

    @hookimpl
    async def dsh_user_questions_ask(self, request: AskUserQuestionRequest) -> object:
        self.waiting += 1
        try:
            return await asyncio.get_running_loop().create_future()
        finally:
            self.waiting -= 1


async def _until(condition: Callable[[], bool]) -> None:
    for _ in range(1_000):
        if condition():
            return
        await asyncio.sleep(0)
    raise AssertionError("the asks never all reached the provider")


Start = Callable[[], Coroutine[Any, Any, object]]


async def _pending(start: Start, provider: HangingProvider, tasks: list[Any]) -> None:
    loop = asyncio.get_running_loop()
    for index in range(len(tasks)):
        tasks[index] = loop.create_task(start())
    await _until(lambda: provider.waiting == len(tasks))


async def _memory_per_task(
    start: Start, provider: HangingProvider, stop: Callable[[], None], *, breakdown: bool = False
) -> tuple[float, dict[str, float]]:
    """Traced bytes per pending task; with ``breakdown``, also per source file (a second run,
    since the snapshots themselves take traced memory)."""
    tasks: list[Any] = [None] * COUNT
    gc.collect()
    tracemalloc.start()
    try:
        first = tracemalloc.take_snapshot() if breakdown else None
        before = tracemalloc.get_traced_memory()[0]
        await _pending(start, provider, tasks)
        gc.collect()
        during = tracemalloc.get_traced_memory()[0]
        second = tracemalloc.take_snapshot() if breakdown else None
    finally:
        tracemalloc.stop()
    stop()
    await asyncio.gather(*tasks, return_exceptions=True)
    await _until(lambda: provider.waiting == 0)
    by_file: dict[str, float] = {}
    if first is not None and second is not None:
        for stat in second.compare_to(first, "filename"):
            name = stat.traceback[0].filename
            where = (
                "dsh_user_questions"
                if "dsh_user_questions" in name
                else "asyncio"
                if "asyncio" in name or "_weakrefset" in name
                else "the provider and its caller"
                if "benchmarks" in name or "pluggy" in name
                else "tracemalloc"
                if "tracemalloc" in name
                else "other"
            )
            by_file[where] = by_file.get(where, 0) + stat.size_diff / COUNT
        by_file.pop("tracemalloc", None)
    return (during - before) / COUNT, by_file


class _Idle:
    """A task pending on a future of its own: what a caller's task costs before it asks."""

    def __init__(self) -> None:
        self.waiting = 0

    async def wait(self) -> None:
        self.waiting += 1
        try:
            await asyncio.get_running_loop().create_future()
        finally:
            self.waiting -= 1


async def run(quick: bool) -> list[Figure]:
    repeat = 3 if quick else 7
    provider = HangingProvider()
    ctx = HarnessContext()
    ctx.register(plugin)
    ctx.register(provider, name="hanging")
    ask = ctx.user_questions.ask

    bare_provider = HangingProvider()
    pm = pluggy.PluginManager("dsh")
    pm.add_hookspecs(hookspecs)
    pm.register(bare_provider)
    hook = pm.hook.dsh_user_questions_ask

    async def bare() -> object:
        return await hook(request=REQUEST)

    def cancel_all() -> None:
        for task in asyncio.all_tasks():
            if task is not asyncio.current_task():
                task.cancel()

    # Memory: everything a pending ask holds (its task, the service's frames, the provider's
    # own task), against a bare task awaiting the same provider through the hook.
    controller = AbortController()
    request = AskUserQuestionRequest(questions=[QUESTION], signal=controller.signal)
    ask_bytes, _ = await _memory_per_task(lambda: ask(request), provider, controller.abort)
    bare_bytes, _ = await _memory_per_task(bare, bare_provider, cancel_all)
    idle = _Idle()
    idle_bytes, _ = await _memory_per_task(idle.wait, idle, cancel_all)  # type: ignore[arg-type]
    controller = AbortController()
    request = AskUserQuestionRequest(questions=[QUESTION], signal=controller.signal)
    _, by_file = await _memory_per_task(
        lambda: ask(request), provider, controller.abort, breakdown=True
    )
    breakdown = ", ".join(f"{where} {size:,.0f} B" for where, size in sorted(by_file.items()))

    # Time: one abort of the signal all the asks share, until every ask has raised ASK_ABORTED;
    # against cancelling as many bare tasks until all have finished.
    abort_times, cancel_times = [], []
    for _ in range(repeat):
        controller = AbortController()
        request = AskUserQuestionRequest(questions=[QUESTION], signal=controller.signal)
        tasks: list[Any] = [None] * COUNT
        await _pending(lambda: ask(request), provider, tasks)  # noqa: B023
        gc.collect()
        started = time.perf_counter()
        controller.abort()
        results = await asyncio.gather(*tasks, return_exceptions=True)
        abort_times.append(time.perf_counter() - started)
        assert all(isinstance(r, UserQuestionError) and r.code == "ASK_ABORTED" for r in results), (
            "an ask ended otherwise than ASK_ABORTED"
        )
        await _until(lambda: provider.waiting == 0)
        assert not controller.signal._listeners

        tasks = [None] * COUNT
        await _pending(bare, bare_provider, tasks)
        gc.collect()
        started = time.perf_counter()
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        cancel_times.append(time.perf_counter() - started)
        await _until(lambda: bare_provider.waiting == 0)

    abort_ms = median(abort_times) * 1e3
    return [
        Figure(
            name=f"memory per pending ask ({COUNT:,} pending)",
            value=ask_bytes,
            unit="B",
            baseline_name="bare task awaiting the hook",
            baseline=bare_bytes,
            target=f"≤ {TARGET_BYTES:,} B",
            met=ask_bytes <= TARGET_BYTES,
            note=f"by where it was allocated: {breakdown}",
        ),
        Figure(
            name="  of which the ask adds to its caller's pending task",
            value=ask_bytes - idle_bytes,
            unit="B",
            baseline_name="bare hook call, likewise",
            baseline=bare_bytes - idle_bytes,
            note=f"a task pending on a future of its own holds {idle_bytes:,.0f} B",
        ),
        Figure(
            name=f"abort {COUNT:,} pending asks (one signal)",
            value=abort_ms,
            unit="ms",
            baseline_name=f"cancel {COUNT:,} bare tasks",
            baseline=median(cancel_times) * 1e3,
            target=f"≤ {TARGET_ABORT_RATIO:g}x",
            met=abort_ms <= TARGET_ABORT_RATIO * median(cancel_times) * 1e3,
        ),
    ]

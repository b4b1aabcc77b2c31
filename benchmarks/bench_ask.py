"""ask() with an instant provider vs the same provider through a bare pluggy hook call."""

from __future__ import annotations

import gc
import inspect

import pluggy

from dsh_user_questions import AskUserQuestionRequest, hookspecs, plugin
from dsh_user_questions._waiting import start_provider
from dsh_user_questions.harness import AbortController, HarnessContext
from dsh_user_questions.rules import check_answer

from ._common import QUESTION, REQUEST, Figure, InstantProvider, best_per_call

TARGET = 1.5  # ask() without a signal, against a bare hook call (issue 10, item 13)
TARGET_SIGNAL = 2.0  # ask() with an abort signal, likewise (issue 22, point 8)
TARGET_TIMEOUT = 2.5  # ask(timeout=300), likewise (issue 22, point 8)


async def run(quick: bool) -> list[Figure]:
    # Many short rounds: on a busy machine the best of them is the least disturbed.
    number, repeat = (5_000, 11) if quick else (10_000, 41)

    # The baseline: the same provider plugin, called the way any pluggy host calls a hook.
    pm = pluggy.PluginManager(hookspecs.PROJECT)
    pm.add_hookspecs(hookspecs)
    pm.register(InstantProvider())
    hook = pm.hook.dsh_user_questions_ask

    as_plugin = HarnessContext()
    as_plugin.register(plugin)
    as_plugin.register(InstantProvider(), name="instant")
    registered = HarnessContext()
    registered.register(plugin)
    registered.user_questions.register_provider(InstantProvider())
    signal = AbortController().signal
    with_signal = AskUserQuestionRequest(questions=[QUESTION], signal=signal)

    async def bare(n: int) -> None:
        for _ in range(n):
            result = hook(request=REQUEST)
            if inspect.isawaitable(result):
                result = await result

    # What no ask() can go below: its own coroutine around the hook plus the answer check
    # that point 2 of issue 22 puts on every ask; and that plus the provider's own task that
    # an ask with a signal needs (so a provider ignoring the abort cannot hang its caller).
    questions = REQUEST.questions

    async def checked_call() -> object:
        result = hook(request=REQUEST)
        if inspect.isawaitable(result):
            result = await result
        return check_answer(questions, result)

    async def in_task() -> object:
        return await hook(request=REQUEST)  # type: ignore[misc]

    async def floor(n: int) -> None:
        for _ in range(n):
            await checked_call()

    async def floor_task(n: int) -> None:
        for _ in range(n):
            task = start_provider(in_task())
            check_answer(questions, task.result() if task.done() else await task)

    def asking(ctx: HarnessContext, request: AskUserQuestionRequest, timeout: float | None = None):  # type: ignore[no-untyped-def]
        ask = ctx.user_questions.ask

        async def loop(n: int) -> None:
            for _ in range(n):
                await ask(request, timeout)

        return loop

    per_call = await best_per_call(
        {
            "bare": bare,
            "floor": floor,
            "floor+task": floor_task,
            "plugin": asking(as_plugin, REQUEST),
            "registered": asking(registered, REQUEST),
            "plugin+signal": asking(as_plugin, with_signal),
            "registered+signal": asking(registered, with_signal),
            "plugin+timeout": asking(as_plugin, REQUEST, 300),
            "registered+timeout": asking(registered, REQUEST, 300),
        },
        number,
        repeat,
    )
    assert not any(isinstance(r, dict) and r for r in gc.get_referents(signal)), (
        "a listener outlived its ask"
    )
    base = per_call["bare"] * 1e6

    def figure(key: str, name: str, target: float) -> Figure:
        value = per_call[key] * 1e6
        return Figure(
            name=name,
            value=value,
            unit="us",
            baseline_name="bare hook call",
            baseline=base,
            target=f"≤ {target:g}x",
            met=value / base <= target,
        )

    def floor_figure(key: str, name: str) -> Figure:
        value = per_call[key] * 1e6
        return Figure(name=name, value=value, unit="us", baseline_name="bare hook call",
                      baseline=base)  # fmt: skip

    return [
        floor_figure("floor", "floor: a coroutine awaiting the hook, then check_answer"),
        floor_figure("floor+task", "floor with the provider in a task of its own"),
        figure("plugin", "ask(), provider plugin", TARGET),
        figure("registered", "ask(), register_provider()", TARGET),
        figure("plugin+signal", "ask() with an abort signal, provider plugin", TARGET_SIGNAL),
        figure(
            "registered+signal", "ask() with an abort signal, register_provider()", TARGET_SIGNAL
        ),
        figure("plugin+timeout", "ask(timeout=300), provider plugin", TARGET_TIMEOUT),
        figure("registered+timeout", "ask(timeout=300), register_provider()", TARGET_TIMEOUT),
    ]

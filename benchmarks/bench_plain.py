"""A plain ask() side by side with a bare pluggy hook call and an MCP elicitation round trip.

Issue 27, point 4: speed is guarded by this benchmark, not by shortcuts around pluggy. One run
measures the three on the same machine, taking turns:

- a bare pluggy hook call of an instant provider plugin (what any pluggy host pays);
- ``ask()`` through that same provider plugin: no signal, no timeout, no observer recording
  (the plain ask a harness makes);
- one round trip of the official ``mcp`` SDK's in-memory client/server session: a server tool
  elicits the question and the client's elicitation callback accepts at once.

Targets: the plain ask within 4x the bare hook call, and the MCP round trip at least 100x the
plain ask. Every figure is this process's CPU time (`time.process_time`), so the other work of
a shared machine counts less; the best of many turns is the figure, and the medians of the
turns are printed with it.
"""

from __future__ import annotations

import inspect
import time
from collections.abc import Awaitable, Callable

import pluggy

from dsh_user_questions import hookspecs, plugin
from dsh_user_questions.harness import HarnessContext

from . import bench_mcp
from ._common import REQUEST, Figure, InstantProvider, median, per_call_rounds

TARGET_HOOK = 4.0  # a plain ask() over a bare hook call, at most
TARGET_MCP = 100.0  # an in-memory MCP elicitation over a plain ask(), at least


async def run(quick: bool) -> list[Figure]:
    number, repeat = (5_000, 11) if quick else (10_000, 41)
    pm = pluggy.PluginManager("dsh")
    pm.add_hookspecs(hookspecs)
    pm.register(InstantProvider())
    hook = pm.hook.dsh_user_questions_ask

    ctx = HarnessContext()
    ctx.register(plugin)
    ctx.register(InstantProvider(), name="instant")
    ask = ctx.user_questions.ask

    async def bare(n: int) -> None:
        for _ in range(n):
            result = hook(request=REQUEST)
            if inspect.isawaitable(result):
                result = await result

    async def plain(n: int) -> None:
        for _ in range(n):
            await ask(REQUEST)

    variants: dict[str, Callable[[int], Awaitable[None]]] = {"bare": bare, "plain": plain}
    rounds = await per_call_rounds(variants, number, repeat, time.process_time)
    mcp_number, mcp_repeat = (300, 3) if quick else (2_000, 5)
    mcp_rounds = await bench_mcp.mcp_rounds(mcp_number, mcp_repeat, time.process_time)
    # The hook and the ask once more after the MCP run, so the figures bracket it.
    again = await per_call_rounds(variants, number, max(3, repeat // 4), time.process_time)
    await ctx.aclose()
    bare_rounds = [seconds * 1e6 for seconds in rounds["bare"] + again["bare"]]
    plain_rounds = [seconds * 1e6 for seconds in rounds["plain"] + again["plain"]]
    mcp_us = [seconds * 1e6 for seconds in mcp_rounds]
    bare_us, plain_us, mcp = min(bare_rounds), min(plain_rounds), min(mcp_us)
    bare_median, plain_median, mcp_median = map(median, (bare_rounds, plain_rounds, mcp_us))
    return [
        Figure(
            name="plain ask(), provider plugin",
            value=plain_us,
            unit="us",
            baseline_name="bare hook call",
            baseline=bare_us,
            target=f"≤ {TARGET_HOOK:g}x",
            met=plain_us / bare_us <= TARGET_HOOK,
            note=f"the best of {len(plain_rounds)} rounds; their medians: {plain_median:.2f} µs"
            f" over {bare_median:.2f} µs, {plain_median / bare_median:.2f}x",
        ),
        Figure(
            name="MCP elicitation, in-memory session",
            value=mcp,
            unit="us",
            baseline_name="plain ask()",
            baseline=plain_us,
            target=f"≥ {TARGET_MCP:g}x",
            met=mcp / plain_us >= TARGET_MCP,
            note="higher is better: the ratio is how many plain asks fit in one MCP round trip;"
            f" the best of {len(mcp_us)} rounds; their median: {mcp_median:,.0f} µs,"
            f" {mcp_median / plain_median:.0f}x the plain ask's median",
        ),
    ]
